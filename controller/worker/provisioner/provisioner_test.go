package provisioner_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
	"github.com/jujuclone/juju/controller/worker/provisioner"
	"github.com/jujuclone/juju/core/life"
)

var st *state.State

func TestMain(m *testing.M) { workertest.Main(m, &st) }

// fakeProvider records calls; any constraints at all are more than it can satisfy.
type fakeProvider struct {
	mu                                   sync.Mutex
	started, agents, stopped, agentsDown []string
}

func (p *fakeProvider) StartInstance(ctx context.Context, args local.StartArgs) (state.Instance, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := local.InstanceID(args.ModelUUID, args.MachineID)
	p.started = append(p.started, id)
	if args.Constraints != "" {
		return state.Instance{}, "", fmt.Errorf("cannot satisfy constraints: %s", args.Constraints)
	}
	return state.Instance{ID: id, Hardware: "arch=amd64"}, "secret", nil
}

func (p *fakeProvider) StartAgent(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.agents = append(p.agents, id)
	return nil
}

func (p *fakeProvider) StopInstance(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = append(p.stopped, id)
	return nil
}

func (p *fakeProvider) StopAgents(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.agentsDown = append(p.agentsDown, id)
	return nil
}

// count says how many times id is in one of the provider's call lists.
func (p *fakeProvider) count(list *[]string, id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, x := range *list {
		if x == id {
			n++
		}
	}
	return n
}

func runWorker(t *testing.T, p provisioner.Provider) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := provisioner.New(st, p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() {
		w.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("provisioner did not stop")
		}
	})
}

func machine(t *testing.T, uuid, id string) (instance string, lf string, found bool) {
	t.Helper()
	m := workertest.Machine(workertest.Snapshot(t, st, uuid), id)
	if m == nil {
		return "", "", false
	}
	return m.InstanceId, m.Life, true
}

func gone(t *testing.T, uuid, id string) func() bool {
	return func() bool { _, _, found := machine(t, uuid, id); return !found }
}

func addMachine(t *testing.T, uuid, cons string) string {
	t.Helper()
	id, err := st.AddMachine(context.Background(), uuid, state.MachineParams{Constraints: cons})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func provisioned(t *testing.T, p *fakeProvider, uuid, id string) string {
	t.Helper()
	inst := local.InstanceID(uuid, id)
	workertest.Eventually(t, "machine "+id+" provisioned", func() bool {
		got, _, _ := machine(t, uuid, id)
		return got == inst && p.count(&p.agents, inst) == 1
	})
	return inst
}

func TestAliveMachineGetsInstanceAndAgent(t *testing.T) {
	p := &fakeProvider{}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	id := addMachine(t, uuid, "")
	inst := provisioned(t, p, uuid, id)
	if n := p.count(&p.started, inst); n != 1 {
		t.Fatalf("%d instances started", n)
	}
}

func TestDeadMachineInstanceStoppedAndMachineRemoved_LM3(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	id := addMachine(t, uuid, "")
	inst := provisioned(t, p, uuid, id)

	// Dying: the machine agent still has work to do (L-M2); nothing is released yet.
	if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, l, found := machine(t, uuid, id); !found || l != string(life.Dying) || p.count(&p.stopped, inst) != 0 {
		t.Fatalf("dying machine: found %v, life %s, stops %d", found, l, p.count(&p.stopped, inst))
	}

	// Dead (what its agent does): the instance goes, with every agent on it, then the machine.
	if _, err := st.EnsureMachineDead(ctx, uuid, id); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "machine removed", gone(t, uuid, id))
	if p.count(&p.stopped, inst) != 1 || p.count(&p.agentsDown, inst) != 0 {
		t.Fatalf("stopped %v, agents stopped %v", p.stopped, p.agentsDown)
	}
	if n := p.count(&p.started, inst); n != 1 {
		t.Fatalf("%d instances started", n)
	}
}

func TestDeadMachineKeepInstanceStopsOnlyAgents_LM3(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	id := addMachine(t, uuid, "")
	inst := provisioned(t, p, uuid, id)
	if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{KeepInstance: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureMachineDead(ctx, uuid, id); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "machine removed", gone(t, uuid, id))
	if p.count(&p.stopped, inst) != 0 || p.count(&p.agentsDown, inst) != 1 {
		t.Fatalf("stopped %v, agents stopped %v", p.stopped, p.agentsDown)
	}
}

func TestMachineWithProvisioningErrorRemoved_LM5(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	id := addMachine(t, uuid, "mem=9000G")
	inst := local.InstanceID(uuid, id)
	workertest.Eventually(t, "provisioning error", func() bool {
		m := workertest.Machine(workertest.Snapshot(t, st, uuid), id)
		return m.ProvisioningError != ""
	})
	if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "machine removed", gone(t, uuid, id))
	if p.count(&p.started, inst) != 1 || p.count(&p.stopped, inst) != 0 {
		t.Fatalf("started %v, stopped %v", p.started, p.stopped)
	}
}

// Non-alive machines get no instance; those without one are removed once nothing holds them.
func TestNonAliveMachinesGetNoInstance_LS(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	empty := addMachine(t, uuid, "")
	units := workertest.Deploy(t, st, uuid, "wordpress", workertest.WordpressMeta, 1)
	u, err := st.Unit(ctx, uuid, units[0])
	if err != nil {
		t.Fatal(err)
	}
	held := u.MachineId
	if _, err := st.DestroyMachine(ctx, uuid, empty, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyMachine(ctx, uuid, held, state.DestroyOptions{ForceAfter: time.Now().Add(time.Hour).UnixNano()}); err != nil {
		t.Fatal(err)
	}

	p := &fakeProvider{}
	runWorker(t, p)
	workertest.Eventually(t, "empty machine removed", gone(t, uuid, empty))
	time.Sleep(100 * time.Millisecond)
	if _, l, found := machine(t, uuid, held); !found || l != string(life.Dying) {
		t.Fatalf("machine holding a unit: found %v, life %s", found, l)
	}
	// The unit was never deployed: it goes at once (L-M5), and the machine with it.
	if _, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "machine removed once empty", gone(t, uuid, held))
	for _, id := range []string{empty, held} {
		if n := p.count(&p.started, local.InstanceID(uuid, id)); n != 0 {
			t.Fatalf("machine %s: %d instances started", id, n)
		}
	}
}

// After a controller restart, a dying machine's agent runs again: it has to set the machine dead.
func TestDyingMachineAgentRestarted_LM2(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	id := addMachine(t, uuid, "")
	inst := "i-restart-" + uuid
	if err := st.SetProvisioned(ctx, uuid, id, state.Instance{ID: inst}, state.HashPassword("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{}
	runWorker(t, p)
	workertest.Eventually(t, "agent restarted", func() bool { return p.count(&p.agents, inst) == 1 })
	time.Sleep(50 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Contains(p.stopped, inst) || slices.Contains(p.started, local.InstanceID(uuid, id)) {
		t.Fatalf("started %v, stopped %v", p.started, p.stopped)
	}
}
