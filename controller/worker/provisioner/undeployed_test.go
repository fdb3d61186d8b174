package provisioner_test

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
	"github.com/jujuclone/juju/core/life"
)

// L-M5, L-U6, L-F2: a dying application's units on machines whose provisioning failed have no
// agent to follow it; the provisioner removes them, the last one takes the application, and the
// machines stay, alive with their errors, until someone removes them.
func TestUndeployedUnitsOfDyingApplicationRemoved_LM5_LU6(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 0)
	if err := st.SetApplicationConstraints(ctx, uuid, "wordpress", "mem=9000G"); err != nil {
		t.Fatal(err)
	}
	units, err := st.AddUnits(ctx, uuid, "wordpress", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	machines := map[string]bool{}
	for _, u := range units {
		unit, err := st.Unit(ctx, uuid, u)
		if err != nil {
			t.Fatal(err)
		}
		machines[unit.MachineId] = true
	}
	failed := func() bool {
		for id := range machines {
			if m := workertest.Machine(workertest.Snapshot(t, st, uuid), id); m == nil || m.ProvisioningError == "" {
				return false
			}
		}
		return true
	}
	workertest.Eventually(t, "provisioning errors", failed)
	if _, err := st.DestroyApplication(ctx, uuid, "wordpress", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "application gone", func() bool {
		return workertest.App(workertest.Snapshot(t, st, uuid), "wordpress") == nil
	})
	for id := range machines {
		if _, l, found := machine(t, uuid, id); !found || l != string(life.Alive) {
			t.Fatalf("machine %s: found %v, life %s", id, found, l)
		}
	}
	if problems, err := st.Audit(ctx, uuid); err != nil || len(problems) > 0 {
		t.Fatalf("audit: %v %v", problems, err)
	}
}
