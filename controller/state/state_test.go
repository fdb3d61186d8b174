package state_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

var st *state.State

// One real embedded etcd for the package; each test works in its own model.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "state-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := store.StartEmbedded(context.Background(), dir, store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st = state.New(s.Client)
	code := m.Run()
	s.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

const wordpressMeta = `name: wordpress
summary: blog
requires:
  db: mysql
provides:
  website: http
peers:
  cluster: wordpress-peers
bases: [ubuntu@22.04, ubuntu@24.04]
`

const loggingMeta = `name: logging
summary: logs
subordinate: true
requires:
  juju-info:
    interface: juju-info
    scope: container
bases: [ubuntu@22.04]
`

func charmZip(t *testing.T, meta string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(meta)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var modelSeq int

func newModel(t *testing.T, cons string) string {
	t.Helper()
	modelSeq++
	m, err := st.AddModel(context.Background(), fmt.Sprintf("m%d-%d", modelSeq, time.Now().UnixNano()%100000), "admin", cons, "localhost", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	return m.Uuid
}

func deploy(t *testing.T, uuid, name, meta, cons string) *storepb.Application {
	t.Helper()
	ctx := context.Background()
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, meta))
	if err != nil {
		t.Fatal(err)
	}
	app, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: name, CharmURL: ch.Url, Base: "ubuntu@22.04", Constraints: cons})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func machineConstraints(t *testing.T, uuid string) []string {
	t.Helper()
	ms, err := st.Machines(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Constraints)
	}
	sort.Strings(out)
	return out
}

func TestAddCharmRevisionsGrow(t *testing.T) {
	uuid := newModel(t, "")
	ctx := context.Background()
	for want := int32(0); want < 3; want++ {
		ch, err := st.AddCharm(ctx, uuid, charmZip(t, wordpressMeta))
		if err != nil {
			t.Fatal(err)
		}
		if ch.Revision != want || ch.Url != fmt.Sprintf("local:wordpress-%d", want) {
			t.Fatalf("got %s rev %d, want rev %d", ch.Url, ch.Revision, want)
		}
	}
	if _, err := st.AddCharm(ctx, uuid, []byte("not a zip")); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("bad archive: got %v", err)
	}
}

func TestDeployCreatesPeerRelationWithApplication_LD2(t *testing.T) {
	uuid := newModel(t, "")
	app := deploy(t, uuid, "wordpress", wordpressMeta, "")
	snap, err := st.Snapshot(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Relations) != 1 || snap.Relations[0].Key != "wordpress:cluster" || snap.Relations[0].Endpoints[0].Role != "peer" {
		t.Fatalf("relations = %v", snap.Relations)
	}
	if app.RelationCount != 1 || snap.Applications[0].RelationCount != 1 {
		t.Fatalf("relation count = %d / %d", app.RelationCount, snap.Applications[0].RelationCount)
	}
	// Both were written by one transaction: their mod revisions are equal.
	resp, err := st.Client().Get(context.Background(), state.ModelPrefix(uuid)+"applications/wordpress")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := st.Client().Get(context.Background(), state.ModelPrefix(uuid)+"relations/0")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kvs[0].ModRevision != rel.Kvs[0].ModRevision {
		t.Fatalf("application rev %d, relation rev %d: not one transaction", resp.Kvs[0].ModRevision, rel.Kvs[0].ModRevision)
	}
}

func TestDeployNameInUse_LG5(t *testing.T) {
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	ch, err := st.AddCharm(context.Background(), uuid, charmZip(t, wordpressMeta))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Deploy(context.Background(), uuid, state.DeployArgs{Name: "wordpress", CharmURL: ch.Url, Base: "ubuntu@22.04"})
	if !errors.Is(err, apierr.AlreadyExists) || err.Error() != `cannot add application "wordpress": application already exists` {
		t.Fatalf("got %v", err)
	}
}

func TestDeployValidates(t *testing.T) {
	uuid := newModel(t, "")
	ch, err := st.AddCharm(context.Background(), uuid, charmZip(t, wordpressMeta))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args state.DeployArgs
		want string
	}{
		{state.DeployArgs{Name: "Bad", CharmURL: ch.Url, Base: "ubuntu@22.04"}, `invalid application name "Bad", unexpected uppercase character`},
		{state.DeployArgs{Name: "wp", CharmURL: ch.Url, Base: "ubuntu"}, `expected base string to contain os and channel separated by '@'`},
		{state.DeployArgs{Name: "wp", CharmURL: ch.Url, Base: "ubuntu@22.04", Constraints: "mem=lots"}, `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{state.DeployArgs{Name: "wp", CharmURL: "local:nope-0", Base: "ubuntu@22.04"}, `charm "local:nope-0" not found`},
	}
	for _, tt := range tests {
		if _, err := st.Deploy(context.Background(), uuid, tt.args); err == nil || err.Error() != tt.want {
			t.Errorf("Deploy(%+v) = %v, want %q", tt.args, err, tt.want)
		}
	}
	snap, err := st.Snapshot(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Applications) != 0 {
		t.Fatalf("failed deploys left applications: %v", snap.Applications)
	}
}

// The seed's example (rules L-C5).
func TestConstraintsCollapseAtUnitCreation_LC5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "mem=2G")
	if _, err := st.AddUnits(ctx, uuid, "wordpress", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.SetApplicationConstraints(ctx, uuid, "wordpress", "mem=3G"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddUnits(ctx, uuid, "wordpress", 2, nil); err != nil {
		t.Fatal(err)
	}
	got := machineConstraints(t, uuid)
	want := []string{"mem=2048M", "mem=3072M", "mem=3072M"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("machine constraints = %v, want %v", got, want)
	}
	u, err := st.Unit(ctx, uuid, "wordpress/0")
	if err != nil {
		t.Fatal(err)
	}
	if u.Constraints != "mem=2048M" {
		t.Fatalf("existing unit changed: %q", u.Constraints)
	}
}

func TestModelConstraintsFillApplication_LC2_LC3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "cores=2 mem=4G")
	deploy(t, uuid, "wordpress", wordpressMeta, "mem=1G")
	units, err := st.AddUnits(ctx, uuid, "wordpress", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.Unit(ctx, uuid, units[0])
	if err != nil {
		t.Fatal(err)
	}
	if u.Constraints != "cores=2 mem=1024M" {
		t.Fatalf("unit constraints = %q", u.Constraints)
	}
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{Constraints: "arch=amd64"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Machine(ctx, uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Constraints != "arch=amd64 cores=2 mem=4096M" || m.Base != "ubuntu@24.04" {
		t.Fatalf("machine = %q on %q", m.Constraints, m.Base)
	}
	// L-C2: later changes to the model touch no existing unit.
	if err := st.SetModelConstraints(ctx, uuid, "cores=8"); err != nil {
		t.Fatal(err)
	}
	if u, _ = st.Unit(ctx, uuid, units[0]); u.Constraints != "cores=2 mem=1024M" {
		t.Fatalf("unit changed with the model: %q", u.Constraints)
	}
}

func TestSubordinates_LD3_LD4_LC4(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, loggingMeta))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Deploy(ctx, uuid, state.DeployArgs{Name: "logging", CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 1})
	if err == nil || err.Error() != "cannot use --num-units or --to with subordinate application" {
		t.Fatalf("deploy -n 1 subordinate: %v", err)
	}
	_, err = st.Deploy(ctx, uuid, state.DeployArgs{Name: "logging", CharmURL: ch.Url, Base: "ubuntu@22.04", Constraints: "mem=1G"})
	if err == nil || err.Error() != "cannot use --constraints with subordinate application" {
		t.Fatalf("deploy --constraints subordinate: %v", err)
	}
	app, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "logging", CharmURL: ch.Url, Base: "ubuntu@22.04"})
	if err != nil || !app.Subordinate {
		t.Fatalf("deploy subordinate: %v %v", app, err)
	}
	_, err = st.AddUnits(ctx, uuid, "logging", 1, nil)
	if !errors.Is(err, apierr.NotSupported) || err.Error() != `cannot add unit to application "logging": application is a subordinate` {
		t.Fatalf("add-unit subordinate: %v", err)
	}
	if err := st.SetApplicationConstraints(ctx, uuid, "logging", "mem=1G"); err == nil {
		t.Fatal("constraints on a subordinate accepted")
	}
	if ms, _ := st.Machines(ctx, uuid); len(ms) != 0 {
		t.Fatalf("subordinate made machines: %v", ms)
	}
}

func TestPlacementOnExistingMachine_LM4_LC1(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	focal, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@20.04"})
	if err != nil {
		t.Fatal(err)
	}
	jammy, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.AddUnits(ctx, uuid, "wordpress", 1, []state.Placement{{Scope: "#", Directive: focal}})
	if !errors.Is(err, apierr.NotValid) {
		t.Fatalf("unit on a machine of another base: %v", err)
	}
	_, err = st.AddUnits(ctx, uuid, "wordpress", 1, []state.Placement{{Scope: "#", Directive: "42"}})
	if !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unit on a missing machine: %v", err)
	}
	units, err := st.AddUnits(ctx, uuid, "wordpress", 2, []state.Placement{{Scope: "#", Directive: jammy}, {Scope: "#", Directive: jammy}})
	if err != nil {
		t.Fatal(err)
	}
	on, err := st.MachineUnits(ctx, uuid, jammy)
	if err != nil {
		t.Fatal(err)
	}
	if len(on) != 2 || on[0].Name != units[0] {
		t.Fatalf("units on machine %s: %v", jammy, on)
	}
	if ms, _ := st.Machines(ctx, uuid); len(ms) != 2 {
		t.Fatalf("placement created machines: %d", len(ms))
	}
}

func TestConcurrentAddUnitsRetry_LG3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.AddUnits(ctx, uuid, "wordpress", 1, nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	snap, err := st.Snapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Units) != 8 || len(snap.Machines) != 8 {
		t.Fatalf("units %d, machines %d", len(snap.Units), len(snap.Machines))
	}
}

// 150 units in one add-unit call: one transaction, bounded by the call (limits), not the model.
func TestManyUnitsOneCall_LG4(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units, err := st.AddUnits(ctx, uuid, "wordpress", 150, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 150 || units[149] != "wordpress/149" {
		t.Fatalf("units = %d, last %s", len(units), units[len(units)-1])
	}
}

func TestBootstrapIsIdempotent(t *testing.T) {
	ctx := context.Background()
	args := state.BootstrapArgs{ControllerName: "test", AdminPasswordHash: state.HashPassword("secret"), Base: "ubuntu@24.04"}
	first, err := st.Bootstrap(ctx, args)
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.Bootstrap(ctx, args)
	if err != nil || second.Uuid != first.Uuid {
		t.Fatalf("second bootstrap: %v %v", second, err)
	}
	m, err := st.Model(ctx, state.ControllerModelName)
	if err != nil {
		t.Fatal(err)
	}
	m0, err := st.Machine(ctx, m.Uuid, "0")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(m0.Jobs) != "[manage-model host-units]" {
		t.Fatalf("machine 0 jobs = %v", m0.Jobs)
	}
	if _, err := st.Model(ctx, state.DefaultModelName); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddModel(ctx, state.DefaultModelName, "admin", "", "", ""); !errors.Is(err, apierr.AlreadyExists) {
		t.Fatalf("duplicate model: %v", err)
	}
}

func TestProvisioningErrorIsVisible_LM5(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{Constraints: "mem=9000G"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetProvisioningError(ctx, uuid, id, "cannot satisfy constraints: mem=9216000M (host has 24000M)"); err != nil {
		t.Fatal(err)
	}
	m, err := st.Machine(ctx, uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.InstanceId != "" || m.AgentStatus.Status != "pending" || m.InstanceStatus.Status != "provisioning error" ||
		m.InstanceStatus.Message != "cannot satisfy constraints: mem=9216000M (host has 24000M)" {
		t.Fatalf("machine = %v", m)
	}
}

func TestWatchSeesChangesAfterSubscribing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	prefix, err := state.KeyPrefix(uuid, state.KindMachine, "")
	if err != nil {
		t.Fatal(err)
	}
	events, err := st.NewHub(ctx).Subscribe(ctx, uuid, []state.WatchKey{{Key: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := firstEvent(events)
	if !ok {
		t.Fatal("no event")
	}
	if ev.Kind != state.KindMachine || ev.ID != id || ev.Removed {
		t.Fatalf("event = %+v", ev)
	}
}

// The hub's watch of a model lasts only while someone subscribes: a model nobody watches any
// more (a destroyed one) costs nothing, and a later subscriber starts a fresh watch.
func TestHubStopsWatchingAModelNobodyWatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	prefix, err := state.KeyPrefix(uuid, state.KindMachine, "")
	if err != nil {
		t.Fatal(err)
	}
	hub := st.NewHub(ctx)
	subCtx, unsubscribe := context.WithCancel(ctx)
	events, err := hub.Subscribe(subCtx, uuid, []state.WatchKey{{Key: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	if n := hub.WatchedModels(); n != 1 {
		t.Fatalf("watched models with a subscriber = %d", n)
	}
	unsubscribe()
	for range events.Events() { // ends once unsubscribed
	}
	for hub.WatchedModels() != 0 {
		if ctx.Err() != nil {
			t.Fatal("the model's watch outlived its last subscriber")
		}
		time.Sleep(time.Millisecond)
	}

	events, err = hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := firstEvent(events)
	if !ok {
		t.Fatal("no event after subscribing again")
	}
	if ev.ID != id {
		t.Fatalf("event = %+v", ev)
	}
}
