package provisioner_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
	"github.com/jujuclone/juju/controller/worker/provisioner"
)

// countingStore is the state, counting what the provisioner reads of one model.
type countingStore struct {
	*state.State
	uuid string

	mu       sync.Mutex
	listings int      // whole-model listings
	read     []string // machines read by id, in order
}

func (s *countingStore) Machines(ctx context.Context, uuid string) ([]*storepb.Machine, error) {
	if uuid == s.uuid {
		s.mu.Lock()
		s.listings++
		s.mu.Unlock()
	}
	return s.State.Machines(ctx, uuid)
}

func (s *countingStore) MachinesByID(ctx context.Context, uuid string, ids []string) ([]*storepb.Machine, error) {
	if uuid == s.uuid {
		s.mu.Lock()
		s.read = append(s.read, ids...)
		s.mu.Unlock()
	}
	return s.State.MachinesByID(ctx, uuid, ids)
}

func (s *countingStore) counts() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings, slices.Clone(s.read)
}

// Issue 16: a model's loop lists its machines once; after that a change to one machine reads
// that machine only, however many the model has. When the watch fails, the loop starts again
// with a listing of them all, and a change made while nothing watched is not missed.
func TestPassReadsOnlyChangedMachines(t *testing.T) {
	ctx := context.Background()
	uuid := workertest.NewModel(t, st)
	const n = 20
	var ids []string
	for range n {
		id := addMachine(t, uuid, "")
		if err := st.SetProvisioned(ctx, uuid, id, state.Instance{ID: local.InstanceID(uuid, id)}, state.HashPassword("x")); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}

	cs := &countingStore{State: st, uuid: uuid}
	var mu sync.Mutex
	var endWatch context.CancelFunc
	watchContext := func(ctx context.Context, model string) context.Context {
		if model != uuid {
			return ctx
		}
		ctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		endWatch = cancel
		mu.Unlock()
		return ctx
	}
	p := &fakeProvider{}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w := provisioner.NewWithStore(st, cs, p, slog.New(slog.NewTextHandler(io.Discard, nil)), watchContext)
	go func() { defer close(done); w.Run(wctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("provisioner did not stop")
		}
	})
	workertest.Eventually(t, "every machine's agent started", func() bool {
		for _, id := range ids {
			if p.count(&p.agents, local.InstanceID(uuid, id)) != 1 {
				return false
			}
		}
		return true
	})

	added := addMachine(t, uuid, "")
	provisioned(t, p, uuid, added)
	listings, read := cs.counts()
	if listings != 1 {
		t.Errorf("%d listings of the model's machines, want the first pass's one", listings)
	}
	if len(read) == 0 || slices.ContainsFunc(read, func(id string) bool { return id != added }) {
		t.Errorf("machines read after adding machine %s: %v, want only it", added, read)
	}

	// The watch fails: the loop starts again and lists every machine, so a machine that died
	// meanwhile is released.
	mu.Lock()
	endWatch()
	mu.Unlock()
	dead := ids[0]
	if _, err := st.DestroyMachine(ctx, uuid, dead, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureMachineDead(ctx, uuid, dead); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "model listed again", func() bool { listings, _ := cs.counts(); return listings == 2 })
	workertest.Eventually(t, "dead machine removed", gone(t, uuid, dead))
	if n := p.count(&p.stopped, local.InstanceID(uuid, dead)); n != 1 {
		t.Errorf("dead machine's instance stopped %d times", n)
	}
	// Followed again by its changes.
	provisioned(t, p, uuid, addMachine(t, uuid, ""))
	if listings, _ := cs.counts(); listings != 2 {
		t.Errorf("%d listings after the watch restarted, want 2", listings)
	}
}
