package state_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// The lifecycle transactions, driven directly (no agents): each test plays the agents' part
// by hand and audits the model's references and counts after every step.

const mysqlMeta = `name: mysql
summary: db
provides:
  db: mysql
peers:
  cluster: mysql-peers
bases: [ubuntu@22.04]
`

const mediawikiMeta = `name: mediawiki
summary: wiki
requires:
  db: mysql
  slave: mysql
bases: [ubuntu@22.04]
`

func audit(t *testing.T, uuid string) {
	t.Helper()
	problems, err := st.Audit(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error("audit: " + p)
	}
}

func spec(s string) state.EndpointSpec {
	e, err := state.ParseEndpoint(s)
	if err != nil {
		panic(err)
	}
	return e
}

func addUnits(t *testing.T, uuid, app string, n int) []string {
	t.Helper()
	units, err := st.AddUnits(context.Background(), uuid, app, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Deployed units (with a credential) on provisioned machines: removal goes through agents.
	for _, u := range units {
		if err := st.SetUnitPassword(context.Background(), uuid, u, "hash"); err != nil {
			t.Fatal(err)
		}
		unit, _ := st.Unit(context.Background(), uuid, u)
		if err := st.SetProvisioned(context.Background(), uuid, unit.MachineId, state.Instance{ID: "i-" + unit.MachineId}, "h"); err != nil {
			t.Fatal(err)
		}
	}
	return units
}

func enter(t *testing.T, uuid string, rel int64, units ...string) {
	t.Helper()
	for _, u := range units {
		if _, err := st.EnterScope(context.Background(), uuid, rel, u, map[string]string{"private-address": "10.0.0.1"}); err != nil {
			t.Fatal(err)
		}
	}
}

// unitGoes plays a dying unit's agent and deployer: leave every scope, set dead, remove.
func unitGoes(t *testing.T, uuid, name string) {
	t.Helper()
	ctx := context.Background()
	u, err := st.Unit(ctx, uuid, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range u.Scopes {
		if err := st.LeaveScope(ctx, uuid, rel, name); err != nil {
			t.Fatal(err)
		}
		audit(t, uuid)
	}
	if l, err := st.EnsureUnitDead(ctx, uuid, name); err != nil || l != "dead" {
		t.Fatalf("ensure dead: %q %v", l, err)
	}
	if err := st.RemoveUnit(ctx, uuid, name); err != nil {
		t.Fatal(err)
	}
	audit(t, uuid)
}

func TestIntegrateInfersEndpoints_LD5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	deploy(t, uuid, "mediawiki", mediawikiMeta, "")
	rel, err := st.Integrate(ctx, uuid, spec("mysql"), spec("wordpress"))
	if err != nil || rel.Key != "wordpress:db mysql:db" {
		t.Fatalf("integrate: %v %v", rel, err)
	}
	audit(t, uuid)
	_, err = st.Integrate(ctx, uuid, spec("wordpress:db"), spec("mysql:db"))
	if !errors.Is(err, apierr.AlreadyExists) || err.Error() != `cannot add relation "wordpress:db mysql:db": relation wordpress:db mysql:db already exists` {
		t.Fatalf("duplicate: %v", err)
	}
	_, err = st.Integrate(ctx, uuid, spec("mediawiki"), spec("mysql"))
	if err == nil || err.Error() != `ambiguous relation: "mediawiki mysql" could refer to "mediawiki:db mysql:db"; "mediawiki:slave mysql:db"` {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := st.Integrate(ctx, uuid, spec("mediawiki:slave"), spec("mysql")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[[2]string]string{
		{"wordpress", "wordpress"}:     "with itself",
		{"wordpress:website", "mysql"}: "no relations found",
		{"wordpress", "nope"}:          `application "nope" not found`,
		{"wordpress:nope", "mysql"}:    "no relations found",
	} {
		if _, err := st.Integrate(ctx, uuid, spec(in[0]), spec(in[1])); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %q", in, err, want)
		}
	}
	for _, bad := range []string{"x:", ":x", "a:b:c", "Foo", "wordpress:Bad Name"} {
		if _, err := state.ParseEndpoint(bad); !errors.Is(err, apierr.NotValid) {
			t.Errorf("%q parsed: %v", bad, err)
		}
	}
	audit(t, uuid)
}

// L-D6: a container-scoped relation needs a subordinate and matching bases; the implicit
// juju-info endpoint serves it.
func TestContainerScope_LD6(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	rel, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("logging"))
	if err != nil || rel.Key != "logging:juju-info wordpress:juju-info" || rel.Endpoints[0].Scope != "container" || rel.Endpoints[1].Scope != "container" {
		t.Fatalf("integrate: %v %v", rel, err)
	}
	ch, _ := st.AddCharm(ctx, uuid, charmZip(t, strings.Replace(loggingMeta, "name: logging", "name: logging2", 1)))
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "logging24", CharmURL: ch.Url, Base: "ubuntu@24.04"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("logging24")); err == nil || !strings.Contains(err.Error(), "bases must match") {
		t.Fatalf("bases: %v", err)
	}
	audit(t, uuid)
}

// L-R2, L-D7: entering a container scope creates the principal's subordinate once.
func TestEnterScopeCreatesSubordinate_LR2_LD7(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	rel, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("logging"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := st.EnterScope(ctx, uuid, rel.Id, units[0], map[string]string{"private-address": "10.0.0.1"})
	if err != nil || sub != "logging/0" {
		t.Fatalf("enter: %q %v", sub, err)
	}
	// Entering again is a no-op; a second relation to the same subordinate app adds none.
	if sub, err := st.EnterScope(ctx, uuid, rel.Id, units[0], nil); err != nil || sub != "" {
		t.Fatalf("again: %q %v", sub, err)
	}
	enter(t, uuid, rel.Id, "logging/0")
	settings, err := st.RelationSettings(ctx, uuid, rel.Id)
	if err != nil || settings[units[0]]["private-address"] != "10.0.0.1" {
		t.Fatalf("settings: %v %v", settings, err)
	}
	audit(t, uuid)
	// L-U1: a subordinate is refused with Juju's pointer at remove-relation.
	_, err = st.DestroyUnit(ctx, uuid, "logging/0", state.DestroyOptions{})
	if !errors.Is(err, apierr.NotSupported) || err.Error() != `unit "logging/0" is a subordinate, to remove use remove-relation. Note: this will remove all units of "logging"` {
		t.Fatalf("destroy subordinate: %v", err)
	}
}

// L-R1: no unit in scope → removed at once with a cleanup; units in scope → dying, and the
// last one out removes it (L-R4).
func TestDestroyRelation_LR1_LR4(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	rel, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	out, err := st.DestroyRelation(ctx, uuid, rel.Id, 0)
	if err != nil || out != state.OutcomeRemoved {
		t.Fatalf("destroy: %v %v", out, err)
	}
	cl, _ := st.Cleanups(ctx, uuid)
	if len(cl) != 1 || cl[0].Doc.RelationId != rel.Id {
		t.Fatalf("cleanups: %v", cl)
	}
	audit(t, uuid)

	w := addUnits(t, uuid, "wordpress", 1)
	m := addUnits(t, uuid, "mysql", 1)
	rel, _ = st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	enter(t, uuid, rel.Id, w[0], m[0])
	if out, err = st.DestroyRelation(ctx, uuid, rel.Id, 0); err != nil || out != state.OutcomeDying {
		t.Fatalf("destroy: %v %v", out, err)
	}
	// L-G2: not alive → no-op; L-G5: no identical relation while it exists.
	if out, err = st.DestroyRelation(ctx, uuid, rel.Id, 0); err != nil || out != state.OutcomeNone {
		t.Fatalf("again: %v %v", out, err)
	}
	if _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql")); !errors.Is(err, apierr.AlreadyExists) {
		t.Fatalf("identical while dying: %v", err)
	}
	if _, err := st.EnterScope(ctx, uuid, rel.Id, w[0], nil); err != nil {
		t.Fatalf("entering a scope it is in: %v", err) // no-op
	}
	if err := st.LeaveScope(ctx, uuid, rel.Id, w[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Relation(ctx, uuid, rel.Id); err != nil {
		t.Fatalf("relation went with a unit still in scope: %v", err)
	}
	if err := st.LeaveScope(ctx, uuid, rel.Id, m[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Relation(ctx, uuid, rel.Id); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("relation still there: %v", err)
	}
	audit(t, uuid)
	// Settings stay until the cleanup runs (L-R3, L-R7), then go in batches.
	if s, _ := st.RelationSettings(ctx, uuid, rel.Id); len(s) != 2 {
		t.Fatalf("settings before cleanup: %v", s)
	}
	cl, _ = st.Cleanups(ctx, uuid)
	for _, c := range cl {
		if err := st.RunCleanup(ctx, uuid, c); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := st.RelationSettings(ctx, uuid, rel.Id); len(s) != 0 {
		t.Fatalf("settings after cleanup: %v", s)
	}
	if left, _ := st.Remaining(ctx, uuid); len(left) != 0 {
		t.Fatalf("remaining: %v", left)
	}
}

// L-A1 then L-R4: the application goes dying; its units leave; the last unit out of the
// relation decrements; the last unit removed removes the application (L-U3, L-A3).
func TestDestroyApplication_LA1_LU3_LA3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	deploy(t, uuid, "mediawiki", mediawikiMeta, "")
	w := addUnits(t, uuid, "wordpress", 2)
	m := addUnits(t, uuid, "mysql", 1)
	rel, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	idle, _ := st.Integrate(ctx, uuid, spec("mediawiki:db"), spec("mysql")) // nobody in scope
	enter(t, uuid, rel.Id, w[0], w[1], m[0])

	// Dry run changes nothing.
	res, err := st.DestroyApplication(ctx, uuid, "mysql", state.DestroyOptions{DryRun: true})
	if err != nil || res.Outcome != state.OutcomeDying || strings.Join(res.Units, ",") != "mysql/0" {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if app, _ := st.Application(ctx, uuid, "mysql"); app.Life != "alive" {
		t.Fatal("dry run changed the application")
	}
	res, err = st.DestroyApplication(ctx, uuid, "mysql", state.DestroyOptions{})
	if err != nil || res.Outcome != state.OutcomeDying {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	audit(t, uuid)
	if _, err := st.Relation(ctx, uuid, idle.Id); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("relation nobody was in should be gone: %v", err)
	}
	if mw, _ := st.Application(ctx, uuid, "mediawiki"); mw.RelationCount != 0 {
		t.Fatalf("counterpart count: %v", mw)
	}
	// L-D4, L-D5: a dying application takes no units and no relations.
	if _, err := st.AddUnits(ctx, uuid, "mysql", 1, nil); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("add-unit to dying: %v", err)
	}
	if _, err := st.Integrate(ctx, uuid, spec("mediawiki:slave"), spec("mysql")); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("integrate dying: %v", err)
	}
	// L-U6: the unit's agent follows its application.
	if l, err := st.SetUnitDying(ctx, uuid, m[0]); err != nil || l != "dying" {
		t.Fatalf("unit dying: %q %v", l, err)
	}
	// L-U4: not dead while in scope.
	if l, _ := st.EnsureUnitDead(ctx, uuid, m[0]); l != "dying" {
		t.Fatalf("dead while in scope: %q", l)
	}
	unitGoes(t, uuid, m[0])
	// The application stays: the dying relation still holds it (wordpress units in scope). Its
	// peer relation had nobody in scope, so it went with the destroy.
	app, err := st.Application(ctx, uuid, "mysql")
	if err != nil || app.RelationCount != 1 {
		t.Fatalf("mysql: %v %v", app, err)
	}
	// The wordpress units leave; the last one out removes the relation and, since nothing else
	// holds the dying mysql, mysql with it (L-R4, L-A3).
	for _, u := range w {
		if _, err := st.Application(ctx, uuid, "mysql"); err != nil {
			t.Fatalf("mysql went while the relation holds it: %v", err)
		}
		if err := st.LeaveScope(ctx, uuid, rel.Id, u); err != nil {
			t.Fatal(err)
		}
		audit(t, uuid)
	}
	if _, err := st.Application(ctx, uuid, "mysql"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("mysql still there: %v", err)
	}
	if wp, _ := st.Application(ctx, uuid, "wordpress"); wp.RelationCount != 1 || wp.Life != "alive" {
		t.Fatalf("wordpress: %v", wp)
	}
}

// L-A1: nothing holds the application → it goes at once with its relations.
func TestDestroyApplicationAtOnce_LA1(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	if _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql")); err != nil {
		t.Fatal(err)
	}
	res, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{})
	if err != nil || res.Outcome != state.OutcomeRemoved {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	audit(t, uuid)
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("again: %v", err)
	}
	// L-G5: the name is free again.
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	audit(t, uuid)
}

// L-U1, L-U5: a dying principal takes its subordinates; the principal waits for them (L-U4).
func TestDestroyUnitTakesSubordinates_LU1_LU5_LU4(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	w := addUnits(t, uuid, "wordpress", 1)
	rel, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("logging"))
	enter(t, uuid, rel.Id, w[0])
	if err := st.SetUnitPassword(ctx, uuid, "logging/0", "h"); err != nil {
		t.Fatal(err)
	}
	enter(t, uuid, rel.Id, "logging/0")
	res, err := st.DestroyUnit(ctx, uuid, w[0], state.DestroyOptions{})
	if err != nil || res.Outcome != state.OutcomeDying || strings.Join(res.Units, ",") != "logging/0" {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	if sub, _ := st.Unit(ctx, uuid, "logging/0"); sub.Life != "dying" {
		t.Fatalf("subordinate: %v", sub)
	}
	if err := st.LeaveScope(ctx, uuid, rel.Id, w[0]); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.EnsureUnitDead(ctx, uuid, w[0]); l != "dying" {
		t.Fatalf("principal dead with a subordinate: %q", l)
	}
	unitGoes(t, uuid, "logging/0")
	unitGoes(t, uuid, w[0])
	if left, _ := st.Remaining(ctx, uuid); len(left) != 0 {
		t.Fatalf("remaining: %v", left)
	}
}

// L-M5: a unit whose machine never got an instance goes at once.
func TestDestroyUndeployedUnitAtOnce_LM5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units, err := st.AddUnits(ctx, uuid, "wordpress", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{})
	if err != nil || res.Outcome != state.OutcomeRemoved {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	audit(t, uuid)
}

// L-M1, L-M2, L-M3: remove-machine refuses the controller machine and machines with units;
// a dying machine goes dead once empty and is removed only when dead.
func TestDestroyMachine_LM1_LM2_LM3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	u, _ := st.Unit(ctx, uuid, units[0])
	res, err := st.DestroyMachine(ctx, uuid, u.MachineId, state.DestroyOptions{DryRun: true})
	if err != nil || !res.RequiresForce || strings.Join(res.Units, ",") != units[0] {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	_, err = st.DestroyMachine(ctx, uuid, u.MachineId, state.DestroyOptions{})
	if !errors.Is(err, apierr.HasAssignedUnits) || err.Error() != `machine 0 has unit "wordpress/0" assigned` {
		t.Fatalf("destroy: %v", err)
	}
	if _, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, units[0])
	if err := st.RemoveMachine(ctx, uuid, u.MachineId); err == nil {
		t.Fatal("removed an alive machine")
	}
	if res, err := st.DestroyMachine(ctx, uuid, u.MachineId, state.DestroyOptions{}); err != nil || res.Outcome != state.OutcomeDying {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	if l, err := st.EnsureMachineDead(ctx, uuid, u.MachineId); err != nil || l != "dead" {
		t.Fatalf("dead: %q %v", l, err)
	}
	if err := st.RemoveMachine(ctx, uuid, u.MachineId); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyMachine(ctx, uuid, u.MachineId, state.DestroyOptions{}); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("gone: %v", err)
	}
	audit(t, uuid)
}

// L-F1: the force steps finish what agents would have done and keep every count right.
func TestForceRemoveUnit_LF1(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	w := addUnits(t, uuid, "wordpress", 2)
	m := addUnits(t, uuid, "mysql", 1)
	rel, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	sub, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("logging"))
	enter(t, uuid, rel.Id, w[0], w[1], m[0])
	enter(t, uuid, sub.Id, w[0])
	enter(t, uuid, sub.Id, "logging/0")
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{ForceAfter: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.ForceRemoveApplicationUnits(ctx, uuid, "wordpress", 1); err != nil {
		t.Fatal(err)
	}
	audit(t, uuid)
	// mysql/0's agent leaves the dying relation; that removes it and the dying wordpress (L-R4).
	if _, err := st.Application(ctx, uuid, "wordpress"); err != nil {
		t.Fatalf("wordpress went while mysql/0 is in scope: %v", err)
	}
	if err := st.LeaveScope(ctx, uuid, rel.Id, m[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Application(ctx, uuid, "wordpress"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("wordpress still there: %v", err)
	}
	mysql, _ := st.Application(ctx, uuid, "mysql")
	logging, _ := st.Application(ctx, uuid, "logging")
	if mysql.RelationCount != 1 || logging.RelationCount != 0 {
		t.Fatalf("counts: mysql %v, logging %v", mysql, logging)
	}
}

// L-F2: whatever is not alive says what it waits for.
func TestBlockersExplainWhatIsStuck_LF2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	w := addUnits(t, uuid, "wordpress", 1)
	m := addUnits(t, uuid, "mysql", 1)
	rel, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	sub, _ := st.Integrate(ctx, uuid, spec("wordpress"), spec("logging"))
	enter(t, uuid, rel.Id, w[0], m[0])
	enter(t, uuid, sub.Id, w[0])
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetUnitDying(ctx, uuid, w[0]); err != nil {
		t.Fatal(err)
	}
	wm, _ := st.Unit(ctx, uuid, w[0])
	if _, err := st.DestroyMachine(ctx, uuid, wm.MachineId, state.DestroyOptions{ForceAfter: 1}); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Snapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	b := snap.Blockers()
	want := map[string][]string{
		"unit wordpress/0": {
			`still in relation ` + itoa(rel.Id) + ` (wordpress:db mysql:db)`,
			`still in relation ` + itoa(sub.Id) + ` (logging:juju-info wordpress:juju-info)`,
			`waiting for subordinate logging/0 to be removed`,
		},
		"unit logging/0":        {"waiting for its agent to set it dead"},
		"application wordpress": {"waiting for 1 unit to be removed: wordpress/0", "waiting for relation " + itoa(rel.Id) + " (wordpress:db mysql:db) to be removed", "waiting for relation " + itoa(sub.Id) + " (logging:juju-info wordpress:juju-info) to be removed"},
		"relation":              {"waiting for 2 units to leave its scope: mysql/0, wordpress/0"},
		"machine":               {"waiting for 1 unit to be removed: wordpress/0"},
	}
	got := map[string][]string{
		"unit wordpress/0": b.Units["wordpress/0"], "unit logging/0": b.Units["logging/0"],
		"application wordpress": b.Applications["wordpress"], "relation": b.Relations[rel.Id], "machine": b.Machines[wm.MachineId],
	}
	for k, v := range want {
		if strings.Join(got[k], "|") != strings.Join(v, "|") {
			t.Errorf("%s:\n got %q\nwant %q", k, got[k], v)
		}
	}
	if len(b.Units["mysql/0"]) != 0 || len(b.Applications["mysql"]) != 0 {
		t.Errorf("alive entities have blockers: %v %v", b.Units["mysql/0"], b.Applications["mysql"])
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The leader's removal frees its lease in the same transaction, so another unit claims at
// once rather than when the lease runs out.
func TestRemovingTheLeaderFreesLeadership(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 3)
	claim(t, uuid, units[0], true, units[0])
	claim(t, uuid, units[1], false, units[0])
	if _, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, units[0])
	if leader, _ := st.Leader(ctx, uuid, "wordpress"); leader != "" {
		t.Fatalf("leader after removal = %q", leader)
	}
	claim(t, uuid, units[1], true, units[1])
	audit(t, uuid)
}

// L-R7: a removed relation's settings go in batches, however many there are, and nothing of
// another relation with them (their ids share leading digits).
func TestCleanupRemovesSettingsInBatches_LR7(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	const rel, other = 999, 9990
	n := 3*state.CleanupBatch + 5
	for i := range n {
		if err := st.PutRaw(ctx, state.SettingsPrefix(uuid, rel)+fmt.Sprintf("wordpress/%d", i), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutRaw(ctx, state.SettingsPrefix(uuid, other)+"wordpress/0", "{}"); err != nil {
		t.Fatal(err)
	}
	c := state.Cleanup{ID: 1, Doc: &storepb.Cleanup{Kind: state.CleanupRelationSettings, RelationId: rel}}
	if err := st.RunCleanup(ctx, uuid, c); err != nil {
		t.Fatal(err)
	}
	if left, err := st.CountRaw(ctx, state.SettingsPrefix(uuid, rel)); err != nil || left != 0 {
		t.Fatalf("%d of %d settings left, %v", left, n, err)
	}
	if kept, err := st.CountRaw(ctx, state.SettingsPrefix(uuid, other)); err != nil || kept != 1 {
		t.Fatalf("the other relation's settings: %d, %v", kept, err)
	}
}
