package apiserver

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// manyEnv is a controller with mysql/0 deployed and running (deployRunningMySQL), and the
// credentials of its two agents.
type manyEnv struct {
	*testEnv
	conn    *grpc.ClientConn // carries no credentials of its own: each stream sends its opener's
	machine string           // mysql/0's machine
	clock   *movingClock
}

const (
	unitTag      = "unit-mysql-0"
	unitPassword = "password-of-mysql/0"
	machinePass  = "machine-secret"
)

func startManyEnv(t *testing.T) *manyEnv {
	t.Helper()
	clock := newMovingClock()
	env := startTestEnv(t, withServerLog(io.Discard, clock.Now))
	env.admin = env.dial(t, AdminTag, "admin-secret", "")
	machine := deployRunningMySQL(t, env)
	if err := env.st.SetUnitPassword(context.Background(), env.model, "mysql/0", state.HashPassword(unitPassword)); err != nil {
		t.Fatal(err)
	}
	return &manyEnv{testEnv: env, conn: env.admin.Conn(), machine: machine, clock: clock}
}

func (e *manyEnv) machineTag() string { return "machine-" + e.machine }

// manyStream is a raw WatchMany stream, as an agent host opens one.
type manyStream struct {
	t *testing.T
	pb.StatusService_WatchManyClient
	model string
}

// open opens a WatchMany stream with tag's credentials; the test fails if it waits on it for
// longer than 30 s.
func (e *manyEnv) open(t *testing.T, tag, password string) *manyStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ctx = metadata.AppendToOutgoingContext(ctx, MetaTag, tag, MetaPassword, password, MetaModel, e.model)
	s, err := pb.NewStatusServiceClient(e.conn).WatchMany(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &manyStream{t: t, StatusService_WatchManyClient: s, model: e.model}
}

func (s *manyStream) add(id int64, tag, password string, targets ...*pb.WatchTarget) {
	s.t.Helper()
	if err := s.Send(&pb.WatchManyRequest{Id: id, Tag: tag, Password: password,
		Watch: &pb.WatchRequest{Model: s.model, Targets: targets}}); err != nil {
		s.t.Fatal(err)
	}
}

func (s *manyStream) remove(id int64) {
	s.t.Helper()
	if err := s.Send(&pb.WatchManyRequest{Id: id}); err != nil {
		s.t.Fatal(err)
	}
}

// until receives events until one satisfies done and returns them all, done's last.
func (s *manyStream) until(what string, done func(*pb.WatchManyEvent) bool) []*pb.WatchManyEvent {
	s.t.Helper()
	var got []*pb.WatchManyEvent
	for {
		ev, err := s.Recv()
		if err != nil {
			s.t.Fatalf("waiting for %s: %v (after %v)", what, err, got)
		}
		got = append(got, ev)
		if done(ev) {
			return got
		}
	}
}

// established adds watch id and waits until it is established; it returns what came before.
func (s *manyStream) established(id int64, tag, password string, targets ...*pb.WatchTarget) []*pb.WatchManyEvent {
	s.t.Helper()
	s.add(id, tag, password, targets...)
	got := s.until("an established watch", func(ev *pb.WatchManyEvent) bool { return ev.Id == id && (ev.Established || ev.Ended) })
	if last := got[len(got)-1]; !last.Established {
		s.t.Fatalf("watch %d refused: %v", id, endedErr(s.t, last))
	}
	return got[:len(got)-1]
}

// endedErr decodes an ended watch's error as the client does.
func endedErr(t *testing.T, ev *pb.WatchManyEvent) error {
	t.Helper()
	var st spb.Status
	if err := proto.Unmarshal(ev.Error, &st); err != nil {
		t.Fatal(err)
	}
	return apierr.FromStatus(status.ErrorProto(&st))
}

func unitTarget(id string) *pb.WatchTarget { return &pb.WatchTarget{Kind: state.KindUnit, Id: id} }

// Two agents' watches on one stream, opened with the unit's credentials: each change reaches
// the watches of its entity only, and a watch that ignores statuses does not hear of them.
func TestWatchManyCarriesManyAgentsWatches(t *testing.T) {
	ctx := context.Background()
	env := startManyEnv(t)
	s := env.open(t, unitTag, unitPassword)
	s.established(1, unitTag, unitPassword, unitTarget("mysql/0"))
	s.established(2, env.machineTag(), machinePass, &pb.WatchTarget{Kind: state.KindMachine, Id: env.machine})
	s.established(3, unitTag, unitPassword, &pb.WatchTarget{Kind: state.KindUnit, Id: "mysql/0", IgnoreOwnWrites: true})

	if err := env.st.SetUnitStatus(ctx, env.model, "mysql/0", state.UnitStatus{Workload: &storepb.Status{Status: "active", Message: "busy"}}); err != nil {
		t.Fatal(err)
	}
	statusRev, err := env.st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.st.SetMachineStatus(ctx, env.model, env.machine, "started", "still"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.st.SetUnitPorts(ctx, env.model, "mysql/0", []string{"3306/tcp"}, nil); err != nil {
		t.Fatal(err)
	}
	heard := map[int64]bool{}
	s.until("every watch's event", func(ev *pb.WatchManyEvent) bool {
		if ev.Established || ev.Ended || len(ev.Events) == 0 {
			t.Fatalf("unexpected %v", ev)
		}
		for _, we := range ev.Events {
			switch {
			case ev.Id == 2 && (we.Kind != state.KindMachine || we.Id != env.machine),
				ev.Id != 2 && (we.Kind != state.KindUnit || we.Id != "mysql/0"):
				t.Errorf("watch %d heard of %s %s", ev.Id, we.Kind, we.Id)
			case ev.Id == 3 && we.Revision <= statusRev:
				t.Errorf("the watch ignoring statuses heard of a status change: %v", we)
			}
		}
		heard[ev.Id] = true
		return heard[1] && heard[2] && heard[3]
	})
}

// A watch refused (a wrong password, a target its agent may not watch, nothing to watch, the
// admin's credentials) ends alone with the error a Watch call would give; the stream's other
// watches go on.
func TestWatchManyRefusesAWatchAlone(t *testing.T) {
	ctx := context.Background()
	env := startManyEnv(t)
	s := env.open(t, env.machineTag(), machinePass)
	s.established(1, unitTag, unitPassword, unitTarget("mysql/0"))

	refusals := []struct {
		tag, password string
		targets       []*pb.WatchTarget
		want          error
	}{
		{env.machineTag(), "wrong", []*pb.WatchTarget{{Kind: state.KindMachine, Id: env.machine}}, apierr.Unauthenticated},
		{unitTag, unitPassword, []*pb.WatchTarget{{Kind: state.KindMachine, Id: env.machine}}, apierr.PermissionDenied},
		{unitTag, unitPassword, nil, apierr.NotValid},
		{AdminTag, "admin-secret", []*pb.WatchTarget{unitTarget("mysql/0")}, apierr.PermissionDenied},
	}
	for i, r := range refusals {
		id := int64(10 + i)
		s.add(id, r.tag, r.password, r.targets...)
		got := s.until("a refusal", func(ev *pb.WatchManyEvent) bool { return ev.Id == id })
		if last := got[len(got)-1]; !last.Ended || !errors.Is(endedErr(t, last), r.want) {
			t.Errorf("watch %d as %s of %v: %v (%v), want ended with %v", id, r.tag, r.targets, last, endedErr(t, last), r.want)
		}
	}
	// An id refused is free again.
	s.established(10, env.machineTag(), machinePass, &pb.WatchTarget{Kind: state.KindMachine, Id: env.machine})

	if err := env.st.SetUnitStatus(ctx, env.model, "mysql/0", state.UnitStatus{Workload: &storepb.Status{Status: "active", Message: "busy"}}); err != nil {
		t.Fatal(err)
	}
	s.until("the unit's watch's event", func(ev *pb.WatchManyEvent) bool {
		if ev.Id != 1 {
			t.Fatalf("unexpected %v", ev)
		}
		return len(ev.Events) > 0
	})

	// The admin has Watch; WatchMany is for agents.
	admin := env.open(t, AdminTag, "admin-secret")
	if _, err := admin.Recv(); !errors.Is(apierr.FromStatus(err), apierr.PermissionDenied) {
		t.Errorf("the admin's WatchMany: %v, want PermissionDenied", err)
	}
}

// agentsShown is what status shows of mysql/0's agent and its machine's.
func (e *manyEnv) agentsShown(t *testing.T) (unit, machine string) {
	t.Helper()
	fs, err := e.admin.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fs.Machines {
		if m.Id == e.machine {
			machine = m.GetAgentStatus().GetStatus()
		}
	}
	return findUnit(fs, "mysql/0").GetAgentStatus().GetStatus(), machine
}

// Removing a watch ends it: it hears of nothing more, and its agent's presence goes (status
// shows it lost once the grace has passed) while the other agent's stays.
func TestWatchManyRemoveEndsAWatchAndItsPresence(t *testing.T) {
	ctx := context.Background()
	env := startManyEnv(t)
	s := env.open(t, unitTag, unitPassword)
	s.established(1, unitTag, unitPassword, unitTarget("mysql/0"))
	s.established(2, env.machineTag(), machinePass, &pb.WatchTarget{Kind: state.KindMachine, Id: env.machine})
	env.clock.Advance(DefaultPresenceGrace + time.Second) // past the start's grace
	if unit, machine := env.agentsShown(t); unit != "idle" || machine != "started" {
		t.Fatalf("both agents watching: unit %s, machine %s", unit, machine)
	}

	s.remove(1)
	// Adds and removes are handled in order: once a later add is established, the removal is done.
	s.established(3, env.machineTag(), machinePass, &pb.WatchTarget{Kind: state.KindMachine, Id: env.machine})
	env.clock.Advance(DefaultPresenceGrace + time.Second)
	if unit, machine := env.agentsShown(t); unit != "lost" || machine != "started" {
		t.Fatalf("the unit's watch removed: unit %s, machine %s; want lost, started", unit, machine)
	}

	// The unit's change comes first: a watch that heard of it would hear before the machine's.
	if err := env.st.SetUnitStatus(ctx, env.model, "mysql/0", state.UnitStatus{Workload: &storepb.Status{Status: "active", Message: "busy"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.st.SetMachineStatus(ctx, env.model, env.machine, "started", "still"); err != nil {
		t.Fatal(err)
	}
	heard := map[int64]bool{}
	s.until("the machine's watches' events", func(ev *pb.WatchManyEvent) bool {
		if ev.Id == 1 {
			t.Fatalf("the removed watch heard %v", ev)
		}
		heard[ev.Id] = heard[ev.Id] || len(ev.Events) > 0
		return heard[2] && heard[3]
	})
}

// The stream's end ends every watch on it, and every agent's presence with them.
func TestWatchManyEndReleasesEveryPresence(t *testing.T) {
	env := startManyEnv(t)
	s := env.open(t, unitTag, unitPassword)
	s.established(1, unitTag, unitPassword, unitTarget("mysql/0"))
	s.established(2, env.machineTag(), machinePass, &pb.WatchTarget{Kind: state.KindMachine, Id: env.machine})
	env.clock.Advance(DefaultPresenceGrace + time.Second)
	if unit, machine := env.agentsShown(t); unit != "idle" || machine != "started" {
		t.Fatalf("both agents watching: unit %s, machine %s", unit, machine)
	}

	// Closing its side ends the stream; the server has let go of every watch by the time the
	// client hears of the end.
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("the stream closed by the client ends with %v", err)
	}
	env.clock.Advance(DefaultPresenceGrace + time.Second)
	if unit, machine := env.agentsShown(t); unit != "lost" || machine != "down" {
		t.Fatalf("the stream ended: unit %s, machine %s; want lost, down", unit, machine)
	}
}

// An idle watch on WatchMany costs the server no goroutine: 200 more on a stream cost a few
// goroutines at most (the store's and grpc's own, which come and go).
func TestWatchManyIdleWatchesCostNoGoroutine(t *testing.T) {
	ctx := context.Background()
	env := startManyEnv(t)
	s := env.open(t, unitTag, unitPassword)
	s.established(1, unitTag, unitPassword, unitTarget("mysql/0"))
	before := runtime.NumGoroutine()
	const watches = 200
	for id := int64(2); id <= watches+1; id++ {
		s.add(id, unitTag, unitPassword, unitTarget("mysql/0"))
	}
	established := 0
	s.until("every watch established", func(ev *pb.WatchManyEvent) bool {
		if !ev.Established {
			t.Fatalf("unexpected %v", ev)
		}
		established++
		return established == watches
	})
	if after := runtime.NumGoroutine(); after-before > 20 {
		t.Errorf("%d idle watches took %d goroutines (%d before, %d after)", watches, after-before, before, after)
	}

	// And every one of them is live.
	if err := env.st.SetUnitStatus(ctx, env.model, "mysql/0", state.UnitStatus{Workload: &storepb.Status{Status: "active", Message: "busy"}}); err != nil {
		t.Fatal(err)
	}
	heard := map[int64]bool{}
	s.until("every watch's event", func(ev *pb.WatchManyEvent) bool {
		heard[ev.Id] = true
		return len(heard) == watches+1
	})
}
