package state_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

func removeUndeployed(t *testing.T, uuid, machine string, want ...string) {
	t.Helper()
	got, err := st.RemoveUndeployedUnits(context.Background(), uuid, machine)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("remove undeployed units of machine %s: %v %v; want %v", machine, got, err, want)
	}
	audit(t, uuid)
}

func machineOf(t *testing.T, uuid, unit string) string {
	t.Helper()
	u, err := st.Unit(context.Background(), uuid, unit)
	if err != nil {
		t.Fatal(err)
	}
	return u.MachineId
}

// L-M5, L-U6, L-A3, L-F2: units on machines without an instance have no agent to follow their
// dying application; the provisioner removes them (RemoveUndeployedUnits), one transaction each,
// and the last unit out, deployed or not, takes the application.
func TestRemoveUndeployedUnitsOfDyingApplication_LM5_LU6_LF2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	undeployed, err := st.AddUnits(ctx, uuid, "wordpress", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed, pending := machineOf(t, uuid, undeployed[0]), machineOf(t, uuid, undeployed[1])
	if err := st.SetProvisioningError(ctx, uuid, failed, "cannot satisfy constraints"); err != nil {
		t.Fatal(err)
	}
	deployed := addUnits(t, uuid, "wordpress", 1)
	rel, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	if err != nil {
		t.Fatal(err)
	}
	enter(t, uuid, rel.Id, deployed[0])

	// Alive units of an alive application wait for their machine, however long.
	removeUndeployed(t, uuid, failed)
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	removeUndeployed(t, uuid, failed, undeployed[0])
	// The deployed unit is its agents' business, whoever asks.
	if removed, err := st.RemoveUndeployedUnit(ctx, uuid, deployed[0]); err != nil || removed {
		t.Fatalf("deployed unit: %v %v", removed, err)
	}
	removeUndeployed(t, uuid, machineOf(t, uuid, deployed[0]))
	if _, err := st.SetUnitDying(ctx, uuid, deployed[0]); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, deployed[0])
	// The last unit, on a machine still waiting for its instance, takes the application.
	removeUndeployed(t, uuid, pending, undeployed[1])
	if _, err := st.Application(ctx, uuid, "wordpress"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("application after its last unit: %v", err)
	}
	// Only the relations' settings cleanups are left, for the cleaner (L-R7).
	left, err := st.Remaining(ctx, uuid)
	if err != nil || slices.ContainsFunc(left, func(s string) bool { return !strings.HasPrefix(s, "cleanup ") }) {
		t.Fatalf("remaining: %v %v", left, err)
	}
	// Nothing holds the machines any more (L-M1).
	for _, id := range []string{failed, pending} {
		if res, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{}); err != nil || res.Outcome != state.OutcomeDying {
			t.Fatalf("destroy machine %s: %+v %v", id, res, err)
		}
	}
	audit(t, uuid)
}

// L-M5, L-F2: a unit whose machine got an instance meanwhile is its machine agent's to deploy
// and remove; a unit that is itself not alive goes, whatever its application, and until then
// status says what it waits for; units still wanted stay.
func TestRemoveUndeployedUnitsLeavesDeployable_LM5_LF2(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	units, err := st.AddUnits(ctx, uuid, "mysql", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	provisioned := machineOf(t, uuid, units[0])
	if err := st.SetProvisioned(ctx, uuid, provisioned, state.Instance{ID: "i-" + provisioned}, "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyApplication(ctx, uuid, "mysql", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	removeUndeployed(t, uuid, provisioned)
	if removed, err := st.RemoveUndeployedUnit(ctx, uuid, units[0]); err != nil || removed {
		t.Fatalf("unit on a provisioned machine: %v %v", removed, err)
	}

	deploy(t, uuid, "wordpress", wordpressMeta, "")
	wp, err := st.AddUnits(ctx, uuid, "wordpress", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	target := machineOf(t, uuid, wp[0])
	if _, err := st.AddUnits(ctx, uuid, "wordpress", 1, []state.Placement{{Scope: "#", Directive: target}}); err != nil {
		t.Fatal(err)
	}
	// Dying without an agent to take it further (as a forced removal leaves it): status says
	// who will (L-F2).
	if l, err := st.SetUnitDying(ctx, uuid, wp[0]); err != nil || l != "dying" {
		t.Fatalf("set dying: %q %v", l, err)
	}
	blockedBy := func(want string) {
		t.Helper()
		snap, err := st.Snapshot(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		if got := snap.Blockers().Units[wp[0]]; !slices.Equal(got, []string{want}) {
			t.Fatalf("%s blocked by %q; want %q", wp[0], got, want)
		}
	}
	blockedBy("never deployed; waiting for machine " + target + " to be provisioned")
	if err := st.SetProvisioningError(ctx, uuid, target, "cannot satisfy constraints"); err != nil {
		t.Fatal(err)
	}
	blockedBy("never deployed (machine " + target + " has no instance); waiting for the provisioner to remove it")
	removeUndeployed(t, uuid, target, wp[0])
	if a, err := st.Application(ctx, uuid, "wordpress"); err != nil || a.Life != "alive" {
		t.Fatalf("wordpress: %v %v", a, err)
	}
	removeUndeployed(t, uuid, machineOf(t, uuid, wp[1]))
}
