package provisioner_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
)

// gate holds every call until want of them are in flight at once: calls made one after
// another never get past the first.
type gate struct {
	want     int
	once     sync.Once
	all      chan struct{}
	mu       sync.Mutex
	inFlight int
}

func newGate(want int) *gate { return &gate{want: want, all: make(chan struct{})} }

func (g *gate) pass() error {
	g.mu.Lock()
	g.inFlight++
	if g.inFlight >= g.want {
		g.once.Do(func() { close(g.all) })
	}
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.inFlight--; g.mu.Unlock() }()
	select {
	case <-g.all:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("calls were not made side by side")
	}
}

// gatedProvider passes StartInstance through start and StopInstance through stop (when set).
type gatedProvider struct {
	*fakeProvider
	start, stop *gate
}

func (p *gatedProvider) StartInstance(ctx context.Context, args local.StartArgs) (state.Instance, string, error) {
	if p.start != nil {
		if err := p.start.pass(); err != nil {
			return state.Instance{}, "", err
		}
	}
	return p.fakeProvider.StartInstance(ctx, args)
}

func (p *gatedProvider) StopInstance(id string) error {
	if p.stop != nil {
		if err := p.stop.pass(); err != nil {
			return err
		}
	}
	return p.fakeProvider.StopInstance(id)
}

// A deploy's machines are provisioned side by side, each once (issue 16): their provisionings
// wait on the disk, the store and the agent host, and one after another they paced deploys.
func TestMachinesProvisionedSideBySide(t *testing.T) {
	p := &gatedProvider{fakeProvider: &fakeProvider{}, start: newGate(8)}
	runWorker(t, p)
	uuid := workertest.NewModel(t, st)
	ids, err := st.AddMachines(context.Background(), uuid, make([]state.MachineParams, 12))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		inst := provisioned(t, p.fakeProvider, uuid, id)
		if n := p.count(&p.started, inst); n != 1 {
			t.Fatalf("machine %s: %d instances started", id, n)
		}
	}
}

// Dead machines are released side by side, each once, and removed (L-M3): a model destroyed
// with a hundred thousand machines would otherwise wait on each one's release in turn.
func TestDeadMachinesReleasedSideBySide_LM3(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	ids, err := st.AddMachines(ctx, uuid, make([]state.MachineParams, 9))
	if err != nil {
		t.Fatal(err)
	}
	insts := map[string]string{}
	for _, id := range ids {
		inst := local.InstanceID(uuid, id)
		if err := st.SetProvisioned(ctx, uuid, id, state.Instance{ID: inst}, state.HashPassword("secret")); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EnsureMachineDead(ctx, uuid, id); err != nil {
			t.Fatal(err)
		}
		insts[id] = inst
	}
	// The provisioner starts with every machine dead: its first pass finds them all.
	p := &gatedProvider{fakeProvider: &fakeProvider{}, stop: newGate(9)}
	runWorker(t, p)
	for _, id := range ids {
		workertest.Eventually(t, "machine "+id+" removed", gone(t, uuid, id))
		if n := p.count(&p.stopped, insts[id]); n != 1 {
			t.Fatalf("machine %s: instance stopped %d times", id, n)
		}
	}
}
