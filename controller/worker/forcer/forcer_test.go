package forcer_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/forcer"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
	"github.com/jujuclone/juju/core/life"
)

var st *state.State

func TestMain(m *testing.M) { workertest.Main(m, &st) }

// The force-remover runs on a fake clock; the agents do nothing at all (tests drive state).
func runWorker(t *testing.T) *workertest.Clock {
	t.Helper()
	clock := workertest.NewClock(time.Unix(1_700_000_000, 0))
	w := forcer.New(st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	w.SetClock(clock)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		w.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("force-remover did not stop")
		}
	})
	return clock
}

func peerRelation(t *testing.T, uuid, app string) int64 {
	t.Helper()
	rel := workertest.Find(workertest.Snapshot(t, st, uuid).Relations, func(r *storepb.Relation) bool {
		return len(r.Endpoints) == 1 && r.Endpoints[0].Application == app
	})
	if rel == nil {
		t.Fatalf("no peer relation for %s", app)
	}
	return rel.Id
}

// expectCounts checks applications' unit and relation counts against the snapshot's documents.
func expectCounts(t *testing.T, snap *state.Snapshot) {
	t.Helper()
	for _, app := range snap.Applications {
		units, rels := 0, 0
		for _, u := range snap.Units {
			if u.Application == app.Name {
				units++
			}
		}
		for _, r := range snap.Relations {
			for _, ep := range r.Endpoints {
				if ep.Application == app.Name {
					rels++
					break
				}
			}
		}
		// A dying application's relation count also drops relations it no longer holds.
		if app.Life == string(life.Alive) && int(app.RelationCount) != rels {
			t.Errorf("application %s (%d units): relation count %d (%d relations)", app.Name, units, app.RelationCount, rels)
		}
	}
}

// A dying unit in two relation scopes (and a third, container-scoped one) with a subordinate:
// nothing happens without force; forced with deadline now, the unit and its subordinate go,
// every scope left and every count right (L-F1).
func TestForcedUnitLeavesScopesAndTakesSubordinate_LF1(t *testing.T) {
	ctx := context.Background()
	clock := runWorker(t)
	uuid := workertest.NewModel(t, st)
	wp := workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 1)[0]
	db := workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 1)[0]
	workertest.Deploy(t, st, uuid, "logging", workertest.LoggingMeta, 0)
	dbRel := workertest.Integrate(t, st, uuid, "wordpress:db", "mysql:db")
	logRel := workertest.Integrate(t, st, uuid, "logging", "wordpress")
	peer := peerRelation(t, uuid, "wordpress")
	workertest.EnterScope(t, st, uuid, peer, wp)
	workertest.EnterScope(t, st, uuid, dbRel, wp)
	workertest.EnterScope(t, st, uuid, dbRel, db)
	sub := workertest.EnterScope(t, st, uuid, logRel, wp)
	if sub == "" {
		t.Fatal("no subordinate created")
	}
	workertest.EnterScope(t, st, uuid, logRel, sub)
	machine := workertest.Unit(workertest.Snapshot(t, st, uuid), wp).MachineId

	// Without force, the agents' duties are theirs alone.
	if _, err := st.DestroyUnit(ctx, uuid, wp, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if u := workertest.Unit(workertest.Snapshot(t, st, uuid), wp); u == nil || u.Life != string(life.Dying) {
		t.Fatalf("unit without force: %v", u)
	}

	// Force on the dying unit (escalation: its life does not change, its deadline does).
	if _, err := st.DestroyUnit(ctx, uuid, wp, state.DestroyOptions{ForceAfter: clock.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "unit and subordinate removed", func() bool {
		snap := workertest.Snapshot(t, st, uuid)
		return workertest.Unit(snap, wp) == nil && workertest.Unit(snap, sub) == nil
	})
	snap := workertest.Snapshot(t, st, uuid)
	expectCounts(t, snap)
	if len(snap.Units) != 1 || snap.Units[0].Name != db {
		t.Fatalf("units left: %v", snap.Units)
	}
	if len(snap.Relations) != 3 || len(snap.Applications) != 3 {
		t.Fatalf("relations %d, applications %d: alive ones must stay", len(snap.Relations), len(snap.Applications))
	}
	if in := snap.Blockers().ScopeUnits[dbRel]; len(in) != 1 {
		t.Fatalf("db relation scope %v", in)
	}
	if units, err := st.MachineUnits(ctx, uuid, machine); err != nil || len(units) != 0 {
		t.Fatalf("machine %s still holds %v (%v)", machine, units, err)
	}
	if m := workertest.Machine(snap, machine); m == nil || m.Life != string(life.Alive) {
		t.Fatalf("machine %s: %v", machine, m)
	}
}

// A forced application: its alive units, whose agents do nothing, are removed at the deadline,
// the relations they held go (the forced dying relation's other units are taken out of scope
// too), and the last one out removes the application (L-F1, L-A3, L-R4).
func TestForcedApplicationRemovesUnitsRelationsAndItself_LF1(t *testing.T) {
	ctx := context.Background()
	clock := runWorker(t)
	uuid := workertest.NewModel(t, st)
	wps := workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 2)
	db := workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 1)[0]
	dbRel := workertest.Integrate(t, st, uuid, "wordpress:db", "mysql:db")
	peer := peerRelation(t, uuid, "wordpress")
	for _, u := range wps {
		workertest.EnterScope(t, st, uuid, peer, u)
		workertest.EnterScope(t, st, uuid, dbRel, u)
	}
	workertest.EnterScope(t, st, uuid, dbRel, db)

	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{ForceAfter: clock.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "application removed", func() bool {
		return workertest.App(workertest.Snapshot(t, st, uuid), "wordpress") == nil
	})
	snap := workertest.Snapshot(t, st, uuid)
	expectCounts(t, snap)
	if len(snap.Units) != 1 || snap.Units[0].Name != db || len(snap.Units[0].Scopes) != 0 {
		t.Fatalf("units left: %v", snap.Units)
	}
	if len(snap.Relations) != 0 {
		t.Fatalf("relations left: %v", snap.Relations)
	}
	if app := workertest.App(snap, "mysql"); app.RelationCount != 0 || unitsOf(snap, "mysql") != 1 {
		t.Fatalf("mysql: %v", app)
	}
	cleanups, err := st.Cleanups(ctx, uuid)
	if err != nil || len(cleanups) != 2 {
		t.Fatalf("cleanups: %v %v", cleanups, err)
	}
}

// A forced machine: its units go dying at once, with its deadline, so their agents get the
// grace period; nothing else happens until the clock passes the deadline; then the units are
// removed and the machine set dead for the provisioner (L-F1, L-M3).
func TestForcedMachineGivesUnitsTheGracePeriod_LF1(t *testing.T) {
	ctx := context.Background()
	clock := runWorker(t)
	uuid := workertest.NewModel(t, st)
	workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 0)
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	// Provisioned, so its units count as deployed and wait for their agents.
	if err := st.SetProvisioned(ctx, uuid, id, state.Instance{ID: "i-0"}, state.HashPassword("x")); err != nil {
		t.Fatal(err)
	}
	units, err := st.AddUnits(ctx, uuid, "wordpress", 2, []state.Placement{{Scope: "#", Directive: id}, {Scope: "#", Directive: id}})
	if err != nil {
		t.Fatal(err)
	}
	peer := peerRelation(t, uuid, "wordpress")
	for _, u := range units {
		workertest.EnterScope(t, st, uuid, peer, u)
	}

	deadline := clock.Now().Add(time.Minute)
	if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{ForceAfter: deadline.UnixNano()}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "units dying with the machine's deadline", func() bool {
		snap := workertest.Snapshot(t, st, uuid)
		for _, name := range units {
			u := workertest.Unit(snap, name)
			if u.Life != string(life.Dying) || u.ForceAfter != deadline.UnixNano() {
				return false
			}
		}
		return true
	})
	workertest.Eventually(t, "timer at the deadline", func() bool { return clock.HasTimerAt(deadline) })
	clock.Advance(59 * time.Second)
	time.Sleep(100 * time.Millisecond)
	snap := workertest.Snapshot(t, st, uuid)
	if len(snap.Units) != 2 || workertest.Machine(snap, id).Life != string(life.Dying) {
		t.Fatalf("before the deadline: units %d, machine %v", len(snap.Units), workertest.Machine(snap, id))
	}

	clock.Advance(time.Second)
	workertest.Eventually(t, "units removed, machine dead", func() bool {
		snap := workertest.Snapshot(t, st, uuid)
		return len(snap.Units) == 0 && workertest.Machine(snap, id).Life == string(life.Dead)
	})
	snap = workertest.Snapshot(t, st, uuid)
	expectCounts(t, snap)
	if app := workertest.App(snap, "wordpress"); app == nil || unitsOf(snap, "wordpress") != 0 || app.Life != string(life.Alive) {
		t.Fatalf("wordpress: %v", app)
	}
}

// A forced relation waits for its deadline, then every unit leaves its scope and the last one
// out removes it (L-F1, L-R4).
func TestForcedRelationAtDeadline_LF1(t *testing.T) {
	ctx := context.Background()
	clock := runWorker(t)
	uuid := workertest.NewModel(t, st)
	wp := workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 1)[0]
	db := workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 1)[0]
	dbRel := workertest.Integrate(t, st, uuid, "wordpress:db", "mysql:db")
	workertest.EnterScope(t, st, uuid, dbRel, wp)
	workertest.EnterScope(t, st, uuid, dbRel, db)

	deadline := clock.Now().Add(time.Hour)
	if _, err := st.DestroyRelation(ctx, uuid, dbRel, deadline.UnixNano()); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "timer at the deadline", func() bool { return clock.HasTimerAt(deadline) })
	if snap := workertest.Snapshot(t, st, uuid); workertest.Relation(snap, dbRel) == nil || len(snap.Blockers().ScopeUnits[dbRel]) != 2 {
		t.Fatalf("relation before the deadline: %v", workertest.Relation(snap, dbRel))
	}
	clock.Advance(time.Hour)
	workertest.Eventually(t, "relation removed", func() bool {
		return workertest.Relation(workertest.Snapshot(t, st, uuid), dbRel) == nil
	})
	snap := workertest.Snapshot(t, st, uuid)
	expectCounts(t, snap)
	if len(snap.Units) != 2 {
		t.Fatalf("units: %v", snap.Units)
	}
	for _, u := range snap.Units {
		if len(u.Scopes) != 0 || u.Life != string(life.Alive) {
			t.Fatalf("unit %s: scopes %v, life %s", u.Name, u.Scopes, u.Life)
		}
	}
}

func unitsOf(snap *state.Snapshot, app string) int {
	n := 0
	for _, u := range snap.Units {
		if u.Application == app {
			n++
		}
	}
	return n
}

// A force-remover started after a relation was forced finds it in its one read of the model at
// start, and follows later changes from the watch alone (issue 16): a second relation forced
// with an earlier deadline goes first, the first one at its own deadline.
func TestForcedBeforeStartFoundByTheFirstRead_LF1(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	wp := workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 1)[0]
	db := workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 1)[0]
	dbRel := workertest.Integrate(t, st, uuid, "wordpress:db", "mysql:db")
	workertest.EnterScope(t, st, uuid, dbRel, wp)
	workertest.EnterScope(t, st, uuid, dbRel, db)
	start := time.Unix(1_700_000_000, 0)
	deadline := start.Add(time.Hour)
	if _, err := st.DestroyRelation(ctx, uuid, dbRel, deadline.UnixNano()); err != nil {
		t.Fatal(err)
	}
	db2 := workertest.Deploy(t, st, uuid, "mysql2", workertest.MySQLMeta, 1)[0]
	other := workertest.Integrate(t, st, uuid, "wordpress:db", "mysql2:db")
	workertest.EnterScope(t, st, uuid, other, wp)
	workertest.EnterScope(t, st, uuid, other, db2)

	clock := runWorker(t)
	workertest.Eventually(t, "timer at the deadline", func() bool { return clock.HasTimerAt(deadline) })
	// A second forced relation, seen through the watch, with an earlier deadline.
	early := clock.Now().Add(time.Minute)
	if _, err := st.DestroyRelation(ctx, uuid, other, early.UnixNano()); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "timer at the earlier deadline", func() bool { return clock.HasTimerAt(early) })
	clock.Advance(time.Minute)
	workertest.Eventually(t, "earlier relation removed", func() bool {
		return workertest.Relation(workertest.Snapshot(t, st, uuid), other) == nil
	})
	if workertest.Relation(workertest.Snapshot(t, st, uuid), dbRel) == nil {
		t.Fatal("the later relation went before its deadline")
	}
	clock.Advance(time.Hour)
	workertest.Eventually(t, "later relation removed", func() bool {
		return workertest.Relation(workertest.Snapshot(t, st, uuid), dbRel) == nil
	})
	expectCounts(t, workertest.Snapshot(t, st, uuid))
}
