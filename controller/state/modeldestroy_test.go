package state_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// drain runs one model remover pass and fails the test on error.
func drain(t *testing.T, uuid string) state.Drain {
	t.Helper()
	d, err := st.DrainModel(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// modelName returns the name of a model.
func modelName(t *testing.T, uuid string) string {
	t.Helper()
	m, err := st.Model(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	return m.Name
}

// machineGoes plays a dying machine's agent and the provisioner (L-M2, L-M3).
func machineGoes(t *testing.T, uuid, id string) {
	t.Helper()
	ctx := context.Background()
	if l, err := st.EnsureMachineDead(ctx, uuid, id); err != nil || l != "dead" {
		t.Fatalf("machine %s dead: %q %v", id, l, err)
	}
	if err := st.RemoveMachine(ctx, uuid, id); err != nil {
		t.Fatal(err)
	}
}

// assertModelGone checks that nothing of the model is left: its documents, charm archives and
// name, and that the name can be used again.
func assertModelGone(t *testing.T, uuid, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Model(ctx, name); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("model %q after removal: %v", name, err)
	}
	for _, prefix := range []string{state.ModelPrefix(uuid), "/juju/charmblobs/" + uuid + "/", "/juju/modelnames/" + name} {
		resp, err := st.Client().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 0 {
			t.Errorf("%d keys left under %s", resp.Count, prefix)
		}
	}
	models, err := st.ListModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		if m.Model.Uuid == uuid {
			t.Errorf("ListModels still shows %q", name)
		}
	}
	again, err := st.AddModel(ctx, name, "admin", "", "localhost", "localhost")
	if err != nil || again.Uuid == uuid {
		t.Fatalf("name %q not free again: %v %v", name, again, err)
	}
}

// The whole way: destroy-model makes the model dying in one small transaction; the passes
// destroy its applications (L-A1), the agents take the units (L-U6, L-U3), the freed machines
// are destroyed (L-M1) and go (L-M2, L-M3), and then the model goes.
func TestDestroyModelDrainsThenRemoves_LG4(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	name := modelName(t, uuid)
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	units := addUnits(t, uuid, "wordpress", 2)
	rel, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql"))
	if err != nil {
		t.Fatal(err)
	}
	spare, err := st.AddMachine(ctx, uuid, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	peer := int64(0) // wordpress:cluster, created with the application
	enter(t, uuid, peer, units...)
	enter(t, uuid, rel.Id, units[0])

	before, err := st.Client().Get(ctx, state.ModelPrefix(uuid), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.DestroyModel(ctx, name, state.DestroyModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v %v %v %s", res.Applications, res.Units, res.Machines, res.Outcome); got != "[mysql wordpress] [wordpress/0 wordpress/1] [0 1 2] dying" {
		t.Fatalf("destroy = %s", got)
	}
	// L-G4: one transaction of two keys, whatever the model holds.
	after, err := st.Client().Get(ctx, state.ModelPrefix(uuid), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if after.Header.Revision != before.Header.Revision+1 {
		t.Fatalf("destroy took %d revisions", after.Header.Revision-before.Header.Revision)
	}
	changed := 0
	for _, kv := range after.Kvs {
		if kv.ModRevision == after.Header.Revision {
			changed++
		}
	}
	if changed != 2 {
		t.Fatalf("destroy wrote %d keys, want the model document and its destruction key", changed)
	}
	if m, _ := st.Model(ctx, uuid); m.Life != "dying" {
		t.Fatalf("model life = %q", m.Life)
	}

	d := drain(t, uuid)
	if !d.Dying || d.Removed || d.Applications != 2 || d.Units != 2 || d.Machines != 3 {
		t.Fatalf("first pass = %+v", d)
	}
	// Both dying: mysql stays while wordpress/0 is in their relation's scope (L-A1, L-R4).
	snap, _ := st.Snapshot(ctx, uuid)
	for _, app := range snap.Applications {
		if app.Life != "dying" {
			t.Errorf("application %s is %s", app.Name, app.Life)
		}
	}
	for _, m := range snap.Machines {
		want := "alive"
		if m.Id == spare {
			want = "dying" // hosts nothing: destroyed at once
		}
		if m.Life != want {
			t.Errorf("machine %s is %s, want %s", m.Id, m.Life, want)
		}
	}
	audit(t, uuid)
	machineGoes(t, uuid, spare)

	// The unit agents follow their application (L-U6) and leave (L-U2, L-U3).
	for _, u := range units {
		if _, err := st.SetUnitDying(ctx, uuid, u); err != nil {
			t.Fatal(err)
		}
		unitGoes(t, uuid, u)
	}
	d = drain(t, uuid)
	if d.Applications != 0 || d.Units != 0 || d.Machines != 2 || d.Removed {
		t.Fatalf("second pass = %+v", d)
	}
	snap, _ = st.Snapshot(ctx, uuid)
	for _, m := range snap.Machines {
		if m.Life != "dying" {
			t.Errorf("freed machine %s is %s", m.Id, m.Life)
		}
		machineGoes(t, uuid, m.Id)
	}
	if d := drain(t, uuid); !d.Removed {
		t.Fatalf("last pass = %+v", d)
	}
	assertModelGone(t, uuid, name)
	if d := drain(t, uuid); !d.Removed {
		t.Fatalf("pass after removal = %+v", d)
	}
}

// Nothing can be added to a dying model.
func TestDyingModelRefusesAdditions(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	name := modelName(t, uuid)
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, mysqlMeta))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("model %q is being destroyed", name)
	for what, err := range map[string]error{
		"deploy": func() error {
			_, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "db2", CharmURL: ch.Url, Base: "ubuntu@22.04"})
			return err
		}(),
		"add-unit": func() error { _, err := st.AddUnits(ctx, uuid, "wordpress", 1, nil); return err }(),
		"add-machine": func() error {
			_, err := st.AddMachine(ctx, uuid, state.MachineParams{})
			return err
		}(),
		"integrate": func() error { _, err := st.Integrate(ctx, uuid, spec("wordpress"), spec("mysql")); return err }(),
		"add-charm": func() error { _, err := st.AddCharm(ctx, uuid, charmZip(t, mysqlMeta)); return err }(),
	} {
		if !errors.Is(err, apierr.NotAlive) || err.Error() != want {
			t.Errorf("%s in a dying model: %v, want %q", what, err, want)
		}
	}
}

// The controller model cannot be destroyed: by name, or because its machine 0 manages it.
func TestDestroyControllerModelRefused(t *testing.T) {
	ctx := context.Background()
	if _, err := st.Bootstrap(ctx, state.BootstrapArgs{ControllerName: "test", AdminPasswordHash: state.HashPassword("secret"), Base: "ubuntu@24.04"}); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []state.DestroyModelOptions{{DryRun: true}, {}} {
		_, err := st.DestroyModel(ctx, state.ControllerModelName, opts)
		if !errors.Is(err, state.ErrControllerModel) || !strings.Contains(err.Error(), "juju kill-controller") {
			t.Fatalf("destroy controller model (%+v): %v", opts, err)
		}
	}
	if m, _ := st.Model(ctx, state.ControllerModelName); m.Life != "alive" {
		t.Fatalf("controller model is %s", m.Life)
	}

	// Another model whose machine 0 manages the controller (written by hand: only bootstrap
	// makes one).
	uuid := newModel(t, "")
	data, err := proto.Marshal(&storepb.Machine{Id: "0", Life: "alive", Jobs: []string{state.JobManageModel, state.JobHostUnits}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().Put(ctx, state.ModelPrefix(uuid)+"machines/0", string(data)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{}); !errors.Is(err, state.ErrControllerModel) {
		t.Fatalf("destroy a model with a manage-model machine: %v", err)
	}
	if _, err := st.DestroyModel(ctx, "no-such-model", state.DestroyModelOptions{}); !errors.Is(err, apierr.NotFound) ||
		err.Error() != `model "no-such-model" not found` {
		t.Fatalf("unknown model: %v", err)
	}
}

// A dry run reports and changes nothing.
func TestDestroyModelDryRun(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	addUnits(t, uuid, "wordpress", 2)
	rev, _ := st.Revision(ctx)
	res, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v %v %v %s %v", res.Applications, res.Units, res.Machines, res.Outcome, res.UUID == uuid); got != "[wordpress] [wordpress/0 wordpress/1] [0 1] dying true" {
		t.Fatalf("dry run = %s", got)
	}
	if after, _ := st.Revision(ctx); after != rev {
		t.Fatalf("dry run wrote: revision %d -> %d", rev, after)
	}
	if d := drain(t, uuid); d.Dying {
		t.Fatalf("alive model drained: %+v", d)
	}
}

// Destroying a dying model is not an error (L-G2); with --force it brings the deadline forward,
// and the next pass hands it to what is already dying (L-F1).
func TestDestroyModelIdempotentMayAddForce_LF1(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	drain(t, uuid)
	snap, _ := st.Snapshot(ctx, uuid)
	if app := snap.Applications[0]; app.Life != "dying" || app.ForceAfter != 0 {
		t.Fatalf("application = %v", app)
	}
	res, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{})
	if err != nil || res.Outcome != state.OutcomeNone {
		t.Fatalf("second destroy: %+v %v", res, err)
	}
	res, err = st.DestroyModel(ctx, uuid, state.DestroyModelOptions{ForceAfter: 5000})
	if err != nil || res.Outcome != state.OutcomeNone || fmt.Sprint(res.Units) != fmt.Sprint(units) {
		t.Fatalf("forced destroy: %+v %v", res, err)
	}
	// A later deadline does not push back an earlier one.
	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{ForceAfter: 9000}); err != nil {
		t.Fatal(err)
	}
	drain(t, uuid)
	snap, _ = st.Snapshot(ctx, uuid)
	if app := snap.Applications[0]; app.ForceAfter != 5000 {
		t.Errorf("application force after = %d, want 5000", app.ForceAfter)
	}
	// With force, a machine that still hosts units goes dying too: the force worker removes
	// its units first.
	if m := snap.Machines[0]; m.Life != "dying" || m.ForceAfter != 5000 {
		t.Errorf("machine = %v", m)
	}
	for _, u := range units {
		if err := st.ForceRemoveUnit(ctx, uuid, u, 5000); err != nil {
			t.Fatal(err)
		}
	}
	machineGoes(t, uuid, snap.Machines[0].Id)
	if d := drain(t, uuid); !d.Removed {
		t.Fatalf("last pass = %+v", d)
	}
	audit(t, uuid)
}

// Units whose machine never got an instance have no agent: the pass removes them at once
// (L-M5), and their machines with them (L-M1).
func TestDrainRemovesUndeployedUnits_LM5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	name := modelName(t, uuid)
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	if _, err := st.AddUnits(ctx, uuid, "wordpress", 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyModel(ctx, name, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	d := drain(t, uuid)
	if d.Units != 0 || d.Applications != 0 || d.Machines != 3 {
		t.Fatalf("pass = %+v", d)
	}
	audit(t, uuid)
	for _, id := range []string{"0", "1", "2"} {
		machineGoes(t, uuid, id)
	}
	if d := drain(t, uuid); !d.Removed {
		t.Fatalf("last pass = %+v", d)
	}
	assertModelGone(t, uuid, name)
}

// More applications and machines than one page: every page is visited (the listings are
// bounded, L-G4), and leftovers (charms, sequences, cleanups) go with the model.
func TestDrainVisitsEveryPage_LG4(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	name := modelName(t, uuid)
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, mysqlMeta))
	if err != nil {
		t.Fatal(err)
	}
	const n = 140
	for i := range n {
		if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: fmt.Sprintf("db%d", i), CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddMachine(ctx, uuid, state.MachineParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	d := drain(t, uuid)
	if d.Applications != 0 || d.Machines != n {
		t.Fatalf("pass = %+v", d)
	}
	ms, err := st.Machines(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Life != "dying" {
			t.Fatalf("machine %s is %s", m.Id, m.Life)
		}
		machineGoes(t, uuid, m.Id)
	}
	if d := drain(t, uuid); !d.Removed {
		t.Fatalf("last pass = %+v", d)
	}
	assertModelGone(t, uuid, name)
}
