package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// fakeClock is the time the leaderships and the lease server below share.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// leaseServer answers claims as the controller does (controller/state.ClaimLeadership over
// etcd), on the fake clock: one lease per application, granted or extended for ttl seconds
// from when the claim arrives (latency after it was sent), deleted when it runs out. down
// makes it unreachable.
type leaseServer struct {
	clock   *fakeClock
	latency time.Duration
	mu      sync.Mutex
	down    bool
	holder  map[string]string
	expires map[string]time.Time
	calls   []claimCall
}

type claimCall struct {
	unit string
	at   time.Time
}

func newLeaseServer(clock *fakeClock) *leaseServer {
	return &leaseServer{clock: clock, holder: map[string]string{}, expires: map[string]time.Time{}}
}

func (s *leaseServer) ClaimLeadership(_ context.Context, _, unit string, ttl int64) (*pb.ClaimLeadershipResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, errors.New("connection refused")
	}
	now := s.clock.now().Add(s.latency)
	s.calls = append(s.calls, claimCall{unit, now})
	app, _, _ := strings.Cut(unit, "/")
	if s.holder[app] != "" && !now.Before(s.expires[app]) {
		delete(s.holder, app) // the lease ran out: etcd deleted the key
	}
	if h := s.holder[app]; h != "" && h != unit {
		return &pb.ClaimLeadershipResponse{Leader: h}, nil
	}
	s.holder[app], s.expires[app] = unit, now.Add(time.Duration(ttl)*time.Second)
	return &pb.ClaimLeadershipResponse{Held: true, Leader: unit, TtlSeconds: ttl}, nil
}

// leader is who holds app's lease at the clock's time.
func (s *leaseServer) leader(app string) (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holder[app] != "" && !s.clock.now().Before(s.expires[app]) {
		return "", time.Time{}
	}
	return s.holder[app], s.expires[app]
}

func (s *leaseServer) callsOf(unit string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.unit == unit || unit == "" {
			n++
		}
	}
	return n
}

func (s *leaseServer) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// keeperAt is a lease keeper on the fake clock; tick runs what falls due, as run does.
func keeperAt(clock *fakeClock) *leaseKeeper {
	k := newLeaseKeeper()
	k.now = clock.now
	return k
}

func tick(k *leaseKeeper) {
	ready, _ := k.due(k.now())
	for _, l := range ready {
		l.renew(context.Background())
	}
}

func isLeader(t *testing.T, l *leadership) bool {
	t.Helper()
	ok, err := l.isLeader(context.Background())
	if err != nil {
		t.Fatalf("%s is-leader: %v", l.unit, err)
	}
	return ok
}

func changed(l *leadership) bool {
	select {
	case <-l.changed:
		return true
	default:
		return false
	}
}

// The leader keeps its lease with nothing but the keeper running (its agent could be in a
// hook or an action of any length): ten minutes of 60 s leases, extended every 15 to 20 s,
// nobody else can claim, and is-leader is answered without asking the controller.
func TestLeaseKeptApartFromTheHookLoop(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	srv := newLeaseServer(clock)
	srv.latency = 50 * time.Millisecond
	k := keeperAt(clock)
	lead := newLeadership(k, srv, "m", "app/0", DefaultLeaseDuration)
	other := newLeadership(k, srv, "m", "app/1", DefaultLeaseDuration)
	if err := lead.ensure(context.Background()); err != nil || !lead.leading() || !changed(lead) {
		t.Fatalf("first claim: %v leading %v", err, lead.leading())
	}
	start := clock.now()
	for clock.now().Sub(start) < 10*time.Minute {
		clock.advance(250 * time.Millisecond)
		tick(k)
		if h, _ := srv.leader("app"); h != "app/0" {
			t.Fatalf("after %v the lease is %q's", clock.now().Sub(start), h)
		}
		if !isLeader(t, lead) {
			t.Fatalf("after %v the leader is not sure it leads", clock.now().Sub(start))
		}
		if isLeader(t, other) {
			t.Fatalf("after %v app/1 leads too", clock.now().Sub(start))
		}
	}
	// One claim, then one extension per 15 to 20 s; not one for the 2,400 is-leader calls.
	if n := srv.callsOf("app/0") - 1; n < 600/20 || n > 600/15+1 {
		t.Errorf("%d extensions in 10 minutes; want one every 15 to 20 s", n)
	}
	if changed(lead) {
		t.Error("the agent was told its leadership changed")
	}
	lead.stop()
	// Past the lease of an extension made at the very last tick (its 60 s count from the
	// server's answer, the call's latency later).
	clock.advance(time.Minute + time.Second)
	tick(k)
	if h, _ := srv.leader("app"); h != "" {
		t.Errorf("a stopped agent's lease is still %q's", h)
	}
}

// A leader that can no longer extend its lease (its controller unreachable, its agent paused)
// stops saying it leads before anyone else can claim: is-leader is true only with 30 s of the
// lease sure to remain, and the agent hears of the loss 5 s before the lease can run out.
func TestLeadershipEndsBeforeTheLeaseCanBeTaken(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	srv := newLeaseServer(clock)
	srv.latency = 300 * time.Millisecond
	k := keeperAt(clock)
	lead := newLeadership(k, srv, "m", "app/0", DefaultLeaseDuration)
	other := newLeadership(k, srv, "m", "app/1", DefaultLeaseDuration)
	if err := lead.ensure(context.Background()); err != nil || !changed(lead) {
		t.Fatal(err)
	}
	for range 100 {
		clock.advance(100 * time.Millisecond)
		tick(k)
	}
	srv.setDown(true)
	_, expires := srv.leader("app")
	var lastTrue, lost time.Time
	for clock.now().Before(expires.Add(time.Second)) {
		clock.advance(100 * time.Millisecond)
		tick(k)
		if _, e := srv.leader("app"); !e.Equal(expires) && !e.IsZero() {
			t.Fatal("the lease was extended while the controller was down")
		}
		ok, err := lead.isLeader(context.Background())
		if ok {
			lastTrue = clock.now()
			if left := expires.Sub(clock.now()); left < 30*time.Second {
				t.Fatalf("is-leader true with %v of the lease left", left)
			}
		} else if err == nil && expires.After(clock.now()) {
			t.Fatalf("is-leader false without an error while the controller is down")
		}
		if lost.IsZero() && changed(lead) {
			lost = clock.now()
			if lead.leading() {
				t.Fatal("the agent was told of a loss while it still leads")
			}
		}
		if lead.leading() && !clock.now().Before(expires.Add(-5*time.Second)) {
			t.Fatalf("still leading %v before the lease runs out", expires.Sub(clock.now()))
		}
	}
	if lastTrue.IsZero() || lost.IsZero() || lost.After(expires.Add(-5*time.Second)) {
		t.Fatalf("last is-leader true at %v, loss heard at %v, lease runs out at %v", lastTrue, lost, expires)
	}
	// The lease ran out: another unit claims, and the former leader, the controller back,
	// hears that it does not lead.
	srv.setDown(false)
	if !isLeader(t, other) || isLeader(t, lead) {
		t.Fatal("the lease did not move to app/1")
	}
	clock.advance(time.Second)
	tick(k)
	if lead.leading() || !other.leading() {
		t.Fatal("after the move")
	}
}

// A read that started before the unit's last claim does not take leadership away; a later one
// that finds another leader does.
func TestObserveIgnoresReadsOlderThanTheClaim(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	srv := newLeaseServer(clock)
	k := keeperAt(clock)
	lead := newLeadership(k, srv, "m", "app/0", DefaultLeaseDuration)
	readAt := clock.now()
	clock.advance(time.Second)
	if err := lead.ensure(context.Background()); err != nil || !changed(lead) {
		t.Fatal(err)
	}
	lead.observe(readAt)
	if !lead.leading() {
		t.Fatal("an older read took leadership away")
	}
	clock.advance(time.Second)
	lead.observe(clock.now())
	if lead.leading() || !changed(lead) {
		t.Fatal("a newer read did not take leadership away")
	}
	if ready, next := k.due(clock.now().Add(time.Hour)); len(ready) != 0 || !next.IsZero() {
		t.Fatalf("extensions still scheduled: %d", len(ready))
	}
}

// Leaders that claimed in the same instant (every agent starting with its controller) do not
// extend in one burst: the first extensions spread over 5 s, and later ones drift further
// apart; never more than a fraction of the leaders in one second.
func TestRenewalsDoNotHerd(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	srv := newLeaseServer(clock)
	k := keeperAt(clock)
	const n = 1000
	for i := range n {
		l := newLeadership(k, srv, "m", fmt.Sprintf("app%d/0", i), DefaultLeaseDuration)
		if err := l.ensure(context.Background()); err != nil || !l.leading() {
			t.Fatal(err)
		}
	}
	start := clock.now()
	for clock.now().Sub(start) < 5*time.Minute {
		clock.advance(100 * time.Millisecond)
		tick(k)
	}
	perSecond := map[int64]int{}
	for _, c := range srv.calls[n:] {
		perSecond[c.at.Unix()]++
	}
	most := 0
	for _, c := range perSecond {
		most = max(most, c)
	}
	total := len(srv.calls) - n
	if total < n*300/20 || total > n*(300/15+1) {
		t.Errorf("%d extensions of %d leases in 5 minutes", total, n)
	}
	// Evenly spread over the first window (5 s) that is 200 a second; one burst would be 1,000.
	if most > 320 {
		t.Errorf("%d extensions in one second, of %d leaders", most, n)
	}
	for i := range n {
		if h, _ := srv.leader(fmt.Sprintf("app%d", i)); h == "" {
			t.Fatalf("app%d lost its leader", i)
		}
	}
}
