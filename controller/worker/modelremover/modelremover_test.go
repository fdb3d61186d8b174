package modelremover_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/forcer"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
	"github.com/jujuclone/juju/controller/worker/modelremover"
	"github.com/jujuclone/juju/controller/worker/provisioner"
)

var st *state.State

func TestMain(m *testing.M) { workertest.Main(m, &st) }

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeProvider gives every machine an instance and records the instances released.
type fakeProvider struct {
	mu      sync.Mutex
	stopped []string
}

func (p *fakeProvider) StartInstance(_ context.Context, args local.StartArgs) (state.Instance, string, error) {
	return state.Instance{ID: local.InstanceID(args.ModelUUID, args.MachineID)}, "secret", nil
}

func (p *fakeProvider) StartAgent(string) error { return nil }

func (p *fakeProvider) StopInstance(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = append(p.stopped, id)
	return nil
}

func (p *fakeProvider) StopAgents(string) error { return nil }

func (p *fakeProvider) released() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.stopped)
	slices.Sort(out)
	return out
}

// run runs a worker until the test ends.
func run(t *testing.T, work func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		work(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("worker did not stop")
		}
	})
}

func gone(uuid string) func() bool {
	return func() bool {
		_, err := st.Model(context.Background(), uuid)
		return errors.Is(err, apierr.NotFound)
	}
}

// provisioned deploys app with n units and waits until the provisioner gave their machines
// instances; it returns the instance ids.
func provisioned(t *testing.T, uuid, app string, n int) []string {
	t.Helper()
	workertest.Deploy(t, st, uuid, app, workertest.WordpressMeta, n)
	var ids []string
	workertest.Eventually(t, "machines provisioned", func() bool {
		ids = nil
		for _, m := range workertest.Snapshot(t, st, uuid).Machines {
			if m.InstanceId == "" {
				return false
			}
			ids = append(ids, m.InstanceId)
		}
		return len(ids) == n
	})
	slices.Sort(ids)
	return ids
}

// Without force: the model remover destroys the applications; the units' agents (played here)
// leave; the freed machines are destroyed, their agents (played here) set them dead, the
// provisioner releases their instances; then the model goes.
func TestDestroyedModelIsDrainedAndRemoved(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	run(t, provisioner.New(st, p, discard).Run)
	removed := make(chan string, 1)
	run(t, modelremover.New(st, discard, func(uuid string) { removed <- uuid }).Run)
	uuid := workertest.NewModel(t, st)
	instances := provisioned(t, uuid, "wordpress", 2)
	units := workertest.Snapshot(t, st, uuid).Units

	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "application dying", func() bool {
		app := workertest.App(workertest.Snapshot(t, st, uuid), "wordpress")
		return app != nil && app.Life == "dying"
	})
	if m, _ := st.Model(ctx, uuid); m == nil {
		t.Fatal("model removed while it holds units")
	}
	for _, u := range units {
		if _, err := st.SetUnitDying(ctx, uuid, u.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EnsureUnitDead(ctx, uuid, u.Name); err != nil {
			t.Fatal(err)
		}
		if err := st.RemoveUnit(ctx, uuid, u.Name); err != nil {
			t.Fatal(err)
		}
	}
	workertest.Eventually(t, "machines dying", func() bool {
		for _, m := range workertest.Snapshot(t, st, uuid).Machines {
			if m.Life != "dying" {
				return false
			}
		}
		return true
	})
	for _, m := range workertest.Snapshot(t, st, uuid).Machines {
		if _, err := st.EnsureMachineDead(ctx, uuid, m.Id); err != nil {
			t.Fatal(err)
		}
	}
	workertest.Eventually(t, "model removed", gone(uuid))
	if got := p.released(); !slices.Equal(got, instances) {
		t.Fatalf("instances released %v, want %v", got, instances)
	}
	// What the controller keeps outside the store (the model's log) is dropped.
	select {
	case got := <-removed:
		if got != uuid {
			t.Errorf("onRemoved(%q), want %q", got, uuid)
		}
	case <-time.After(10 * time.Second):
		t.Error("onRemoved not called")
	}
}

// With --force --no-wait, nothing waits for agents that never act: the force worker removes
// the units, the provisioner releases the machines, and the model goes (L-F1).
func TestForcedDestroyNeedsNoAgents_LF1(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{}
	run(t, provisioner.New(st, p, discard).Run)
	run(t, forcer.New(st, discard).Run)
	run(t, modelremover.New(st, discard, nil).Run)
	uuid := workertest.NewModel(t, st)
	instances := provisioned(t, uuid, "wordpress", 3)
	workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 0)
	workertest.Integrate(t, st, uuid, "wordpress", "mysql")

	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{ForceAfter: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "model removed", gone(uuid))
	if got := p.released(); !slices.Equal(got, instances) {
		t.Fatalf("instances released %v, want %v", got, instances)
	}
}

// An alive model is left alone.
func TestAliveModelIsLeftAlone(t *testing.T) {
	run(t, modelremover.New(st, discard, nil).Run)
	uuid := workertest.NewModel(t, st)
	workertest.Deploy(t, st, uuid, "mysql", workertest.MySQLMeta, 1)
	if _, err := st.DestroyApplication(context.Background(), uuid, "mysql", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	snap := workertest.Snapshot(t, st, uuid)
	if snap.Model.Life != "alive" || len(snap.Machines) != 1 || snap.Machines[0].Life != "alive" {
		t.Fatalf("model %s, machines %v", snap.Model.Life, snap.Machines)
	}
}

// A model destroyed with nothing in it is removed by the pass that first sees it dying (as
// after a takeover of the workers): its log goes too.
func TestEmptyModelIsRemovedWithItsLog(t *testing.T) {
	removed := make(chan string, 1)
	run(t, modelremover.New(st, discard, func(uuid string) {
		select {
		case removed <- uuid:
		default:
		}
	}).Run)
	uuid := workertest.NewModel(t, st)
	if _, err := st.DestroyModel(context.Background(), uuid, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	workertest.Eventually(t, "model removed", gone(uuid))
	select {
	case got := <-removed:
		if got != uuid {
			t.Errorf("onRemoved(%q), want %q", got, uuid)
		}
	case <-time.After(10 * time.Second):
		t.Error("onRemoved not called")
	}
}
