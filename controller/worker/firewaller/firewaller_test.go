package firewaller_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/firewaller"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
)

var st *state.State

func TestMain(m *testing.M) { workertest.Main(m, &st) }

// recorder is the provider: the rules last recorded per instance.
type recorder struct {
	mu    sync.Mutex
	rules map[string]string
}

func (r *recorder) SetIngressRules(instanceID, machineID string, rules []local.IngressRule) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules[instanceID] = machineID + " " + fmt.Sprint(rules)
	return nil
}

func (r *recorder) get(instanceID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rules[instanceID]
}

func runWorker(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{rules: map[string]string{}}
	w := firewaller.New(st, rec, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
			t.Error("firewaller did not stop")
		}
	})
	return rec
}

// The ingress rules a firewall would have: the ports open on units of exposed applications,
// a subordinate's on its principal's machine, from the union of the application's rules'
// CIDRs (a space standing for its subnet); nothing for an application not exposed.
func TestIngressRules(t *testing.T) {
	snap := &state.Snapshot{
		Applications: []*storepb.Application{
			{Name: "web", Exposed: true, ExposedEndpoints: []*storepb.ExposedEndpointDoc{
				{ToCidrs: []string{"0.0.0.0/0", "::/0"}},
				{Endpoint: "admin", ToSpaces: []string{"alpha"}, ToCidrs: []string{"10.0.0.0/8"}},
			}},
			{Name: "db"},
			{Name: "logging", Exposed: true, ExposedEndpoints: []*storepb.ExposedEndpointDoc{{ToCidrs: []string{"192.168.0.0/16"}}}},
		},
		Units: []*storepb.Unit{
			{Name: "web/0", Application: "web", MachineId: "0", OpenPorts: []string{"443/tcp", "80/tcp"}},
			{Name: "web/1", Application: "web", MachineId: "1"},
			{Name: "db/0", Application: "db", MachineId: "0", OpenPorts: []string{"3306/tcp"}},
			{Name: "logging/0", Application: "logging", Principal: "db/0", OpenPorts: []string{"80/tcp", "514/udp"}},
		},
	}
	got := fmt.Sprint(firewaller.IngressRules(snap))
	want := "map[0:[{443/tcp [0.0.0.0/0 10.0.0.0/8 127.0.0.0/8 ::/0]} {514/udp [192.168.0.0/16]} " +
		"{80/tcp [0.0.0.0/0 10.0.0.0/8 127.0.0.0/8 192.168.0.0/16 ::/0]}]]"
	if got != want {
		t.Errorf("rules %s\nwant  %s", got, want)
	}
}

// The worker records each provisioned machine's rules and follows expose, unexpose and
// open-port.
func TestFirewallerRecords(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	units := workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 1)
	snap := workertest.Snapshot(t, st, uuid)
	machine := workertest.Unit(snap, units[0]).MachineId
	if err := st.SetProvisioned(ctx, uuid, machine, state.Instance{ID: "inst-" + uuid[:6]}, "hash"); err != nil {
		t.Fatal(err)
	}
	inst := "inst-" + uuid[:6]
	rec := runWorker(t)
	expect := func(what, want string) {
		t.Helper()
		workertest.Eventually(t, what, func() bool { return rec.get(inst) == want })
	}
	expect("no rules", machine+" []")
	if _, err := st.SetUnitPorts(ctx, uuid, units[0], []string{"3306/tcp"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.ExposeApplication(ctx, uuid, "mysql", []*storepb.ExposedEndpointDoc{{ToCidrs: []string{"10.0.0.0/8"}}}); err != nil {
		t.Fatal(err)
	}
	expect("exposed", machine+" [{3306/tcp [10.0.0.0/8]}]")
	if _, err := st.SetUnitPorts(ctx, uuid, units[0], []string{"8080/tcp"}, nil); err != nil {
		t.Fatal(err)
	}
	expect("port opened", machine+" [{3306/tcp [10.0.0.0/8]} {8080/tcp [10.0.0.0/8]}]")
	if err := st.UnexposeApplication(ctx, uuid, "mysql", nil); err != nil {
		t.Fatal(err)
	}
	expect("unexposed", machine+" []")
}

// Started on a model, the worker follows each change by the machines it touches: a machine
// provisioned afterwards gets its rules, a subordinate's port counts on its principal's
// machine, and exposing a subordinate application reaches its principals' machines.
func TestFirewallerFollowsChangedMachines(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	rec := runWorker(t)
	units := workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 2)
	workertest.Deploy(t, st, uuid, "logging", workertest.LoggingMeta, 0)
	snap := workertest.Snapshot(t, st, uuid)
	var machines, insts []string
	for i, u := range units {
		machine := workertest.Unit(snap, u).MachineId
		inst := fmt.Sprintf("inst-%s-%d", uuid[:6], i)
		if err := st.SetProvisioned(ctx, uuid, machine, state.Instance{ID: inst}, "hash"); err != nil {
			t.Fatal(err)
		}
		machines, insts = append(machines, machine), append(insts, inst)
	}
	expect := func(i int, what, want string) {
		t.Helper()
		workertest.Eventually(t, what, func() bool { return rec.get(insts[i]) == machines[i]+" "+want })
	}
	expect(0, "provisioned machine recorded", "[]")
	expect(1, "provisioned machine recorded", "[]")

	logRel := workertest.Integrate(t, st, uuid, "logging", "wordpress")
	sub := workertest.EnterScope(t, st, uuid, logRel, units[0])
	if sub == "" {
		t.Fatal("no subordinate created")
	}
	if _, err := st.SetUnitPorts(ctx, uuid, sub, []string{"514/udp"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.ExposeApplication(ctx, uuid, "logging", []*storepb.ExposedEndpointDoc{{ToCidrs: []string{"10.0.0.0/8"}}}); err != nil {
		t.Fatal(err)
	}
	expect(0, "subordinate's port on its principal's machine", "[{514/udp [10.0.0.0/8]}]")
	if _, err := st.SetUnitPorts(ctx, uuid, units[1], []string{"80/tcp"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.ExposeApplication(ctx, uuid, "wordpress", []*storepb.ExposedEndpointDoc{{ToCidrs: []string{"0.0.0.0/0"}}}); err != nil {
		t.Fatal(err)
	}
	expect(1, "principal's port", "[{80/tcp [0.0.0.0/0]}]")
	expect(0, "machine of the subordinate unchanged", "[{514/udp [10.0.0.0/8]}]")
}
