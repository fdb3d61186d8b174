package store

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A controller's store survives losing a member: three embedded members on one CA, the
// leader killed, then a second member stopped (no quorum: the last one says so and takes no
// writes), the second restarted on its recorded URLs (quorum back), the dead one removed.
func TestClusterSurvivesLosingAMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, caDir := t.TempDir(), t.TempDir()
	opts := func(name string) EmbeddedOptions {
		return EmbeddedOptions{NoFsync: true, CADir: caDir, Name: name}
	}
	stores := map[string]*Store{}
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	// The bootstrap member has the default name.
	a, err := StartEmbedded(ctx, filepath.Join(root, DefaultMemberName), EmbeddedOptions{NoFsync: true, CADir: caDir})
	if err != nil {
		t.Fatal(err)
	}
	stores[DefaultMemberName] = a

	// Two joins at once take turns: etcd admits one learner at a time.
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, name := range []string{"b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := JoinEmbedded(ctx, filepath.Join(root, name), opts(name), JoinOptions{Endpoints: []string{a.Endpoint()}})
			if err != nil {
				t.Errorf("joining %s: %v", name, err)
				return
			}
			mu.Lock()
			stores[name] = s
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("two members joined in %v", time.Since(start).Round(time.Millisecond))
	members, err := a.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders := 0
	for _, m := range members {
		if m.Role == RoleLearner || !m.Reachable || m.ClientURL == "" || m.PeerURL == "" {
			t.Errorf("member after the joins: %+v", m)
		}
		if m.Role == RoleLeader {
			leaders++
		}
		s := stores[m.Name]
		if s == nil || s.MemberID() != m.ID || s.PeerURL() != m.PeerURL || s.Endpoint() != m.ClientURL {
			t.Errorf("member %+v is not its store's", m)
		}
	}
	if len(members) != 3 || leaders != 1 {
		t.Fatalf("members: %+v", members)
	}

	// A write through one member is read through another.
	if _, err := a.Client.Put(ctx, "/k", "1"); err != nil {
		t.Fatal(err)
	}
	if resp, err := stores["c"].Client.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "1" {
		t.Fatalf("read through c: %v %v", resp, err)
	}

	// The leader dies without handing over: the other two elect one and take writes.
	var leader string
	for _, m := range members {
		if m.Role == RoleLeader {
			leader = m.Name
		}
	}
	killed := stores[leader]
	start = time.Now()
	killed.etcd.Server.HardStop()
	killed.Close()
	delete(stores, leader)
	var rest []string
	for name := range stores {
		rest = append(rest, name)
	}
	waitForWrite(ctx, t, stores[rest[0]], 10*time.Second)
	t.Logf("leader %s killed: writes again after %v", leader, time.Since(start).Round(time.Millisecond))
	members, err = stores[rest[1]].Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders = 0
	for _, m := range members {
		if m.Name == leader && (m.Reachable || m.Err == nil) || m.Name != leader && !m.Reachable {
			t.Errorf("after the kill: %+v", m)
		}
		if m.Role == RoleLeader {
			leaders++
		}
	}
	if leaders != 1 {
		t.Errorf("after the kill, %d leaders: %+v", leaders, members)
	}

	// A second member stops: the last one has no quorum, says so at once, and takes no write.
	stopped, last := rest[0], stores[rest[1]]
	stoppedDir := filepath.Join(root, stopped)
	stoppedURLs := [2]string{stores[stopped].Endpoint(), stores[stopped].PeerURL()}
	stores[stopped].Close()
	delete(stores, stopped)
	start = time.Now()
	err = last.CheckQuorum(ctx)
	if !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), "cannot reach a majority of the store's voting members: it reaches 1 of 3, a majority is 2") {
		t.Fatalf("CheckQuorum without a majority: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("CheckQuorum took %v", d)
	}
	t.Logf("CheckQuorum: %v (%v)", err, time.Since(start).Round(time.Millisecond))
	// The API server's degraded calls read serializably: not the quorum check.
	if err := last.CheckQuorum(WithSerializableReads(ctx)); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("CheckQuorum in a context of serializable reads: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Second)
	_, err = last.Client.Put(wctx, "/k", "lost")
	wcancel()
	if err == nil {
		t.Fatal("a write without quorum went through")
	}
	// Removing a dead member now would leave 2 voting members of which 1 answers.
	if err := last.RemoveMember(ctx, killed.MemberID()); err == nil || !strings.Contains(err.Error(), "1 of the 2 voting members that would remain answer") {
		t.Fatalf("removal without quorum: %v", err)
	}

	// The stopped member comes back on the URLs its peers know, not on others.
	host := strings.TrimPrefix(stoppedURLs[1], "https://")
	squatter, err := net.Listen("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	restart := func() (*Store, error) {
		if stopped == DefaultMemberName {
			return StartEmbedded(ctx, stoppedDir, EmbeddedOptions{NoFsync: true, CADir: caDir})
		}
		return JoinEmbedded(ctx, stoppedDir, opts(stopped), JoinOptions{Endpoints: []string{last.Endpoint()}})
	}
	if s, err := restart(); err == nil || !strings.Contains(err.Error(), "its 3-member cluster knows it by them") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("restart with its peer port taken: %v", err)
	}
	squatter.Close()
	back, err := restart()
	if err != nil {
		t.Fatal(err)
	}
	stores[stopped] = back
	if back.Endpoint() != stoppedURLs[0] || back.PeerURL() != stoppedURLs[1] {
		t.Errorf("restarted on %s %s, want %v", back.Endpoint(), back.PeerURL(), stoppedURLs)
	}
	waitForWrite(ctx, t, last, 10*time.Second)
	if err := last.CheckQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	if resp, err := back.Client.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "ok" {
		t.Fatalf("read through the restarted member: %v %v", resp, err)
	}

	// The dead member is removed: the two that answer keep their quorum.
	if err := back.RemoveMember(ctx, killed.MemberID()); err != nil {
		t.Fatal(err)
	}
	if members, err := back.Members(ctx); err != nil || len(members) != 2 {
		t.Fatalf("after the removal: %+v %v", members, err)
	}
	if _, err := last.Client.Put(ctx, "/k", "2"); err != nil {
		t.Fatal(err)
	}
}

// waitForWrite writes through s until a write goes through.
func waitForWrite(ctx context.Context, t *testing.T, s *Store, limit time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := s.Client.Put(wctx, "/k", "ok")
		cancel()
		if err == nil {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("no write for %v: %v", limit, err)
		}
	}
}

// A lone member keeps its URLs across restarts, moves to new ones when they are taken (no
// peer knows them), starts from a data dir of before urls.json, and is not removed.
func TestLoneMemberRestarts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	s, err := StartEmbedded(ctx, dir, EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	endpoint, peer := s.Endpoint(), s.PeerURL()
	if fi, err := os.Stat(filepath.Join(dir, urlsFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v", urlsFile, fi, err)
	}
	err = s.RemoveMember(ctx, s.MemberID())
	if err == nil || !strings.Contains(err.Error(), "it is the store's last member") {
		t.Errorf("removing the last member: %v", err)
	}
	s.Close()

	restart := func(opts EmbeddedOptions) *Store {
		t.Helper()
		opts.NoFsync = true
		s, err := StartEmbedded(ctx, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := s.Client.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("after restart: %v %v", resp, err)
		}
		return s
	}
	s = restart(EmbeddedOptions{})
	if s.Endpoint() != endpoint || s.PeerURL() != peer {
		t.Errorf("restarted on %s %s, want %s %s", s.Endpoint(), s.PeerURL(), endpoint, peer)
	}
	s.Close()

	squatter, err := net.Listen("tcp", strings.TrimPrefix(endpoint, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	s = restart(EmbeddedOptions{Name: DefaultMemberName})
	squatter.Close()
	if s.Endpoint() == endpoint {
		t.Errorf("still on %s", endpoint)
	}
	s.Close()

	if err := os.Remove(filepath.Join(dir, urlsFile)); err != nil {
		t.Fatal(err)
	}
	s = restart(EmbeddedOptions{})
	s.Close()
	if _, err := readURLs(dir); err != nil {
		t.Fatal(err)
	}

	if _, err := StartEmbedded(ctx, dir, EmbeddedOptions{NoFsync: true, Name: "other"}); err == nil || err.Error() != `the etcd member in `+dir+` is named "jujud", not "other"` {
		t.Errorf("renamed: %v", err)
	}
}

// A join that fails after the add leaves nothing behind: here the new member's certificates
// come from another CA, so the cluster's members refuse it as a peer.
func TestFailedJoinIsUndone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := t.TempDir()
	s, err := JoinEmbedded(ctx, dir, EmbeddedOptions{NoFsync: true, Name: "stranger"},
		JoinOptions{Endpoints: []string{a.Endpoint()}, TLS: a.ClientTLS()})
	if err == nil {
		s.Close()
		t.Fatal("joined with a certificate of another CA")
	}
	t.Logf("join: %v", err)
	members, err := a.Members(ctx)
	if err != nil || len(members) != 1 {
		t.Fatalf("members after a failed join: %+v %v", members, err)
	}
	for _, name := range []string{"member", urlsFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", name, err)
		}
	}
	if _, err := a.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
}

// A join picks up after one that died: before its member started (a learner nobody runs,
// found by the peer URL in urls.json and replaced), and after (a learner that restarts and
// is promoted then).
func TestJoinAfterADiedJoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	caDir := t.TempDir()
	opts := func(name string) EmbeddedOptions {
		return EmbeddedOptions{NoFsync: true, CADir: caDir, Name: name}
	}
	check := func(a *Store, joined *Store) {
		t.Helper()
		members, err := a.Members(ctx)
		if err != nil || len(members) != 2 {
			t.Fatalf("members: %+v %v", members, err)
		}
		for _, m := range members {
			if m.Role == RoleLearner || !m.Reachable {
				t.Errorf("member: %+v", m)
			}
		}
		if _, err := joined.Client.Put(ctx, "/k", "v"); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("before its member started", func(t *testing.T) {
		a, err := StartEmbedded(ctx, t.TempDir(), opts(""))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		dir := t.TempDir()
		if _, err := prepareDir(dir, opts("x")); err != nil {
			t.Fatal(err)
		}
		m, err := newMemberURLs("x")
		if err != nil {
			t.Fatal(err)
		}
		if err := writeURLs(dir, m); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Client.MemberAddAsLearner(ctx, []string{m.Peer}); err != nil {
			t.Fatal(err)
		}
		s, err := JoinEmbedded(ctx, dir, opts("x"), JoinOptions{Endpoints: []string{a.Endpoint()}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.PeerURL() == m.Peer {
			t.Errorf("joined on the dead join's peer URL %s", m.Peer)
		}
		check(a, s)
	})

	t.Run("after its member started", func(t *testing.T) {
		a, err := StartEmbedded(ctx, t.TempDir(), opts(""))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		dir := t.TempDir()
		certs, err := prepareDir(dir, opts("y"))
		if err != nil {
			t.Fatal(err)
		}
		cli, err := joinClient(ctx, certs, JoinOptions{Endpoints: []string{a.Endpoint()}})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		j := &joiner{dir: dir, opts: opts("y"), certs: certs, cli: cli}
		m, err := newMemberURLs("y")
		if err != nil {
			t.Fatal(err)
		}
		if err := writeURLs(dir, m); err != nil {
			t.Fatal(err)
		}
		_, initial, err := j.addLearner(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		learner, err := startStore(ctx, dir, j.opts, certs, m, initial)
		if err != nil {
			t.Fatal(err)
		}
		learner.Close()
		s, err := JoinEmbedded(ctx, dir, opts("y"), JoinOptions{Endpoints: []string{a.Endpoint()}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.PeerURL() != m.Peer {
			t.Errorf("restarted on %s, want %s", s.PeerURL(), m.Peer)
		}
		check(a, s)
	})
}

// A member that removes itself is told it is gone, whether its etcd answered the removal or
// stopped first (on a loaded host it stops before it answers: "server stopped"), and the
// others no longer count it.
func TestMemberRemovesItself(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	caDir := t.TempDir()
	a, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true, CADir: caDir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := JoinEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true, CADir: caDir, Name: "b"}, JoinOptions{Endpoints: []string{a.Endpoint()}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	waitForWrite(ctx, t, b, 10*time.Second)
	before, err := b.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := b.MemberID()
	if gone, err := b.goneFromCluster(ctx, id, before); gone || err != nil {
		t.Fatalf("before the removal the others say gone=%v (%v)", gone, err)
	}
	if err := b.RemoveMember(ctx, id); err != nil {
		t.Fatalf("removing itself: %v", err)
	}
	if gone, err := b.goneFromCluster(ctx, id, before); !gone || err != nil {
		t.Errorf("after the removal the others say gone=%v (%v)", gone, err)
	}
	members, err := a.Members(ctx)
	if err != nil || len(members) != 1 || members[0].ID == id {
		t.Fatalf("members after the removal: %+v %v", members, err)
	}
	if _, err := a.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
}
