package store

// Clusters of embedded members: every controller member (jujud) embeds one etcd member, and
// enable-ha makes them one cluster. The bootstrap member starts alone (StartEmbedded); each
// further member joins it (JoinEmbedded). Members know each other by URLs that never change
// (urlsFile) and trust each other through the controller's CA (mutual TLS on the peer URLs).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"go.uber.org/zap"

	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// urlsFile (in the member's dir, 0600) records an embedded member's name and URLs: its peers
// know it by them, so a restart serves the same ones.
const urlsFile = "urls.json"

// memberURLs are what urlsFile holds.
type memberURLs struct {
	Name   string `json:"name"`
	Client string `json:"client-url"`
	Peer   string `json:"peer-url"`
}

// Roles of a cluster member (ClusterMember.Role).
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
	// RoleLearner is a joining member: it receives the log but does not vote yet.
	RoleLearner = "learner"
)

// ClusterMember is one etcd member as this store sees it now.
type ClusterMember struct {
	ID uint64
	// Name is empty while a joining member has not started.
	Name               string
	PeerURL, ClientURL string
	// Role is RoleLeader, RoleFollower or RoleLearner. A member that does not answer is a
	// follower unless the others name it leader.
	Role string
	// Reachable: it answered a status request within probeTimeout; else Err says why not.
	Reachable bool
	Err       error
}

// ErrNoQuorum marks CheckQuorum's errors (errors.Is): the store can do no linearizable read
// or write now.
var ErrNoQuorum = errors.New("no quorum")

const (
	// probeTimeout bounds each member's status request in Members: a member that does not
	// answer on loopback within a second is as good as down for the controller.
	probeTimeout = time.Second
	// quorumTimeout bounds CheckQuorum's read: a leader election (up to 1.5 s, see electionMs)
	// may make it fail once, which is what it is for.
	quorumTimeout = time.Second
	// quorumSlow is when CheckQuorum starts probing the members: a healthy read takes
	// milliseconds.
	quorumSlow = 200 * time.Millisecond
	// callTimeout bounds each call to etcd about its membership.
	callTimeout = 5 * time.Second
	// changeTimeout bounds each membership change. A change proposed while another is
	// pending gets no answer at all (raft drops it): it is retried after this.
	changeTimeout = 2 * time.Second
	// joinTimeout bounds a join when ctx has no deadline: etcd makes a join wait for an
	// earlier one and for 5 s of stable connections (see JoinEmbedded).
	joinTimeout = 2 * time.Minute
	// handOverTimeout bounds a leadership transfer to one member at Close: a member that is
	// up and caught up takes over within a heartbeat or two.
	handOverTimeout = time.Second
	// retryInterval spaces the retries of membership calls that etcd refuses for now.
	retryInterval = 200 * time.Millisecond
)

// JoinOptions say how a new member reaches the cluster it joins.
type JoinOptions struct {
	// Endpoints are client URLs of the cluster's voting members (a learner cannot add one).
	Endpoints []string
	// TLS reaches them. Zero: the new member's own client certificate, which the cluster
	// trusts when EmbeddedOptions.CADir holds the cluster's CA.
	TLS TLSFiles
}

// JoinEmbedded makes the etcd member in dir a voting member of the cluster at join.Endpoints
// and returns a store whose client talks to this member only. A dir whose member exists
// already is a restart, as StartEmbedded. opts.Name is required and unique in the cluster;
// opts.CADir must hold the CA of the cluster (members trust each other through it).
//
// The new member is added as a learner (it receives the log but does not vote), started with
// the cluster's members as its initial cluster, and promoted to a voter once it has caught
// up with the leader. If a step after the add fails, the member is taken out of the cluster
// again and its data removed: nothing is left half-joined. etcd admits one learner at a time
// and adds a member only when the voting members it asks have been connected for 5 s (its
// strict reconfiguration check): a join waits for both within ctx (2 minutes without a
// deadline), so that joins started together take turns.
func JoinEmbedded(ctx context.Context, dir string, opts EmbeddedOptions, join JoinOptions) (*Store, error) {
	if opts.Name == "" {
		return nil, errors.New("joining an etcd cluster needs a member name")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, joinTimeout)
		defer cancel()
	}
	if hasMember(dir) {
		// A restart: the member's data says which cluster it is in.
		s, err := StartEmbedded(ctx, dir, opts)
		if err != nil || !s.etcd.Server.IsLearner() {
			return s, err
		}
		// It stopped between its start and its promotion.
		cli, err := joinClient(ctx, s.certs, join)
		if err == nil {
			j := &joiner{dir: dir, opts: opts, certs: s.certs, cli: cli}
			err = j.promote(ctx, s.MemberID())
			cli.Close()
		}
		if err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	certs, err := prepareDir(dir, opts)
	if err != nil {
		return nil, err
	}
	cli, err := joinClient(ctx, certs, join)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	j := &joiner{dir: dir, opts: opts, certs: certs, cli: cli}
	var lastErr error
	// The ports are picked before the member is added and bound only when it starts; if one
	// was taken meanwhile, the add is undone and the join tried again on new ports.
	for attempt := 0; attempt < 3; attempt++ {
		s, err := j.join(ctx)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !addrInUse(err) {
			break
		}
	}
	return nil, lastErr
}

// joinClient is a client of the cluster that a member joins.
func joinClient(ctx context.Context, certs bootstrap.EtcdCerts, join JoinOptions) (*clientv3.Client, error) {
	if len(join.Endpoints) == 0 {
		return nil, errors.New("joining an etcd cluster needs the client URL of one of its members")
	}
	files := join.TLS
	if files == (TLSFiles{}) {
		files = TLSFiles{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	}
	tlsCfg, err := clientTLS(files)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: join.Endpoints, TLS: tlsCfg, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		// Not ctx: undoing a join that ran out of time still needs the client.
		Context:     context.WithoutCancel(ctx),
		DialOptions: clientDialOptions(), MaxCallSendMsgSize: maxCallSendBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd cluster %v: %w", join.Endpoints, err)
	}
	return cli, nil
}

// hasMember reports whether dir holds an etcd member's data (its write-ahead log).
func hasMember(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "member", "member", "wal"))
	return err == nil
}

// joiner is one JoinEmbedded: the new member's dir and options, and a client of the cluster.
type joiner struct {
	dir   string
	opts  EmbeddedOptions
	certs bootstrap.EtcdCerts
	cli   *clientv3.Client
}

func (j *joiner) join(ctx context.Context) (*Store, error) {
	if err := j.checkCluster(ctx); err != nil {
		return nil, err
	}
	m, err := newMemberURLs(j.opts.Name)
	if err != nil {
		return nil, err
	}
	// Recorded before the add: if this process dies before the member has data, the next
	// join finds the learner by its peer URL and removes it (checkCluster).
	if err := writeURLs(j.dir, m); err != nil {
		return nil, err
	}
	id, initial, err := j.addLearner(ctx, m)
	if err != nil {
		os.Remove(filepath.Join(j.dir, urlsFile))
		return nil, err
	}
	// What a join that died before the member's log was written may have left.
	if err := os.RemoveAll(filepath.Join(j.dir, "member")); err != nil {
		return nil, j.undo(ctx, id, nil, err)
	}
	s, err := startStore(ctx, j.dir, j.opts, j.certs, m, initial)
	if err != nil {
		return nil, j.undo(ctx, id, nil, err)
	}
	if err := j.promote(ctx, id); err != nil {
		return nil, j.undo(ctx, id, s, err)
	}
	return s, nil
}

// checkCluster refuses a name that another member has, and removes the learner of an earlier
// join of this dir that died before its member had data.
func (j *joiner) checkCluster(ctx context.Context) error {
	saved, err := readURLs(j.dir)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	resp, err := j.cli.MemberList(cctx)
	cancel()
	if err != nil {
		return fmt.Errorf("listing the etcd cluster's members: %w", err)
	}
	for _, m := range resp.Members {
		mine := saved != nil && slices.Contains(m.PeerURLs, saved.Peer)
		switch {
		case mine && m.IsLearner:
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			_, err := j.cli.MemberRemove(cctx, m.ID)
			cancel()
			if err != nil && !errors.Is(err, rpctypes.ErrMemberNotFound) {
				return fmt.Errorf("removing the learner %x that an earlier join of %s left: %w", m.ID, j.dir, err)
			}
		case mine:
			return fmt.Errorf("etcd member %q (%x) has this member's peer URL %s but %s holds no data of it: remove that member first", m.Name, m.ID, saved.Peer, j.dir)
		case m.Name == j.opts.Name:
			return fmt.Errorf("the etcd cluster has a member named %q already (%x)", m.Name, m.ID)
		}
	}
	return nil
}

// addLearner adds the member as a learner and returns its id and the initial cluster it
// starts with: every member, by name, with this one.
func (j *joiner) addLearner(ctx context.Context, m memberURLs) (uint64, string, error) {
	for {
		cctx, cancel := context.WithTimeout(ctx, changeTimeout)
		resp, err := j.cli.MemberAddAsLearner(cctx, []string{m.Peer})
		cancel()
		var why string
		switch {
		case err == nil:
			return resp.Member.ID, initialCluster(resp.Members, resp.Member.ID, m.Name), nil
		case errors.Is(err, rpctypes.ErrTooManyLearners):
			why = "another member is still joining (etcd admits one learner at a time)"
		case errors.Is(err, rpctypes.ErrUnhealthy):
			why = "the cluster's voting members have not all been connected for 5 s (etcd's strict reconfiguration check)"
		case unanswered(ctx, err), errors.Is(err, rpctypes.ErrPeerURLExist):
			// raft drops a membership change proposed while another is pending, and etcd
			// then answers nothing; or the add went through and its answer was lost.
			why = err.Error()
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			list, lerr := j.cli.MemberList(cctx)
			cancel()
			if lerr == nil {
				for _, mb := range list.Members {
					if slices.Contains(mb.PeerURLs, m.Peer) {
						return mb.ID, initialCluster(list.Members, mb.ID, m.Name), nil
					}
				}
			}
		default:
			return 0, "", fmt.Errorf("adding etcd member %s as a learner: %w", m.Name, err)
		}
		if err := sleep(ctx, retryInterval); err != nil {
			return 0, "", fmt.Errorf("adding etcd member %s: %s: %w", m.Name, why, err)
		}
	}
}

// initialCluster is the initial cluster of the new member id: every member by name and peer
// URL, the new one (which has no name in the cluster until it starts) as name.
func initialCluster(members []*etcdserverpb.Member, id uint64, name string) string {
	var parts []string
	for _, mb := range members {
		n := mb.Name
		if mb.ID == id {
			n = name
		}
		for _, u := range mb.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	return strings.Join(parts, ",")
}

// unanswered reports whether err is a membership call's own deadline, ctx still running.
func unanswered(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, rpctypes.ErrTimeout))
}

// promote makes the learner a voting member once the leader finds it caught up.
func (j *joiner) promote(ctx context.Context, id uint64) error {
	for {
		cctx, cancel := context.WithTimeout(ctx, changeTimeout)
		_, err := j.cli.MemberPromote(cctx, id)
		cancel()
		var why string
		switch {
		case err == nil, errors.Is(err, rpctypes.ErrMemberNotLearner):
			// Not a learner: an earlier attempt's promotion went through, its answer lost.
			return nil
		case errors.Is(err, rpctypes.ErrMemberLearnerNotReady):
			why = "it has not caught up with the leader"
		case unanswered(ctx, err), errors.Is(err, rpctypes.ErrLeaderChanged), errors.Is(err, rpctypes.ErrNoLeader),
			errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail):
			why = err.Error()
		default:
			return fmt.Errorf("promoting etcd member %s to a voting member: %w", j.opts.Name, err)
		}
		if err := sleep(ctx, retryInterval); err != nil {
			return fmt.Errorf("promoting etcd member %s to a voting member: %s: %w", j.opts.Name, why, err)
		}
	}
}

// undo takes a failed join's member out of the cluster again and removes its data. The
// learner stops first: removing a learner never costs the cluster its quorum.
func (j *joiner) undo(ctx context.Context, id uint64, s *Store, cause error) error {
	if s != nil {
		s.Close()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	_, err := j.cli.MemberRemove(rctx, id)
	os.RemoveAll(filepath.Join(j.dir, "member"))
	if err != nil && !errors.Is(err, rpctypes.ErrMemberNotFound) {
		// urlsFile stays: the next join finds the learner by its peer URL.
		return fmt.Errorf("%w; and taking the half-joined etcd member %s (%x) out of the cluster again failed: %v (the next join of %s removes it)", cause, j.opts.Name, id, err, j.dir)
	}
	os.Remove(filepath.Join(j.dir, urlsFile))
	return cause
}

// handOver makes another voting member leader, if this member leads a cluster: the others
// then need not wait an election timeout without a leader. It tries the members whose
// client port takes a connection, each for handOverTimeout, and reports whether this
// member no longer leads (true too when it never did).
func (s *Store) handOver() bool {
	srv := s.etcd.Server
	self := srv.MemberID()
	select {
	case <-srv.StopNotify():
		return true // stopped already: nothing to hand over
	default:
	}
	if srv.Leader() != self {
		return true
	}
	alone := true
	for _, m := range srv.Cluster().Members() {
		if m.ID == self || m.IsLearner {
			continue
		}
		alone = false
		if len(m.ClientURLs) == 0 {
			continue
		}
		u, err := url.Parse(m.ClientURLs[0])
		if err != nil {
			continue
		}
		conn, err := net.DialTimeout("tcp", u.Host, 100*time.Millisecond)
		if err != nil {
			continue
		}
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
		err = srv.MoveLeader(ctx, uint64(self), uint64(m.ID))
		cancel()
		if err == nil {
			return true
		}
	}
	return alone
}

// HandOverLeadership moves the etcd leadership from this member to another voting member
// that answers, when this member leads; it reports false when it leads and none took over.
// The controller's worker owner gives it away, so that one member's death never costs both
// the workers and the store's leader (each takeover waits for the other otherwise).
func (s *Store) HandOverLeadership() bool {
	if s.etcd == nil {
		return true
	}
	return s.handOver()
}

// MemberID is the embedded member's etcd id; 0 for an external cluster.
func (s *Store) MemberID() uint64 {
	if s.etcd == nil {
		return 0
	}
	return uint64(s.etcd.Server.MemberID())
}

// PeerURL is the embedded member's peer URL; "" for an external cluster.
func (s *Store) PeerURL() string { return s.peerURL }

// Members lists the cluster's members, each probed for its status in parallel (probeTimeout).
// An embedded member lists the members it knows of, which needs no quorum: a member cut off
// from the others still says which of them it cannot reach. That view is as of the last
// change the member applied: right after RemoveMember, the member that removed is up to date,
// the others within a heartbeat or so.
func (s *Store) Members(ctx context.Context) ([]ClusterMember, error) {
	return s.members(ctx, probeTimeout)
}

func (s *Store) members(ctx context.Context, probe time.Duration) ([]ClusterMember, error) {
	out, err := s.memberList(ctx)
	if err != nil {
		return nil, err
	}
	statuses := make([]*clientv3.StatusResponse, len(out))
	var wg sync.WaitGroup
	for i := range out {
		if out[i].ClientURL == "" {
			out[i].Err = errors.New("not started: it is still joining")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, probe)
			defer cancel()
			// A plain connection first: a member whose process is gone refuses it at once,
			// where the status request would wait for its deadline.
			if u, err := url.Parse(out[i].ClientURL); err == nil {
				var d net.Dialer
				conn, err := d.DialContext(pctx, "tcp", u.Host)
				if err != nil {
					out[i].Err = fmt.Errorf("no answer from %s: %w", out[i].ClientURL, err)
					return
				}
				conn.Close()
			}
			st, err := s.Client.Status(pctx, out[i].ClientURL)
			if err != nil {
				out[i].Err = fmt.Errorf("no answer from %s: %w", out[i].ClientURL, err)
				return
			}
			out[i].Reachable, statuses[i] = true, st
		}()
	}
	wg.Wait()
	// The leader is the one named in the highest term: a member cut off from the others may
	// still name an old one, or none.
	var leader, term uint64
	for _, st := range statuses {
		if st != nil && st.Leader != 0 && st.RaftTerm >= term {
			leader, term = st.Leader, st.RaftTerm
		}
	}
	for i := range out {
		if out[i].ID == leader && out[i].Role != RoleLearner {
			out[i].Role = RoleLeader
		}
	}
	return out, nil
}

// memberList is the cluster's membership, by name: the embedded member's own view, or a
// serializable list from an external cluster (no quorum needed either way).
func (s *Store) memberList(ctx context.Context) ([]ClusterMember, error) {
	var out []ClusterMember
	add := func(id uint64, name string, peers, clients []string, learner bool) {
		m := ClusterMember{ID: id, Name: name, Role: RoleFollower}
		if len(peers) > 0 {
			m.PeerURL = peers[0]
		}
		if len(clients) > 0 {
			m.ClientURL = clients[0]
		}
		if learner {
			m.Role = RoleLearner
		}
		out = append(out, m)
	}
	if s.etcd != nil {
		for _, m := range s.etcd.Server.Cluster().Members() {
			add(uint64(m.ID), m.Name, m.PeerURLs, m.ClientURLs, m.IsLearner)
		}
	} else {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		resp, err := s.Client.MemberList(cctx, clientv3.WithSerializable())
		cancel()
		if err != nil {
			return nil, fmt.Errorf("listing the etcd cluster's members: %w", err)
		}
		for _, m := range resp.Members {
			add(m.ID, m.Name, m.PeerURLs, m.ClientURLs, m.IsLearner)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Name != out[b].Name {
			return out[a].Name < out[b].Name
		}
		return out[a].ID < out[b].ID
	})
	return out, nil
}

// RemoveMember takes the member id out of the embedded cluster. It refuses to remove the last
// member, and a removal after which fewer voting members answer than the new quorum needs
// (the cluster would stop taking writes). A member that is down may be removed when the rest
// keep a quorum. Removing this store's own member stops its etcd.
func (s *Store) RemoveMember(ctx context.Context, id uint64) error {
	if s.etcd == nil {
		return errors.New("the store is an external etcd cluster: its members are not the controller's to remove")
	}
	members, err := s.Members(ctx)
	if err != nil {
		return err
	}
	var target *ClusterMember
	voters, reachable := 0, 0
	var down []string
	for i, m := range members {
		if m.ID == id {
			target = &members[i]
			continue
		}
		if m.Role == RoleLearner {
			continue
		}
		voters++
		if m.Reachable {
			reachable++
		} else {
			down = append(down, describe(m))
		}
	}
	switch {
	case target == nil:
		return fmt.Errorf("etcd member %x not found", id)
	case len(members) == 1:
		return fmt.Errorf("cannot remove etcd member %s: it is the store's last member and the controller's state would go with it", describe(*target))
	case voters == 0:
		return fmt.Errorf("cannot remove etcd member %s: it is the store's last voting member", describe(*target))
	}
	if quorum := voters/2 + 1; reachable < quorum {
		return fmt.Errorf("cannot remove etcd member %s: %d of the %d voting members that would remain answer (%s down), and their quorum needs %d",
			describe(*target), reachable, voters, strings.Join(down, ", "), quorum)
	}
	retried := false
	for {
		cctx, cancel := context.WithTimeout(ctx, changeTimeout)
		_, err := s.Client.MemberRemove(cctx, id)
		cancel()
		var why string
		switch {
		case err == nil, retried && errors.Is(err, rpctypes.ErrMemberNotFound):
			return nil // gone: by this call, or by one whose answer was lost
		case id == s.MemberID() && errors.Is(err, rpctypes.ErrStopped):
			// This store's own member stops once it learns of its removal, and on a loaded
			// host before it answers: the others say whether it is gone.
			gone, gerr := s.goneFromCluster(ctx, id, members)
			if gone {
				return nil
			}
			return fmt.Errorf("removing etcd member %s: %w", describe(*target), errors.Join(err, gerr))
		case errors.Is(err, rpctypes.ErrMemberNotFound):
			return fmt.Errorf("etcd member %x not found", id)
		case errors.Is(err, rpctypes.ErrUnhealthy):
			// etcd removes a member that is up only when this member has been connected to
			// a quorum of the rest for 5 s: a member that just (re)started has not.
			why = "the remaining members have not been connected for 5 s (etcd's strict reconfiguration check)"
		case unanswered(ctx, err):
			retried, why = true, err.Error() // another membership change was pending
		default:
			return fmt.Errorf("removing etcd member %s: %w", describe(*target), err)
		}
		if err := sleep(ctx, retryInterval); err != nil {
			return fmt.Errorf("removing etcd member %s: %s: %w", describe(*target), why, err)
		}
	}
}

// goneFromCluster asks the members other than id, through a client of its own (this store's
// member may have stopped), whether id is still in the cluster. A nil error with false: it is.
func (s *Store) goneFromCluster(ctx context.Context, id uint64, members []ClusterMember) (bool, error) {
	var others []string
	for _, m := range members {
		if m.ID != id && m.ClientURL != "" {
			others = append(others, m.ClientURL)
		}
	}
	if len(others) == 0 {
		return false, errors.New("no other member to ask")
	}
	tlsCfg, err := clientTLS(s.ClientTLS())
	if err != nil {
		return false, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: others, TLS: tlsCfg, DialTimeout: callTimeout, Context: ctx, Logger: zap.NewNop()})
	if err != nil {
		return false, fmt.Errorf("asking the other members: %w", err)
	}
	defer cli.Close()
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		resp, err := cli.MemberList(cctx)
		cancel()
		if err == nil {
			return !slices.ContainsFunc(resp.Members, func(m *etcdserverpb.Member) bool { return m.ID == id }), nil
		}
		// The others elect a leader when the one removed led them.
		if !unanswered(ctx, err) {
			return false, fmt.Errorf("asking the other members: %w", err)
		}
		if err := sleep(ctx, retryInterval); err != nil {
			return false, fmt.Errorf("asking the other members: %w", err)
		}
	}
}

// CheckQuorum returns nil when the store can do a linearizable read now (within ctx and
// quorumTimeout), else an ErrNoQuorum error that says how many voting members this member
// reaches, of how many, when it can tell within that time.
func (s *Store) CheckQuorum(ctx context.Context) error {
	if s.soleVoter() {
		// The embedded member is the cluster's only voter: it is the majority for as long as it
		// runs. Asked anyway, a member busy with a hundred thousand agents answers late, and
		// a late answer would refuse every write (issue 16).
		return nil
	}
	// Not derived from ctx, whose values may ask for serializable reads
	// (WithSerializableReads): those answer without a quorum. Its deadline and end still count.
	qctx, cancel := context.WithTimeout(context.Background(), quorumTimeout)
	defer cancel()
	if d, ok := ctx.Deadline(); ok {
		qctx, cancel = context.WithDeadline(qctx, d)
		defer cancel()
	}
	defer context.AfterFunc(ctx, cancel)()
	ctx = qctx
	read := make(chan error, 1)
	go func() {
		_, err := s.Client.Get(ctx, "/juju/quorum-check", clientv3.WithCountOnly())
		read <- err
	}()
	var err error
	select {
	case err = <-read:
		if err == nil {
			return nil
		}
	case <-time.After(quorumSlow):
		// Not answered yet, as a healthy cluster would have: find out meanwhile whom this
		// member reaches, within the same deadline. Only then, because a probe costs a
		// connection to each member.
	}
	// Probes that start after ctx ended would count every member down.
	probed := ctx.Err() == nil
	members, merr := s.members(ctx, quorumTimeout)
	if err == nil {
		if err = <-read; err == nil {
			return nil
		}
	}
	who := "this controller"
	if s.etcd != nil {
		who = "etcd member " + s.name
	}
	msg := who + " cannot reach a majority of the store's voting members"
	if probed && merr == nil {
		voters, reachable := 0, 0
		for _, m := range members {
			if m.Role != RoleLearner {
				voters++
				if m.Reachable {
					reachable++
				}
			}
		}
		if reachable >= voters/2+1 {
			// The read was slow, not cut off: a loaded cluster still has its quorum.
			return nil
		}
		msg += fmt.Sprintf(": it reaches %d of %d, a majority is %d", reachable, voters, voters/2+1)
	}
	return &quorumError{msg: msg, cause: err}
}

// soleVoter reports whether the embedded member is its cluster's only voting member, read from
// the member's own copy of the membership (no request).
func (s *Store) soleVoter() bool {
	if s.etcd == nil {
		return false
	}
	voters := 0
	for _, m := range s.etcd.Server.Cluster().Members() {
		if !m.IsLearner {
			voters++
			if m.ID != s.etcd.Server.MemberID() {
				return false
			}
		}
	}
	return voters == 1
}

type quorumError struct {
	msg   string
	cause error
}

func (e *quorumError) Error() string   { return e.msg + ": " + e.cause.Error() }
func (e *quorumError) Unwrap() []error { return []error{ErrNoQuorum, e.cause} }

// describe names a member for messages: its name and id.
func describe(m ClusterMember) string {
	if m.Name == "" {
		return fmt.Sprintf("%x", m.ID)
	}
	return fmt.Sprintf("%s (%x)", m.Name, m.ID)
}

func readURLs(dir string) (*memberURLs, error) {
	path := filepath.Join(dir, urlsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the etcd member's URLs: %w", err)
	}
	var m memberURLs
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading the etcd member's URLs from %s: %w", path, err)
	}
	if m.Client == "" || m.Peer == "" {
		return nil, fmt.Errorf("reading the etcd member's URLs from %s: client or peer URL missing", path)
	}
	return &m, nil
}

func writeURLs(dir string, m memberURLs) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, urlsFile), append(data, '\n'), 0o600)
}

// memberName is the member's name: the recorded one, which opts.Name may not change (its
// peers know it by it), else opts.Name, else DefaultMemberName.
func memberName(dir string, opts EmbeddedOptions, saved *memberURLs) (string, error) {
	if saved != nil && saved.Name != "" {
		if opts.Name != "" && opts.Name != saved.Name {
			return "", fmt.Errorf("the etcd member in %s is named %q, not %q", dir, saved.Name, opts.Name)
		}
		return saved.Name, nil
	}
	if opts.Name != "" {
		return opts.Name, nil
	}
	return DefaultMemberName, nil
}

// storedMembers counts the members of the cluster that the stopped member in dir last knew,
// from its backend (0 without one). etcd commits its backend every 100 ms: a member that
// stopped within that time of the first join to it counts itself alone.
func storedMembers(dir string) (int, error) {
	path := filepath.Join(dir, "member", "member", "snap", "db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, fmt.Errorf("reading the etcd member's cluster from %s: %w", path, err)
	}
	defer db.Close()
	n := 0
	err = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(schema.Members.Name()); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading the etcd member's cluster from %s: %w", path, err)
	}
	return n, nil
}

func addrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// sleep waits d, or returns ctx's error when it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
