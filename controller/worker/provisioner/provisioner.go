// Package provisioner starts instances for alive machines without one and records failures
// (rules L-S provisioner, L-M5).
package provisioner

import (
	"context"
	"log/slog"
	"sync"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/life"
)

// Provider is what the provisioner needs of a provider.
type Provider interface {
	StartInstance(ctx context.Context, args local.StartArgs) (state.Instance, string, error)
	StartAgent(instanceID string) error
}

// Worker provisions the machines of every model.
type Worker struct {
	st  *state.State
	p   Provider
	log *slog.Logger

	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// New returns a provisioner.
func New(st *state.State, p Provider, log *slog.Logger) *Worker {
	return &Worker{st: st, p: p, log: log, running: map[string]bool{}}
}

// Run provisions until ctx ends: one loop per model, started as models appear.
func (w *Worker) Run(ctx context.Context) {
	models := w.st.WatchModels(ctx)
	w.startModels(ctx)
	for {
		select {
		case <-ctx.Done():
			w.wg.Wait()
			return
		case _, ok := <-models:
			if !ok {
				w.wg.Wait()
				return
			}
			w.startModels(ctx)
		}
	}
}

func (w *Worker) startModels(ctx context.Context) {
	uuids, err := w.st.ModelUUIDs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("provisioner: listing models", "err", err)
		}
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, uuid := range uuids {
		if w.running[uuid] {
			continue
		}
		w.running[uuid] = true
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.runModel(ctx, uuid)
		}()
	}
}

// runModel reacts to machine changes in one model; on start it also restarts the agents of
// machines provisioned before a controller restart.
func (w *Worker) runModel(ctx context.Context, uuid string) {
	prefix, _ := state.KeyPrefix(uuid, state.KindMachine, "")
	events := w.st.Watch(ctx, uuid, []string{prefix}, 0)
	restarted := map[string]bool{}
	for {
		machines, err := w.st.Machines(ctx, uuid)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.log.Error("provisioner: listing machines", "model", uuid, "err", err)
		}
		for _, m := range machines {
			w.handle(ctx, uuid, m, restarted)
		}
		// Drain a burst of changes before the next full read.
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok {
				return
			}
		}
		for drained := false; !drained; {
			select {
			case <-events:
			default:
				drained = true
			}
		}
	}
}

func (w *Worker) handle(ctx context.Context, uuid string, m *storepb.Machine, restarted map[string]bool) {
	if m.Life != string(life.Alive) {
		return
	}
	if m.InstanceId != "" {
		if !restarted[m.Id] {
			restarted[m.Id] = true
			if err := w.p.StartAgent(m.InstanceId); err != nil {
				w.log.Error("provisioner: starting agent", "machine", m.Id, "err", err)
			}
		}
		return
	}
	if m.ProvisioningError != "" {
		return // L-M5: waits for `juju resolved <machine>`
	}
	inst, password, err := w.p.StartInstance(ctx, local.StartArgs{ModelUUID: uuid, MachineID: m.Id, Constraints: m.Constraints})
	if err != nil {
		if serr := w.st.SetProvisioningError(ctx, uuid, m.Id, err.Error()); serr != nil && ctx.Err() == nil {
			w.log.Error("provisioner: recording failure", "machine", m.Id, "err", serr)
		}
		return
	}
	if err := w.st.SetProvisioned(ctx, uuid, m.Id, inst, state.HashPassword(password)); err != nil {
		if ctx.Err() == nil {
			w.log.Error("provisioner: recording instance", "machine", m.Id, "err", err)
		}
		return
	}
	restarted[m.Id] = true
	if err := w.p.StartAgent(inst.ID); err != nil {
		w.log.Error("provisioner: starting agent", "machine", m.Id, "err", err)
	}
}
