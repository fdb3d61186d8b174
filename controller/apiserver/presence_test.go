package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/state"
)

// movingClock is a clock the test moves, safe for the server's goroutines to read.
type movingClock struct {
	mu sync.Mutex
	t  time.Time
}

func newMovingClock() *movingClock {
	return &movingClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movingClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestPresenceCountsWatchesWithGrace(t *testing.T) {
	clock := newMovingClock()
	grace := 10 * time.Second
	p := newPresence(clock.Now, grace)
	alive := func(kind, id string) bool { return view(t, p, "m1")(kind, id) }

	// A controller that just started does not know yet: every agent counts as connected.
	if !alive("unit", "mysql/0") || !alive("machine", "0") {
		t.Fatal("an agent is lost within the start's grace")
	}
	clock.Advance(grace)
	if !alive("unit", "mysql/0") {
		t.Fatal("lost at the grace, not after it")
	}
	clock.Advance(time.Millisecond)
	if alive("unit", "mysql/0") || alive("machine", "0") {
		t.Fatal("agents that never connected not lost after the start's grace")
	}

	// Two watches of one agent: it stays connected until both close, then for the grace.
	close1 := p.connect("m1", "unit", "mysql/0")
	close2 := p.connect("m1", "unit", "mysql/0")
	if !alive("unit", "mysql/0") {
		t.Fatal("an agent with a watch open is lost")
	}
	if alive("unit", "mysql/1") || view(t, p, "m2")("unit", "mysql/0") {
		t.Fatal("another unit, or the same name in another model, counts as connected")
	}
	close1()
	close1() // a second call changes nothing
	clock.Advance(time.Hour)
	if !alive("unit", "mysql/0") {
		t.Fatal("lost with one watch still open")
	}
	close2()
	clock.Advance(grace)
	if !alive("unit", "mysql/0") {
		t.Fatal("lost within the grace after its last watch closed")
	}
	clock.Advance(time.Millisecond)
	if alive("unit", "mysql/0") {
		t.Fatal("not lost once the grace after its last watch passed")
	}
	// Back: connected at once.
	defer p.connect("m1", "unit", "mysql/0")()
	if !alive("unit", "mysql/0") {
		t.Fatal("a reconnected agent is lost")
	}
}

// testAgents are the agents the tests ask about.
var testAgents = []agentID{{"unit", "mysql/0"}, {"unit", "mysql/1"}, {"machine", "0"}}

// view is p's view of a model's agents now.
func view(t *testing.T, p *presence, model string) func(kind, id string) bool {
	t.Helper()
	alive, err := p.alive(context.Background(), model, slices.Values(testAgents))
	if err != nil {
		t.Fatal(err)
	}
	return alive
}

// A status view is taken at one instant.
func TestPresenceViewIsOneInstant(t *testing.T) {
	clock := newMovingClock()
	p := newPresence(clock.Now, time.Second)
	clock.Advance(2 * time.Second)
	done := p.connect("m1", "machine", "0")
	taken := view(t, p, "m1")
	done()
	clock.Advance(time.Minute)
	if !taken("machine", "0") {
		t.Fatal("the view changed after it was taken")
	}
	if view(t, p, "m1")("machine", "0") {
		t.Fatal("a later view does not see the agent lost")
	}
}

// Watchers of status hear of an agent going lost once the grace passed, and of its return.
func TestPresenceNotifies(t *testing.T) {
	grace := 50 * time.Millisecond
	p := newPresence(time.Now, grace)
	sub, stop, err := p.subscribe(context.Background(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	other, stopOther, err := p.subscribe(context.Background(), "m2")
	if err != nil {
		t.Fatal(err)
	}
	defer stopOther()
	next := func(what string) []presenceChange {
		t.Helper()
		select {
		case <-sub.wake:
			return sub.take()
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification of %s", what)
			return nil
		}
	}

	done := p.connect("m1", "unit", "mysql/0")
	// The start's grace ends: any agent of the model may have turned lost.
	if got := next("the start's grace ending"); len(got) != 1 || got[0] != (presenceChange{}) {
		t.Fatalf("start grace: %v", got)
	}
	start := time.Now()
	done()
	got := next("the agent lost")
	if len(got) != 1 || got[0] != (presenceChange{kind: "unit", id: "mysql/0"}) {
		t.Fatalf("lost: %v", got)
	}
	if waited := time.Since(start); waited < grace {
		t.Fatalf("told lost after %s, within the grace", waited)
	}
	p.mu.Lock()
	remembered := len(p.agents)
	p.mu.Unlock()
	if remembered != 0 || view(t, p, "m1")("unit", "mysql/0") {
		t.Fatalf("told lost, but the agent is still remembered (%d) or connected", remembered)
	}
	defer p.connect("m1", "unit", "mysql/0")()
	if got := next("the agent back"); len(got) != 1 || got[0] != (presenceChange{kind: "unit", id: "mysql/0"}) {
		t.Fatalf("back: %v", got)
	}
	// Another model heard only the start's grace ending.
	<-other.wake
	if got := other.take(); len(got) != 1 || got[0] != (presenceChange{}) {
		t.Fatalf("another model heard %v", got)
	}

	// A quick reconnection within the grace is no change at all.
	again := p.connect("m1", "machine", "0")
	if got := next("a machine agent's first watch"); len(got) != 1 || got[0] != (presenceChange{kind: "machine", id: "0"}) {
		t.Fatalf("first watch: %v", got)
	}
	again()
	defer p.connect("m1", "machine", "0")()
	select {
	case <-sub.wake:
		t.Fatalf("told of an agent that reconnected within the grace: %v", sub.take())
	case <-time.After(3 * grace):
	}
}

// An agent is connected while it has a watch open: status shows its unit idle and its machine
// started; once its watches are closed for longer than the grace, the unit's agent is lost
// (its workload unknown) and the machine down, as Juju shows them, until the agent watches
// again. The admin's watch of the model hears of both.
func TestStatusShowsLostAgents(t *testing.T) {
	ctx := context.Background()
	clock := newMovingClock()
	env := &workloadEnv{startTestEnv(t, withServerLog(io.Discard, clock.Now))}
	admin := env.dial(t, AdminTag, "admin-secret", "")
	machine := deployRunningMySQL(t, env.testEnv)
	env.deploy(t, "blog", blogMeta, 1) // its unit stays allocating: never lost
	unitAgent := env.unitAgent(t, "mysql/0")
	machineAgent := env.dial(t, "machine-"+machine, "machine-secret", env.model)

	type shown struct{ agent, agentMessage, workload, workloadMessage, machine, machineMessage, app string }
	show := func() shown {
		t.Helper()
		fs, err := admin.FullStatus(ctx, "default", nil)
		if err != nil {
			t.Fatal(err)
		}
		var s shown
		for _, a := range fs.Applications {
			if a.Name == "mysql" {
				s.app = a.GetStatus().GetStatus()
			}
			for _, u := range a.Units {
				if u.Name == "blog/0" && u.GetAgentStatus().GetStatus() != "allocating" {
					t.Errorf("blog/0, never deployed, shows %v", u.GetAgentStatus())
				}
			}
		}
		u := findUnit(fs, "mysql/0")
		s.agent, s.agentMessage = u.GetAgentStatus().GetStatus(), u.GetAgentStatus().GetMessage()
		s.workload, s.workloadMessage = u.GetWorkloadStatus().GetStatus(), u.GetWorkloadStatus().GetMessage()
		for _, m := range fs.Machines {
			switch {
			case m.Id == machine:
				s.machine, s.machineMessage = m.GetAgentStatus().GetStatus(), m.GetAgentStatus().GetMessage()
			case m.GetAgentStatus().GetStatus() != "pending":
				t.Errorf("machine %s, never provisioned, shows %v", m.Id, m.GetAgentStatus())
			}
		}
		return s
	}
	connected := shown{agent: "idle", workload: "active", workloadMessage: "ready", machine: "started"}
	lost := shown{
		agent: "lost", agentMessage: "agent is not communicating with the server",
		workload: "unknown", workloadMessage: "agent lost, see 'juju show-status-log mysql/0'",
		machine: "down", machineMessage: "agent is not communicating with the server",
		app: "active", // derived from what the unit stored, not from the unknown it shows
	}

	// Just started, the controller does not know yet.
	if got := show(); got != connected {
		t.Fatalf("within the start's grace: %+v", got)
	}
	modelWatch, err := admin.Watch(ctx, &pb.WatchRequest{Model: "default", Targets: []*pb.WatchTarget{{Kind: state.KindModel}}})
	if err != nil {
		t.Fatal(err)
	}
	defer modelWatch.Close()
	clock.Advance(DefaultPresenceGrace + time.Second)
	if got := show(); got != lost {
		t.Fatalf("no agent ever connected, after the grace: %+v", got)
	}

	// The agents watch: connected at once, and the admin's watch says so.
	unitWatch, err := unitAgent.Watch(ctx, &pb.WatchRequest{Model: env.model, Targets: []*pb.WatchTarget{{Kind: state.KindUnit, Id: "mysql/0"}}})
	if err != nil {
		t.Fatal(err)
	}
	machineWatch, err := machineAgent.Watch(ctx, &pb.WatchRequest{Model: env.model, Targets: []*pb.WatchTarget{{Kind: state.KindMachine, Id: machine}}})
	if err != nil {
		t.Fatal(err)
	}
	defer machineWatch.Close()
	if got := show(); got != connected {
		t.Fatalf("agents watching: %+v", got)
	}
	heard := map[string]bool{}
	for len(heard) < 2 {
		ev, err := modelWatch.Next()
		if err != nil {
			t.Fatal(err)
		}
		heard[ev.Kind+" "+ev.Id] = true
	}
	if !heard["unit mysql/0"] || !heard["machine "+machine] {
		t.Fatalf("the model's watch heard %v", heard)
	}

	// The unit's agent stops watching: lost once the grace has passed since.
	unitWatch.Close()
	if got := show(); got != connected {
		t.Fatalf("just closed: %+v", got)
	}
	// The server sees the close a moment later, at a time of the moving clock: move it on until
	// the grace after the close has passed.
	deadline := time.Now().Add(10 * time.Second)
	want := connected
	want.agent, want.agentMessage, want.workload, want.workloadMessage, want.app = lost.agent, lost.agentMessage, lost.workload, lost.workloadMessage, lost.app
	for got := show(); got != want; got = show() {
		if got != connected || time.Now().After(deadline) {
			t.Fatalf("after the unit's watch closed: %+v", got)
		}
		clock.Advance(DefaultPresenceGrace + time.Second)
		time.Sleep(10 * time.Millisecond)
	}
}

// deployRunningMySQL deploys mysql/0 as its agents would have left it running (idle, active,
// its machine started, with the password "machine-secret"), which status shows lost or down
// when its agents are; it returns the machine's id.
func deployRunningMySQL(t *testing.T, env *testEnv) string {
	t.Helper()
	ctx := context.Background()
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nprovides:\n  db:\n    interface: mysql\n", 1)
	if err := env.st.SetUnitStatus(ctx, env.model, "mysql/0", state.UnitStatus{
		Agent: &storepb.Status{Status: "idle"}, Workload: &storepb.Status{Status: "active", Message: "ready"},
	}); err != nil {
		t.Fatal(err)
	}
	mysql0, err := env.st.Unit(ctx, env.model, "mysql/0")
	if err != nil {
		t.Fatal(err)
	}
	machine := mysql0.MachineId
	if err := env.st.SetProvisioned(ctx, env.model, machine, state.Instance{ID: "i-" + machine}, state.HashPassword("machine-secret")); err != nil {
		t.Fatal(err)
	}
	if err := env.st.SetMachineStatus(ctx, env.model, machine, "started", ""); err != nil {
		t.Fatal(err)
	}
	return machine
}

// Only units and machines whose agents should run can be lost or down: not while deploying or
// installing, not when dead; an error or terminated workload is kept for the agent's return.
func TestCanBeLost(t *testing.T) {
	st := func(s, msg string) *storepb.Status { return &storepb.Status{Status: s, Message: msg} }
	units := []struct {
		agent, workload *storepb.Status
		life            string
		want            bool
	}{
		{st("allocating", ""), st("waiting", "waiting for machine"), "alive", false},
		{st("executing", "running install hook"), st("maintenance", "installing charm software"), "alive", false},
		{st("idle", ""), st("maintenance", "installing charm software"), "alive", false},
		{st("idle", ""), st("waiting", "agent initialising"), "alive", false},
		{st("idle", ""), st("waiting", "installing agent"), "alive", false},
		{st("executing", "running start hook"), st("maintenance", ""), "alive", true},
		{st("idle", ""), st("active", ""), "alive", true},
		{st("idle", ""), st("waiting", "waiting for db"), "dying", true},
		{st("error", "hook failed: \"install\""), st("error", "hook failed: \"install\""), "alive", true},
		{st("idle", ""), st("terminated", ""), "dead", false},
	}
	for _, u := range units {
		unit := &storepb.Unit{Name: "a/0", Life: u.life, AgentStatus: u.agent, WorkloadStatus: u.workload}
		if got := unitCanBeLost(unit); got != u.want {
			t.Errorf("unitCanBeLost(%v %v %s) = %v", u.agent, u.workload, u.life, got)
		}
	}
	machines := []struct {
		agent, life string
		want        bool
	}{
		{"pending", "alive", false}, {"stopped", "dying", false}, {"started", "dead", false},
		{"started", "alive", true}, {"started", "dying", true}, {"error", "alive", true},
	}
	for _, m := range machines {
		if got := machineCanBeDown(&storepb.Machine{Life: m.life, AgentStatus: st(m.agent, "")}); got != m.want {
			t.Errorf("machineCanBeDown(%s %s) = %v", m.agent, m.life, got)
		}
	}
	for w, want := range map[string]string{"error": "error", "terminated": "terminated", "active": "unknown", "blocked": "unknown"} {
		us := &pb.UnitStatus{Name: "a/0", AgentStatus: &pb.StatusInfo{Status: "idle"}, WorkloadStatus: &pb.StatusInfo{Status: w, Message: "m", Since: 7}}
		showLost(us)
		if us.WorkloadStatus.Status != want || us.WorkloadStatus.Since != 7 || us.AgentStatus.Status != "lost" {
			t.Errorf("a lost unit with workload %s shows %v %v", w, us.AgentStatus, us.WorkloadStatus)
		}
	}
}

// testGrace is the presence grace of the members of multi-member tests: short, so that they
// see agents lost quickly.
const testGrace = 300 * time.Millisecond

// member is one API server of a controller whose members share one store, as enable-ha runs
// them: it publishes its agents under its id, on a lease that the test keeps alive as the
// daemon does (0: one of the server's own). Its env's clients dial this member.
type member struct {
	*workloadEnv
	id    string
	lease clientv3.LeaseID
	agent *client.Client // mysql/0's agent's, connected to this member
}

func startMember(t *testing.T, env *testEnv, id string, daemonLease bool) *member {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var lease clientv3.LeaseID
	if daemonLease {
		grant, err := env.st.Client().Grant(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := env.st.Client().KeepAlive(ctx, grant.ID)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range kept {
			}
		}()
		lease = grant.ID
	}
	cert, caPEM, err := bootstrap.EnsureCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{
		State: env.st, ControllerName: "test", Cloud: "localhost", Region: "localhost", Context: ctx,
		TLS:      &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		MemberID: id, PresenceLease: lease, PresenceGrace: testGrace,
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	e := *env
	e.addr, e.caCert, e.stop = lis.Addr().String(), caPEM, cancel
	e.admin = e.dial(t, AdminTag, "admin-secret", "")
	return &member{workloadEnv: &workloadEnv{&e}, id: id, lease: lease}
}

// modelWatch opens the admin's watch of the whole model on m; the test fails if it waits for
// the watch longer than 20 s.
func (m *member) modelWatch(t *testing.T) *client.Watcher {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	w, err := m.admin.Watch(ctx, &pb.WatchRequest{Model: "default", Targets: []*pb.WatchTarget{{Kind: state.KindModel}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// agentShown is what m's status shows of mysql/0's agent.
func (m *member) agentShown(t *testing.T) string {
	t.Helper()
	fs, err := m.admin.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	return findUnit(fs, "mysql/0").GetAgentStatus().GetStatus()
}

// waitShown reads m's status after each event of w until it shows mysql/0's agent as want and
// w has brought an event of kind (mysql/0's when kind is "unit").
func (m *member) waitShown(t *testing.T, w *client.Watcher, want, kind string) {
	t.Helper()
	for heard := false; !heard || m.agentShown(t) != want; {
		ev, err := w.Next()
		if err != nil {
			t.Fatalf("member %s never showed mysql/0 %s after a %s event: %v", m.id, want, kind, err)
		}
		heard = heard || ev.Kind == kind && (kind != state.KindUnit || ev.Id == "mysql/0")
	}
}

// watchUnit opens mysql/0's agent's watch of its unit on m, as a running agent keeps one.
func (m *member) watchUnit(t *testing.T) *client.Watcher {
	t.Helper()
	w, err := m.agent.Watch(context.Background(), &pb.WatchRequest{
		Model: m.model, Targets: []*pb.WatchTarget{{Kind: state.KindUnit, Id: "mysql/0"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// startMembers starts two members, a and b, on one store with mysql/0 deployed and its agent's
// clients of both, and waits until both are past their start's grace (mysql/0, whose agent
// never connected, shown lost). From then on, b's watch of the model hears only of presence.
func startMembers(t *testing.T) (a, b *member, bWatch *client.Watcher) {
	t.Helper()
	env := startTestEnv(t)
	deployRunningMySQL(t, env)
	a, b = startMember(t, env, "1", true), startMember(t, env, "2", true)
	a.agent = a.unitAgent(t, "mysql/0")
	b.agent = b.dial(t, "unit-mysql-0", "password-of-mysql/0", b.model)
	aWatch, bWatch := a.modelWatch(t), b.modelWatch(t)
	a.waitShown(t, aWatch, "lost", state.KindModel)
	b.waitShown(t, bWatch, "lost", state.KindModel)
	return a, b, bWatch
}

// An agent connected to one member is connected for every member: status read from another
// shows it running, and lost once its watch has been closed for longer than the grace; the
// status watchers of the other member hear of both.
func TestPresenceIsSharedByMembers(t *testing.T) {
	a, b, bWatch := startMembers(t)

	agentWatch := a.watchUnit(t)
	b.waitShown(t, bWatch, "idle", state.KindUnit)

	agentWatch.Close()
	closed := time.Now()
	b.waitShown(t, bWatch, "lost", state.KindUnit)
	if d := time.Since(closed); d < testGrace {
		t.Errorf("b showed mysql/0 lost %s after its agent's watch on a closed, within the grace", d)
	}
	if got := a.agentShown(t); got != "lost" {
		t.Errorf("a shows mysql/0 %s once b shows it lost", got)
	}
}

// A member killed outright leaves no record behind once its lease is gone: the others show
// its agents lost.
func TestPresenceOfAKilledMemberEnds(t *testing.T) {
	a, b, bWatch := startMembers(t)
	a.watchUnit(t)
	b.waitShown(t, bWatch, "idle", state.KindUnit)

	if _, err := a.st.Client().Revoke(context.Background(), a.lease); err != nil {
		t.Fatal(err)
	}
	b.waitShown(t, bWatch, "lost", state.KindUnit)
}

// An agent that moves from one member to another at once never looks lost: the member it left
// withdraws its record only after the grace, and then still shows the agent connected through
// the other member's record.
func TestPresenceOfAnAgentMovingMembers(t *testing.T) {
	a, b, bWatch := startMembers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	onA := a.watchUnit(t)
	b.waitShown(t, bWatch, "idle", state.KindUnit)
	_, rev, err := a.st.Presence(ctx, a.model)
	if err != nil {
		t.Fatal(err)
	}
	records := a.st.WatchPresence(ctx, a.model, rev+1)

	onA.Close()
	b.watchUnit(t)
	for withdrawn := false; !withdrawn; {
		batch, ok := <-records
		if !ok {
			t.Fatal("a never withdrew its record of mysql/0")
		}
		for _, ev := range batch {
			withdrawn = withdrawn || ev.Removed && ev.Member == a.id && ev.ID == "mysql/0"
		}
	}
	if got := a.agentShown(t); got != "idle" {
		t.Errorf("a shows mysql/0 %s while its agent watches on b", got)
	}
	if got := b.agentShown(t); got != "idle" {
		t.Errorf("b shows mysql/0 %s while its agent watches on it", got)
	}
}

// A server whose daemon gives it no lease keeps one of its own, with the grace as its TTL, and
// publishes its agents again on a new one when it loses it.
func TestPresenceOnALeaseOfTheServersOwn(t *testing.T) {
	env := startMember(t, startTestEnv(t), "1", false)
	deployRunningMySQL(t, env.testEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, rev, err := env.st.Presence(ctx, env.model)
	if err != nil {
		t.Fatal(err)
	}
	records := env.st.WatchPresence(ctx, env.model, rev+1)
	// published waits for the record of mysql/0 to be put, and returns its lease.
	published := func() clientv3.LeaseID {
		t.Helper()
		for {
			batch, ok := <-records
			if !ok {
				t.Fatal("mysql/0 never published")
			}
			for _, ev := range batch {
				if ev.Created && ev.ID == "mysql/0" && ev.Member == env.id {
					got, err := env.st.Client().Get(ctx, state.PresencePrefix(env.model)+"unit/mysql/0/"+env.id)
					if err != nil || len(got.Kvs) != 1 {
						t.Fatalf("reading mysql/0's record: %v %v", got, err)
					}
					return clientv3.LeaseID(got.Kvs[0].Lease)
				}
			}
		}
	}

	env.unitAgent(t, "mysql/0").Watch(ctx, &pb.WatchRequest{Model: env.model, Targets: []*pb.WatchTarget{{Kind: state.KindUnit, Id: "mysql/0"}}})
	lease := published()
	ttl, err := env.st.Client().TimeToLive(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	// The grace in whole seconds, 1, unless the store raises it to its minimum (2 s or so).
	if ttl.GrantedTTL < 1 || ttl.GrantedTTL > 3 {
		t.Errorf("the server's lease has a TTL of %d s, want about the grace (%s)", ttl.GrantedTTL, testGrace)
	}
	if _, err := env.st.Client().Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if again := published(); again == lease || again == 0 {
		t.Errorf("published again on lease %x, lost %x", again, lease)
	}
}

// Thousands of agents connecting or disconnecting at once cost a few transactions of up to
// 100 records each (each transaction is one revision of the store), not one each.
func TestPresenceWritesInBatches(t *testing.T) {
	env := startTestEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := newSharedPresence(ctx, env.st, "9", 0, time.Now, testGrace, slog.New(slog.DiscardHandler))
	rev, err := env.st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	records := env.st.WatchPresence(ctx, env.model, rev+1)
	// await waits for n records created (or removed) and returns the revisions they took.
	await := func(n int, removed bool) int64 {
		t.Helper()
		from := rev
		for n > 0 {
			select {
			case batch := <-records:
				for _, ev := range batch {
					if ev.Removed != removed || ev.Member != "9" {
						t.Fatalf("unexpected %+v", ev)
					}
					rev = ev.Revision
					n--
				}
			case <-ctx.Done():
				t.Fatalf("%d records never written", n)
			}
		}
		return rev - from
	}

	const agents = 2000
	var disconnects []func()
	for i := range agents {
		disconnects = append(disconnects, p.connect(env.model, state.KindUnit, fmt.Sprintf("app/%d", i)))
	}
	if txns := await(agents, false); txns > agents/50 {
		t.Errorf("%d agents connecting took %d transactions", agents, txns)
	}
	for _, disconnect := range disconnects {
		disconnect()
	}
	if txns := await(agents, true); txns > agents/50 {
		t.Errorf("%d agents disconnecting took %d transactions", agents, txns)
	}
}
