package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/health"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/controller/worker/singular"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// Member timing.
const (
	// heartbeatTTL is how long a member's heartbeat outlives it: a killed member shows down
	// after at most this long.
	heartbeatTTL = 10
	// memberStartTimeout bounds how long enable-ha waits for a new member to serve.
	memberStartTimeout = 90 * time.Second
	// memberStopTimeout is how long a removed member may take to stop before it is killed.
	memberStopTimeout = 15 * time.Second
	// defaultMembers is enable-ha's count when none is asked for (as Juju's).
	defaultMembers = 3
)

// members implements the API's member management (apiserver.Members) for this member.
type members struct {
	cfg      Config
	s        *state.State
	st       *store.Store
	m        *member
	apiAddr  string
	caPEM    []byte
	monitor  *health.Monitor
	stopSelf context.CancelFunc
	// removedSelf is set once this member removed itself: its data goes when it stops.
	removedSelf atomic.Bool
	// mu serialises enable-ha and removals made through this member; the store's own checks
	// (etcd membership, quorum) guard against other members doing the same at once.
	mu sync.Mutex
}

func newMembers(cfg Config, s *state.State, st *store.Store, m *member, apiAddr string, caPEM []byte, monitor *health.Monitor, stopSelf context.CancelFunc) *members {
	return &members{cfg: cfg, s: s, st: st, m: m, apiAddr: apiAddr, caPEM: caPEM, monitor: monitor, stopSelf: stopSelf}
}

// memberView is what this member knows of one member now.
type memberView struct {
	rec   state.MemberState
	role  string // etcd role; "" for an external cluster
	up    bool   // heartbeat live, and its store member reachable when embedded
	owner bool
	why   string
}

func (ms *members) view(ctx context.Context) ([]memberView, error) {
	recs, err := ms.s.Members(ctx)
	if err != nil {
		return nil, err
	}
	roles := map[uint64]store.ClusterMember{}
	if ms.st.MemberID() != 0 {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		cluster, err := ms.st.Members(cctx)
		cancel()
		if err == nil {
			for _, c := range cluster {
				roles[c.ID] = c
			}
		}
	}
	octx, cancel := context.WithTimeout(ctx, time.Second)
	owner, _ := singular.Owner(octx, ms.st.Client)
	cancel()
	out := make([]memberView, 0, len(recs))
	for _, r := range recs {
		v := memberView{rec: r, up: r.Alive, owner: owner != "" && owner == r.GetId()}
		if c, ok := roles[r.GetEtcdId()]; ok {
			v.role = c.Role
			if !c.Reachable {
				v.up = false
				v.why = "its store member does not answer"
				if c.Err != nil {
					v.why += ": " + c.Err.Error()
				}
			}
		}
		if !r.Alive && v.why == "" {
			v.why = "no heartbeat: its process is gone or cut off from the store"
		}
		out = append(out, v)
	}
	return out, nil
}

// Members lists the members for the API.
func (ms *members) Members(ctx context.Context) ([]*pb.ControllerMember, string, error) {
	views, err := ms.view(ctx)
	if err != nil {
		return nil, "", err
	}
	degraded := ms.monitor.Degraded()
	out := make([]*pb.ControllerMember, 0, len(views))
	for _, v := range views {
		r := v.rec
		pm := &pb.ControllerMember{
			Id: r.GetId(), ApiAddress: r.GetApiAddr(), StoreRole: v.role, Workers: v.owner, Pid: r.GetPid(),
			DataDir: r.GetDataDir(), EtcdClientUrl: r.GetEtcdClientUrl(), EtcdPeerUrl: r.GetEtcdPeerUrl(),
			Version: r.GetVersion(), Serving: r.GetId() == ms.m.id,
		}
		switch {
		case pm.Serving && degraded != "":
			pm.Health, pm.Message = "no-quorum", degraded
		case v.role == "learner":
			pm.Health, pm.Message = "starting", "its store member is catching up with the cluster"
		case v.up:
			pm.Health = "healthy"
		case time.Since(time.Unix(0, r.GetCreated())) < memberStartTimeout && !r.Alive:
			pm.Health, pm.Message = "starting", v.why
		default:
			pm.Health, pm.Message = "down", v.why
		}
		out = append(out, pm)
	}
	return out, degraded, nil
}

// APIAddresses are every member's API address: this member's first, then the live ones.
func (ms *members) APIAddresses(ctx context.Context) []string {
	addrs := []string{ms.apiAddr}
	recs, err := ms.s.Members(ctx)
	if err != nil {
		return addrs
	}
	var down []string
	for _, r := range recs {
		if r.GetApiAddr() == "" || r.GetApiAddr() == ms.apiAddr {
			continue
		}
		if r.Alive {
			addrs = append(addrs, r.GetApiAddr())
		} else {
			down = append(down, r.GetApiAddr())
		}
	}
	return append(addrs, down...)
}

// followAddresses keeps the agents' controller addresses current while this member runs the
// workers.
func (ms *members) followAddresses(ctx context.Context, l addressTaker) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	var last []string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		addrs := ms.APIAddresses(ctx)
		slices.Sort(addrs)
		if slices.Equal(addrs, last) {
			continue
		}
		if err := l.SetAPIAddrs(addrs); err != nil {
			ms.cfg.Log.Warn("giving the agents the controller's addresses", "err", err)
			continue
		}
		last = addrs
	}
}

// EnableHA brings the controller to n members (0: the default).
func (ms *members) EnableHA(ctx context.Context, n int) (*pb.EnableHAResponse, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if d := ms.monitor.Degraded(); d != "" {
		return nil, apierr.Errorf(apierr.NoQuorum, "controller has no quorum: %s", d)
	}
	views, err := ms.view(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		n = max(defaultMembers, len(views))
	}
	resp := &pb.EnableHAResponse{}
	// Members of this host whose process is gone come back first: they hold the store's data.
	for _, v := range views {
		if v.up || v.rec.GetId() == ms.m.id || !ms.restartable(v.rec.ControllerMember) {
			continue
		}
		if err := ms.restart(ctx, v.rec.ControllerMember); err != nil {
			return resp, fmt.Errorf("restarting controller member %s: %w", v.rec.GetId(), err)
		}
		resp.Restarted = append(resp.Restarted, v.rec.GetId())
	}
	keep := views
	if len(views) > n {
		// Down members go first, then the highest ids; never the one answering while others remain.
		order := slices.Clone(views)
		slices.SortStableFunc(order, func(a, b memberView) int {
			if a.up != b.up {
				if !a.up {
					return -1
				}
				return 1
			}
			if (a.rec.GetId() == ms.m.id) != (b.rec.GetId() == ms.m.id) {
				if a.rec.GetId() == ms.m.id {
					return 1
				}
				return -1
			}
			x, _ := strconv.Atoi(a.rec.GetId())
			y, _ := strconv.Atoi(b.rec.GetId())
			return y - x
		})
		for _, v := range order[:len(views)-n] {
			if err := ms.remove(ctx, v.rec.GetId()); err != nil {
				return resp, fmt.Errorf("removing controller member %s: %w", v.rec.GetId(), err)
			}
			resp.Removed = append(resp.Removed, v.rec.GetId())
		}
		keep = order[len(views)-n:]
	}
	for _, v := range keep {
		if !slices.Contains(resp.Restarted, v.rec.GetId()) {
			resp.Maintained = append(resp.Maintained, v.rec.GetId())
		}
	}
	slices.SortFunc(resp.Maintained, compareIDs)
	for i := len(views); i < n; i++ {
		id, err := ms.add(ctx)
		if err != nil {
			return resp, err
		}
		resp.Added = append(resp.Added, id)
	}
	return resp, nil
}

func compareIDs(a, b string) int {
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	return x - y
}

// RemoveMember removes one member.
func (ms *members) RemoveMember(ctx context.Context, id string) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if d := ms.monitor.Degraded(); d != "" {
		return apierr.Errorf(apierr.NoQuorum, "controller has no quorum: %s", d)
	}
	return ms.remove(ctx, id)
}

// remove takes a member out of the etcd cluster first (refused when that would cost the
// quorum or leave no member), then stops its process and forgets it. This member removing
// itself answers first and stops after.
func (ms *members) remove(ctx context.Context, id string) error {
	rec, err := ms.s.Member(ctx, id)
	if err != nil {
		return err
	}
	recs, err := ms.s.Members(ctx)
	if err != nil {
		return err
	}
	if len(recs) <= 1 {
		return apierr.Errorf(apierr.NotValid, "controller member %s is the controller's last member; destroy or kill the controller instead", id)
	}
	if id == ms.m.id {
		// This member's etcd member stops once it is out of the cluster: the record goes first,
		// through it, and comes back if the cluster refuses.
		if err := retryStore(ctx, func(ctx context.Context) error { return ms.s.DeleteMember(ctx, id) }); err != nil {
			return err
		}
		if rec.GetEtcdId() != 0 && ms.st.MemberID() != 0 {
			if err := ms.st.RemoveMember(ctx, rec.GetEtcdId()); err != nil {
				_ = retryStore(ctx, func(ctx context.Context) error { return ms.s.PutMember(ctx, rec) })
				return apierr.Errorf(apierr.NotValid, "controller member %s: %v", id, err)
			}
		}
		ms.cfg.Log.Info("controller member removed: this one; stopping", "member", id)
		ms.removedSelf.Store(true)
		// Answer the call first.
		time.AfterFunc(500*time.Millisecond, ms.stopSelf)
		return nil
	}
	if rec.GetEtcdId() != 0 && ms.st.MemberID() != 0 {
		if err := ms.st.RemoveMember(ctx, rec.GetEtcdId()); err != nil {
			return apierr.Errorf(apierr.NotValid, "controller member %s: %v", id, err)
		}
	}
	if err := retryStore(ctx, func(ctx context.Context) error { return ms.s.DeleteMember(ctx, id) }); err != nil {
		return err
	}
	ms.cfg.Log.Info("controller member removed", "member", id)
	if pid := int(rec.GetPid()); pid > 0 && isMemberProcess(pid, rec.GetDataDir()) {
		stopProcess(pid, memberStopTimeout)
	}
	return removeMemberDir(rec.GetDataDir(), ms.m.cloudDir)
}

// retryStore retries a write to the store that failed for want of a leader (an election after
// a member came or went takes a moment, longer on a loaded host), until ctx ends.
func retryStore(ctx context.Context, write func(context.Context) error) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := write(wctx)
		cancel()
		if err == nil || !transientStoreError(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// transientStoreError: etcd had no leader, lost it, or timed out; the write may be tried again.
func transientStoreError(err error) bool {
	for _, e := range []error{rpctypes.ErrTimeout, rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost,
		rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader, rpctypes.ErrGRPCNoLeader, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return strings.Contains(err.Error(), "request timed out") || strings.Contains(err.Error(), "leader changed")
}

// removeMemberDir removes a removed member's data; the bootstrap member's directory is also
// where the local provider's machines live, so only its store goes, and its member.json says
// it was removed.
func removeMemberDir(dir, cloudDir string) error {
	if dir == "" {
		return nil
	}
	if filepath.Clean(dir) != filepath.Clean(cloudDir) {
		return os.RemoveAll(dir)
	}
	ident := &memberIdentity{}
	if ok, err := readJSON(filepath.Join(dir, MemberFile), ident); err != nil || !ok {
		return err
	}
	ident.Removed = true
	if err := writeJSON(filepath.Join(dir, MemberFile), ident); err != nil {
		return err
	}
	for _, name := range []string{"etcd", StoreKeyFile} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// restartable: a member of this host whose process is gone and whose data is here.
func (ms *members) restartable(rec *storepb.ControllerMember) bool {
	host, _ := os.Hostname()
	if rec.GetHostname() != host || rec.GetDataDir() == "" {
		return false
	}
	if _, err := os.Stat(filepath.Join(rec.GetDataDir(), MemberFile)); err != nil {
		return false
	}
	return rec.GetPid() <= 0 || !isMemberProcess(int(rec.GetPid()), rec.GetDataDir())
}

// add starts a new member on this host: a data directory under the cloud directory with the
// CA, the store key and join.json, then jujud, which joins the store and registers. Anything
// half-made is undone when the member does not come up.
func (ms *members) add(ctx context.Context) (string, error) {
	id, err := ms.s.NextMemberID(ctx)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(ms.m.cloudDir, "members", id)
	fail := func(err error) (string, error) {
		ms.undoAdd(id, dir)
		return "", fmt.Errorf("starting controller member %s: %w", id, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	certPEM, keyPEM, err := ms.m.caKey(ctx, ms.s)
	if err != nil {
		return fail(err)
	}
	if err := atomicfile.Write(filepath.Join(dir, bootstrap.CAKeyFile), keyPEM, 0o600); err != nil {
		return fail(err)
	}
	if err := atomicfile.Write(filepath.Join(dir, bootstrap.CACertFile), certPEM, 0o644); err != nil {
		return fail(err)
	}
	ctrl, err := ms.s.Controller(ctx)
	if err != nil {
		return fail(err)
	}
	join := joinRequest{ControllerUUID: ctrl.GetUuid(), ControllerName: ms.cfg.ControllerName, ID: id,
		CloudDir: ms.m.cloudDir, StoreKey: fmt.Sprintf("%x", ms.m.key)}
	if eps, opts := ms.m.external(ms.cfg); len(eps) > 0 {
		join.EtcdEndpoints, join.EtcdInsecure = eps, opts.Insecure
		if err := copyEtcdTLS(dir, opts.TLS); err != nil {
			return fail(err)
		}
	} else {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cluster, err := ms.st.Members(cctx)
		cancel()
		if err != nil {
			return fail(err)
		}
		for _, c := range cluster {
			if c.ClientURL != "" && c.Reachable && c.Role != "learner" {
				join.Peers = append(join.Peers, c.ClientURL)
			}
		}
	}
	if err := writeJSON(filepath.Join(dir, JoinFile), join); err != nil {
		return fail(err)
	}
	if err := ms.launch(dir); err != nil {
		return fail(err)
	}
	if err := ms.waitUp(ctx, id, dir); err != nil {
		return fail(err)
	}
	ms.cfg.Log.Info("controller member added", "member", id, "data-dir", dir)
	return id, nil
}

// undoAdd takes back what a failed add made: the process, its store member, record and files.
func (ms *members) undoAdd(id, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if pid := readPIDFile(filepath.Join(dir, bootstrap.PIDFile)); pid > 0 && isMemberProcess(pid, dir) {
		stopProcess(pid, 5*time.Second)
	}
	if ms.st.MemberID() != 0 {
		if cluster, err := ms.st.Members(ctx); err == nil {
			for _, c := range cluster {
				if c.Name == "member-"+id {
					if err := ms.st.RemoveMember(ctx, c.ID); err != nil {
						ms.cfg.Log.Warn("undoing a failed member: leaving the store", "member", id, "err", err)
					}
				}
			}
		}
	}
	_ = ms.s.DeleteMember(ctx, id)
	_ = os.RemoveAll(dir)
}

// restart starts the process of a member of this host again, from its data directory.
func (ms *members) restart(ctx context.Context, rec *storepb.ControllerMember) error {
	if err := ms.launch(rec.GetDataDir()); err != nil {
		return err
	}
	return ms.waitUp(ctx, rec.GetId(), rec.GetDataDir())
}

// launch starts jujud for a member's data directory in a session of its own (it outlives this
// member), its output appended to jujud.log there.
func (ms *members) launch(dir string) error {
	exe := ms.cfg.MemberBinary
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	args := []string{"--data-dir", dir, "--controller-name", ms.cfg.ControllerName, "--api-addr", "127.0.0.1:0"}
	if ms.cfg.HookTimeout > 0 {
		args = append(args, "--hook-timeout", ms.cfg.HookTimeout.String())
	}
	if ms.cfg.NoFsync {
		args = append(args, "--unsafe-no-fsync")
	}
	if ms.cfg.AgentHostBinary == "" {
		args = append(args, "--agents-in-process")
	}
	logf, err := os.OpenFile(filepath.Join(dir, "jujud.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting jujud: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// waitUp waits until member id's heartbeat is in the store, or its process has exited, or the
// start timeout.
func (ms *members) waitUp(ctx context.Context, id, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, memberStartTimeout)
	defer cancel()
	started := time.Now()
	for {
		recs, err := ms.s.Members(ctx)
		if err == nil {
			for _, r := range recs {
				if r.GetId() == id && r.Alive && r.GetPid() > 0 {
					return nil
				}
			}
		}
		if time.Since(started) > 2*time.Second {
			if pid := readPIDFile(filepath.Join(dir, bootstrap.PIDFile)); pid <= 0 || !isMemberProcess(pid, dir) {
				return fmt.Errorf("jujud stopped before serving%s", logTail(filepath.Join(dir, "jujud.log")))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not serving after %s%s", memberStartTimeout, logTail(filepath.Join(dir, "jujud.log")))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logTail is the last error line of a member's log, to say why it did not start.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-20; i-- {
		if strings.HasPrefix(lines[i], "ERROR ") {
			return ": " + strings.TrimPrefix(lines[i], "ERROR ")
		}
	}
	return " (see " + path + ")"
}

func readPIDFile(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// isMemberProcess reports whether pid is a live jujud serving dataDir (not a recycled pid).
func isMemberProcess(pid int, dataDir string) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			return false
		}
	}
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	for i, a := range args {
		if string(a) == "--data-dir" && i+1 < len(args) && filepath.Clean(string(args[i+1])) == filepath.Clean(dataDir) {
			return bytes.Contains(args[0], []byte("jujud"))
		}
	}
	return false
}

// stopProcess asks pid to stop, and kills it after timeout.
func stopProcess(pid int, timeout time.Duration) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// heartbeat keeps the member's record current and its heartbeat key on a lease it renews.
type heartbeat struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (h *heartbeat) stop() {
	h.cancel()
	<-h.done
}

// startHeartbeat records the member (address, process, store member) and keeps its
// heartbeat alive until stopped; a lease lost (the member cut off from the store for longer
// than the TTL) is granted again once the store answers.
func startHeartbeat(ctx context.Context, s *state.State, st *store.Store, m *member, cfg Config, info bootstrap.Info) (*heartbeat, error) {
	hostname, _ := os.Hostname()
	rec := &storepb.ControllerMember{
		Id: m.id, ApiAddr: info.APIAddr, EtcdId: st.MemberID(), EtcdName: m.etcdName(), EtcdPeerUrl: st.PeerURL(),
		EtcdClientUrl: st.Endpoint(), DataDir: m.dataDir, Hostname: hostname, Pid: int64(os.Getpid()),
		Created: time.Now().UnixNano(), Version: version.Juju,
	}
	if old, err := s.Member(ctx, m.id); err == nil && old.GetCreated() != 0 {
		rec.Created = old.GetCreated()
	}
	if err := s.PutMember(ctx, rec); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	h := &heartbeat{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for ctx.Err() == nil {
			if err := beat(ctx, st.Client, m.id, cfg.Log); err != nil && ctx.Err() == nil {
				cfg.Log.Warn("controller member heartbeat", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		// A clean stop takes the heartbeat at once, so the member shows down now.
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		defer dcancel()
		_, _ = st.Client.Delete(dctx, state.MemberAliveKey(m.id))
	}()
	return h, nil
}

// beat grants a lease, puts the heartbeat on it and keeps it alive until ctx ends or the lease
// is lost.
func beat(ctx context.Context, cli *clientv3.Client, id string, log *slog.Logger) error {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	lease, err := cli.Grant(gctx, heartbeatTTL)
	if err == nil {
		_, err = cli.Put(gctx, state.MemberAliveKey(id), "", clientv3.WithLease(lease.ID))
	}
	cancel()
	if err != nil {
		return err
	}
	alive, err := cli.KeepAlive(ctx, lease.ID)
	if err != nil {
		return err
	}
	for range alive {
	}
	if ctx.Err() != nil {
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = cli.Revoke(rctx, lease.ID)
		rcancel()
		return nil
	}
	return errors.New("heartbeat lease lost")
}
