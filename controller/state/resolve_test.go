package state_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// failHook plays the unit agent after a failed hook: workload error, agent idle (as in Juju).
func failHook(t *testing.T, uuid, unit, message string) {
	t.Helper()
	err := st.SetUnitStatus(context.Background(), uuid, unit, state.UnitStatus{
		Agent:    &storepb.Status{Status: "idle"},
		Workload: &storepb.Status{Status: "error", Message: message},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestResolveUnit_LU2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 3)

	if _, err := st.ResolveUnit(ctx, uuid, units[0], true); !errors.Is(err, apierr.NotValid) ||
		err.Error() != `unit "wordpress/0" is not in an error state` {
		t.Fatalf("not in error: %v", err)
	}
	if _, err := st.ResolveUnit(ctx, uuid, "wordpress/9", true); !errors.Is(err, apierr.NotFound) ||
		err.Error() != `unit "wordpress/9" not found` {
		t.Fatalf("unknown unit: %v", err)
	}

	failHook(t, uuid, units[0], `hook failed: "install"`)
	failHook(t, uuid, units[1], `hook failed: "db-relation-changed" for mysql:db`)
	failHook(t, uuid, units[2], "something odd")
	inError, err := st.UnitsInError(ctx, uuid)
	if err != nil || strings.Join(inError, " ") != strings.Join(units, " ") {
		t.Fatalf("units in error: %v %v", inError, err)
	}

	next, err := st.ResolveUnit(ctx, uuid, units[0], true)
	if err != nil || next != `will re-run "install" hook` {
		t.Fatalf("retry: %q %v", next, err)
	}
	next, err = st.ResolveUnit(ctx, uuid, units[1], false)
	if err != nil || next != `will skip "db-relation-changed" hook` {
		t.Fatalf("no retry: %q %v", next, err)
	}
	next, err = st.ResolveUnit(ctx, uuid, units[2], false)
	if err != nil || next != "will skip the failed hook" {
		t.Fatalf("no hook named: %q %v", next, err)
	}
	if _, err := st.ResolveUnit(ctx, uuid, units[0], false); !errors.Is(err, apierr.NotValid) ||
		err.Error() != `unit "wordpress/0" is already resolved` {
		t.Fatalf("twice: %v", err)
	}
	for unit, want := range map[string]string{units[0]: "retry", units[1]: "no-retry"} {
		if u, _ := st.Unit(ctx, uuid, unit); u.Resolved != want {
			t.Errorf("%s resolved = %q, want %q", unit, u.Resolved, want)
		}
	}

	// The agent acts on it and clears the mark; clearing again writes nothing.
	if err := st.ClearResolved(ctx, uuid, units[0]); err != nil {
		t.Fatal(err)
	}
	before, _ := st.Client().Get(ctx, state.ModelPrefix(uuid)+"units/"+units[0])
	if err := st.ClearResolved(ctx, uuid, units[0]); err != nil {
		t.Fatal(err)
	}
	after, _ := st.Client().Get(ctx, state.ModelPrefix(uuid)+"units/"+units[0])
	if before.Kvs[0].ModRevision != after.Kvs[0].ModRevision {
		t.Error("clearing an absent mark wrote the unit")
	}
	if u, _ := st.Unit(ctx, uuid, units[0]); u.Resolved != "" {
		t.Errorf("resolved = %q after clearing", u.Resolved)
	}
	if err := st.ClearResolved(ctx, uuid, "wordpress/9"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("clear unknown: %v", err)
	}
}

// L-U2, L-F2: a dying unit stuck on a failed hook, and what waits for it, say so.
func TestBlockersShowFailedHook_LU2_LF2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	w := addUnits(t, uuid, "wordpress", 1)
	m := addUnits(t, uuid, "mysql", 1)
	rel, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	if err != nil {
		t.Fatal(err)
	}
	enter(t, uuid, rel.Id, w[0], m[0])
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetUnitDying(ctx, uuid, w[0]); err != nil {
		t.Fatal(err)
	}
	failHook(t, uuid, w[0], `hook failed: "db-relation-departed" for mysql:db`)
	failHook(t, uuid, m[0], `hook failed: "db-relation-departed" for wordpress:db`)

	b := blockersOf(t, uuid)
	wantUnit := `hook failed: "db-relation-departed" for mysql:db (run juju resolved wordpress/0)`
	if got := b.Units[w[0]]; len(got) == 0 || got[0] != wantUnit {
		t.Errorf("unit blockers = %q", got)
	}
	wantApp := "unit wordpress/0: " + wantUnit
	if got := b.Applications["wordpress"]; len(got) < 2 || got[1] != wantApp {
		t.Errorf("application blockers = %q", got)
	}
	wantRel := []string{
		"waiting for 2 units to leave its scope: mysql/0, wordpress/0",
		`unit mysql/0: hook failed: "db-relation-departed" for wordpress:db (run juju resolved mysql/0)`,
		wantApp,
	}
	if got := b.Relations[rel.Id]; strings.Join(got, "|") != strings.Join(wantRel, "|") {
		t.Errorf("relation blockers:\n got %q\nwant %q", got, wantRel)
	}

	// Resolved, it waits for its agent instead.
	if _, err := st.ResolveUnit(ctx, uuid, w[0], true); err != nil {
		t.Fatal(err)
	}
	b = blockersOf(t, uuid)
	if got := b.Units[w[0]]; len(got) == 0 || got[0] != `hook failed: "db-relation-departed" for mysql:db (resolved; waiting for its agent to retry the hook)` {
		t.Errorf("resolved unit blockers = %q", got)
	}
}

// A dying machine waits for a unit whose stop hook failed.
func TestMachineBlockerShowsFailedHook_LF2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	w := addUnits(t, uuid, "wordpress", 1)
	u, _ := st.Unit(ctx, uuid, w[0])
	if _, err := st.DestroyMachine(ctx, uuid, u.MachineId, state.DestroyOptions{ForceAfter: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyUnit(ctx, uuid, w[0], state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	failHook(t, uuid, w[0], `hook failed: "stop"`)
	b := blockersOf(t, uuid)
	want := []string{"waiting for 1 unit to be removed: wordpress/0", `unit wordpress/0: hook failed: "stop" (run juju resolved wordpress/0)`}
	if got := b.Machines[u.MachineId]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("machine blockers = %q", got)
	}
	if got := b.Units[w[0]]; strings.Join(got, "|") != `hook failed: "stop" (run juju resolved wordpress/0)` {
		t.Errorf("unit blockers = %q", got)
	}
}

func blockersOf(t *testing.T, uuid string) state.Blockers {
	t.Helper()
	snap, err := st.Snapshot(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Blockers()
}

// L-M5, seed 002: a machine whose provisioning failed is made eligible again, optionally with
// new constraints.
func TestRetryProvisioning_LM5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{Constraints: "mem=9000G"})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := st.AddMachine(ctx, uuid, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RetryProvisioning(ctx, uuid, id, "", false); !errors.Is(err, apierr.NotValid) ||
		err.Error() != "machine "+id+" is not in an error state" {
		t.Fatalf("no error yet: %v", err)
	}
	if err := st.SetProvisioningError(ctx, uuid, id, "cannot satisfy constraints: mem=9216000M (host has 24000M)"); err != nil {
		t.Fatal(err)
	}
	if list, err := st.MachinesWithProvisioningErrors(ctx, uuid); err != nil || strings.Join(list, ",") != id {
		t.Fatalf("machines in error: %v %v", list, err)
	}
	if err := st.RetryProvisioning(ctx, uuid, id, "mem=lots", true); !errors.Is(err, apierr.NotValid) ||
		err.Error() != `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix` {
		t.Fatalf("bad constraints: %v", err)
	}
	if err := st.RetryProvisioning(ctx, uuid, "42", "", false); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unknown machine: %v", err)
	}
	if err := st.RetryProvisioning(ctx, uuid, id, "mem=1G cores=1", true); err != nil {
		t.Fatal(err)
	}
	m, err := st.Machine(ctx, uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.ProvisioningError != "" || m.Constraints != "cores=1 mem=1024M" || m.AgentStatus.Status != "pending" ||
		m.InstanceStatus.Status != "pending" || m.InstanceStatus.Message != "" {
		t.Fatalf("machine = %v", m)
	}
	if err := st.RetryProvisioning(ctx, uuid, id, "", false); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("retry twice: %v", err)
	}
	// Without replacing, the constraints stay.
	if err := st.SetProvisioningError(ctx, uuid, id, "boom"); err != nil {
		t.Fatal(err)
	}
	if err := st.RetryProvisioning(ctx, uuid, id, "", false); err != nil {
		t.Fatal(err)
	}
	if m, _ := st.Machine(ctx, uuid, id); m.Constraints != "cores=1 mem=1024M" {
		t.Fatalf("constraints changed: %q", m.Constraints)
	}
	// A machine that is not alive is not retried.
	if err := st.SetProvisioningError(ctx, uuid, ok, "boom"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyMachine(ctx, uuid, ok, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.RetryProvisioning(ctx, uuid, ok, "", false); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("dying machine: %v", err)
	}
	if list, _ := st.MachinesWithProvisioningErrors(ctx, uuid); len(list) != 0 {
		t.Fatalf("machines in error: %v", list)
	}
}

// L-M5: a unit whose machine has no instance (here: a provisioning error) goes at once, and
// so does its machine once removed.
func TestRemoveUnitOnFailedMachineAtOnce_LM5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "mem=9000G")
	units, err := st.AddUnits(ctx, uuid, "wordpress", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := st.Unit(ctx, uuid, units[0])
	if err := st.SetProvisioningError(ctx, uuid, u.MachineId, "cannot satisfy constraints"); err != nil {
		t.Fatal(err)
	}
	if u.AgentStatus.Status != "allocating" || u.WorkloadStatus.Status != "waiting" || u.WorkloadStatus.Message != "waiting for machine" {
		t.Fatalf("unit status: %v %v", u.AgentStatus, u.WorkloadStatus)
	}
	res, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{})
	if err != nil || res.Outcome != state.OutcomeRemoved {
		t.Fatalf("destroy unit: %+v %v", res, err)
	}
	if res, err := st.DestroyMachine(ctx, uuid, u.MachineId, state.DestroyOptions{}); err != nil || res.Outcome != state.OutcomeDying {
		t.Fatalf("destroy machine: %+v %v", res, err)
	}
	audit(t, uuid)
}
