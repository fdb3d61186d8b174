package apiserver

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
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
	alive := func(kind, id string) bool { return p.alive("m1")(kind, id) }

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
	if alive("unit", "mysql/1") || p.alive("m2")("unit", "mysql/0") {
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

// A status view is taken at one instant.
func TestPresenceViewIsOneInstant(t *testing.T) {
	clock := newMovingClock()
	p := newPresence(clock.Now, time.Second)
	clock.Advance(2 * time.Second)
	done := p.connect("m1", "machine", "0")
	view := p.alive("m1")
	done()
	clock.Advance(time.Minute)
	if !view("machine", "0") {
		t.Fatal("the view changed after it was taken")
	}
	if p.alive("m1")("machine", "0") {
		t.Fatal("a later view does not see the agent lost")
	}
}

// Watchers of status hear of an agent going lost once the grace passed, and of its return.
func TestPresenceNotifies(t *testing.T) {
	grace := 50 * time.Millisecond
	p := newPresence(time.Now, grace)
	sub, stop := p.subscribe("m1")
	defer stop()
	other, stopOther := p.subscribe("m2")
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
	if remembered != 0 || p.alive("m1")("unit", "mysql/0") {
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
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nprovides:\n  db:\n    interface: mysql\n", 1)
	env.deploy(t, "blog", blogMeta, 1) // its unit stays allocating: never lost
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
