package singular_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/controller/worker/singular"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// workers is the work every member runs when elected. It records which members run it, and
// counts every start while another member runs it: an overlap is caught when it happens.
type workers struct {
	mu       sync.Mutex
	running  map[string]bool
	overlaps int
}

func newWorkers() *workers { return &workers{running: map[string]bool{}} }

func (w *workers) run(member string) func(ctx context.Context) {
	return func(ctx context.Context) {
		w.mu.Lock()
		if len(w.running) > 0 {
			w.overlaps++
		}
		w.running[member] = true
		w.mu.Unlock()
		<-ctx.Done()
		w.mu.Lock()
		delete(w.running, member)
		w.mu.Unlock()
	}
}

// current is the member running the work: "" when none does, or when several do.
func (w *workers) current() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.running) != 1 {
		return ""
	}
	for m := range w.running {
		return m
	}
	return ""
}

func (w *workers) runs(member string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running[member]
}

func (w *workers) checkNoOverlap(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.overlaps > 0 {
		t.Errorf("%d times a member started the workers while another ran them", w.overlaps)
	}
}

func startStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.StartEmbedded(context.Background(), t.TempDir(), store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// link is a member's network path to the store, which the test can cut: bytes stop flowing
// both ways while the connections stay open, as in a partition (nothing is reset or closed).
type link struct {
	lis    net.Listener
	target string
	cut    atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newLink(t *testing.T, s *store.Store) *link {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &link{lis: lis, target: strings.TrimPrefix(s.Endpoint(), "https://")}
	go l.accept()
	t.Cleanup(l.close)
	return l
}

func (l *link) endpoint() string { return "https://" + l.lis.Addr().String() }

func (l *link) accept() {
	for {
		in, err := l.lis.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", l.target)
		if err != nil {
			in.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, in, out)
		l.mu.Unlock()
		go l.pipe(out, in)
		go l.pipe(in, out)
	}
}

// pipe copies src to dst until either closes; once the link is cut it reads and drops.
func (l *link) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if l.cut.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (l *link) close() {
	l.lis.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// member is one jujud of the controller: a client of its own, through a link, and an Elector.
type member struct {
	id   string
	link *link
	cli  *clientv3.Client
	el   *singular.Elector
	stop context.CancelFunc
	done chan struct{}
}

func start(t *testing.T, s *store.Store, w *workers, id string, ttl time.Duration) *member {
	t.Helper()
	m := &member{id: id, link: newLink(t, s), done: make(chan struct{})}
	c, err := store.Connect(context.Background(), []string{m.link.endpoint()}, store.ConnectOptions{TLS: s.ClientTLS()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m.cli = c.Client
	m.el = singular.New(singular.Config{Client: m.cli, MemberID: id, TTL: ttl, Log: discard})
	ctx, stop := context.WithCancel(context.Background())
	m.stop = stop
	go func() {
		defer close(m.done)
		m.el.Run(ctx, w.run(id))
	}()
	t.Cleanup(func() { m.halt(t) })
	return m
}

// halt stops the member cleanly and waits for its Run to return.
func (m *member) halt(t *testing.T) {
	t.Helper()
	m.stop()
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		t.Errorf("member %s did not stop", m.id)
	}
}

// kill ends the member as kill -9 would: its work stops at once, and it neither resigns nor
// revokes its lease (its client is closed first). What is left of its Run, failing on the
// closed client, is waited for when the test ends.
func (m *member) kill() {
	m.cli.Close()
	m.stop()
}

// partition cuts the member off the store while it goes on running.
func (m *member) partition() { m.link.cut.Store(true) }

// waitFor polls cond until it holds or the deadline passes; it returns how long that took.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func owner(t *testing.T, cli *clientv3.Client) string {
	t.Helper()
	id, err := singular.Owner(context.Background(), cli)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// granted is the TTL the store gave the owner's lease: at least its minimum (one and a half
// election timeouts, in whole seconds), which may be more than the members asked for.
func granted(t *testing.T, s *store.Store) time.Duration {
	t.Helper()
	resp, err := s.Client.Get(context.Background(), singular.Prefix+"/", clientv3.WithFirstCreate()...)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading the election: %v %v", resp, err)
	}
	ttl, err := s.Client.TimeToLive(context.Background(), clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(ttl.GrantedTTL) * time.Second
}

func byID(ms []*member, id string) *member {
	for _, m := range ms {
		if m.id == id {
			return m
		}
	}
	return nil
}

// another says whether a member other than first runs the workers, alone.
func another(w *workers, first string) func() bool {
	return func() bool {
		cur := w.current()
		return cur != "" && cur != first
	}
}

func TestOwnerWithoutCandidates(t *testing.T) {
	s := startStore(t)
	if got := owner(t, s.Client); got != "" {
		t.Fatalf("Owner = %q with nobody campaigning, want \"\"", got)
	}
}

// Three members campaign: one runs the workers, Owner names it, and only it is Leading. Its
// death (no resignation) hands the workers to another member once its lease runs out.
func TestOneMemberRunsTheWorkersAndAnotherTakesOverItsDeath(t *testing.T) {
	const ttl = time.Second
	s := startStore(t)
	w := newWorkers()
	ms := []*member{start(t, s, w, "0", ttl), start(t, s, w, "1", ttl), start(t, s, w, "2", ttl)}
	waitFor(t, "a member runs the workers", 10*time.Second, func() bool { return w.current() != "" })
	first := w.current()
	if got := owner(t, s.Client); got != first {
		t.Fatalf("Owner = %q, but member %q runs the workers", got, first)
	}
	for _, m := range ms {
		if m.el.Leading() != (m.id == first) {
			t.Errorf("member %s: Leading() = %v, running the workers: %v", m.id, m.el.Leading(), m.id == first)
		}
	}

	lease := granted(t, s)
	byID(ms, first).kill()
	// The store lets a lease go up to about a second after it ran out.
	took := waitFor(t, "another member runs the workers", lease+3*time.Second, another(w, first))
	second := w.current()
	t.Logf("member %s killed; member %s took over after %s", first, second, took)
	if got := owner(t, s.Client); got != second {
		t.Fatalf("Owner = %q, but member %q runs the workers", got, second)
	}
	w.checkNoOverlap(t)
}

// A member that stops cleanly resigns: the next one starts at once, well before its lease
// could have run out.
func TestCleanStopHandsOverAtOnce(t *testing.T) {
	const ttl = 3 * time.Second
	s := startStore(t)
	w := newWorkers()
	ms := []*member{start(t, s, w, "0", ttl), start(t, s, w, "1", ttl)}
	waitFor(t, "a member runs the workers", 10*time.Second, func() bool { return w.current() != "" })
	first := w.current()

	stopped := time.Now()
	byID(ms, first).halt(t)
	waitFor(t, "the other member runs the workers", ttl/2, another(w, first))
	t.Logf("member %s stopped; the other took over after %s", first, time.Since(stopped))
	if got := owner(t, s.Client); got == first || got == "" {
		t.Fatalf("Owner = %q after member %s stopped", got, first)
	}
	w.checkNoOverlap(t)
}

// An owner cut off from the store (partitioned, still running) cannot renew its lease: it
// stops its workers before the store lets the lease go, so the member that takes over never
// overlaps it.
func TestPartitionedOwnerStopsBeforeAnotherStarts(t *testing.T) {
	const ttl = time.Second
	s := startStore(t)
	w := newWorkers()
	ms := []*member{start(t, s, w, "0", ttl), start(t, s, w, "1", ttl), start(t, s, w, "2", ttl)}
	waitFor(t, "a member runs the workers", 10*time.Second, func() bool { return w.current() != "" })
	first := byID(ms, w.current())

	lease := granted(t, s)
	first.partition()
	stopped := waitFor(t, "the partitioned owner stops its workers", lease, func() bool {
		return !first.el.Leading() && !w.runs(first.id)
	})
	took := waitFor(t, "another member runs the workers", lease+3*time.Second, another(w, first.id))
	t.Logf("member %s partitioned: stopped its workers after %s, another took over %s later", first.id, stopped, took)
	w.checkNoOverlap(t)
}

// A lease revoked by someone else (not run out: the owner could still renew it) is noticed at
// the owner's next renewal, within TTL/4 or so: the owner stops its workers, and they run again
// on some member. Nothing fences this case (the next member may start first): only the lease
// running out is fenced.
func TestRevokedLeaseStopsTheWorkers(t *testing.T) {
	const ttl = time.Second
	s := startStore(t)
	w := newWorkers()
	ms := []*member{start(t, s, w, "0", ttl), start(t, s, w, "1", ttl), start(t, s, w, "2", ttl)}
	waitFor(t, "a member runs the workers", 10*time.Second, func() bool { return w.current() != "" })
	first := byID(ms, w.current())
	lease := granted(t, s)

	resp, err := s.Client.Get(context.Background(), singular.Prefix+"/", clientv3.WithFirstCreate()...)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading the election: %v %v", resp, err)
	}
	if _, err := s.Client.Revoke(context.Background(), clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, "the owner stops leading", lease/2, func() bool { return !first.el.Leading() })
	t.Logf("the owner noticed after %s", took)
	waitFor(t, "one member runs the workers again", lease+3*time.Second, func() bool { return w.current() != "" })
}

// A member killed and started again (same id) does not wait for its own old lease to run out.
func TestRestartedMemberDoesNotWaitForItself(t *testing.T) {
	const ttl = 3 * time.Second
	s := startStore(t)
	w := newWorkers()
	old := start(t, s, w, "0", ttl)
	waitFor(t, "the member runs the workers", 10*time.Second, func() bool { return w.current() == "0" })
	old.kill()
	waitFor(t, "the killed member's workers stop", time.Second, func() bool { return w.current() == "" })

	start(t, s, w, "0", ttl)
	took := waitFor(t, "the restarted member runs the workers", ttl/2, func() bool { return w.current() == "0" })
	t.Logf("running again %s after the restart", took)
	w.checkNoOverlap(t)
}

// Members joining and leaving (stopped, killed, partitioned) while the workers run never run
// them twice at once, and the workers always come back.
func TestChurnNeverOverlaps(t *testing.T) {
	const ttl = time.Second
	s := startStore(t)
	w := newWorkers()
	ms := []*member{start(t, s, w, "0", ttl), start(t, s, w, "1", ttl), start(t, s, w, "2", ttl)}
	var lease time.Duration
	for round := range 3 {
		waitFor(t, "a member runs the workers", lease+3*time.Second, func() bool { return w.current() != "" })
		lease = granted(t, s)
		cur := byID(ms, w.current())
		switch round {
		case 0:
			cur.halt(t)
		case 1:
			cur.kill()
		case 2:
			cur.partition()
		}
		ms = append(ms, start(t, s, w, string(rune('3'+round)), ttl))
	}
	waitFor(t, "a member runs the workers", lease+3*time.Second, func() bool { return w.current() != "" })
	w.checkNoOverlap(t)
}
