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

// gatedProvider holds every StartInstance until want of them are in flight at once: machines
// provisioned one after another never get past the first.
type gatedProvider struct {
	*fakeProvider
	want     int
	once     sync.Once
	all      chan struct{}
	mu       sync.Mutex
	inFlight int
}

func (p *gatedProvider) StartInstance(ctx context.Context, args local.StartArgs) (state.Instance, string, error) {
	p.mu.Lock()
	p.inFlight++
	if p.inFlight >= p.want {
		p.once.Do(func() { close(p.all) })
	}
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.inFlight--; p.mu.Unlock() }()
	select {
	case <-p.all:
	case <-time.After(30 * time.Second):
		return state.Instance{}, "", errors.New("machines were not provisioned side by side")
	}
	return p.fakeProvider.StartInstance(ctx, args)
}

// A deploy's machines are provisioned side by side, each once (issue 16): their provisionings
// wait on the disk, the store and the agent host, and one after another they paced deploys.
func TestMachinesProvisionedSideBySide(t *testing.T) {
	p := &gatedProvider{fakeProvider: &fakeProvider{}, want: 8, all: make(chan struct{})}
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
