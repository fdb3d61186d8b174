// Package provisioner starts instances for alive machines without one and records failures
// (rules L-S provisioner, L-M5); it releases the instances of dead machines and removes them,
// and removes machines that are not alive and never got an instance (L-M3). For a machine
// without an instance it also does the one duty of the agent it lacks: it removes the units
// there that are no longer wanted (L-M5, L-U6).
//
// A model's loop lists its machines once, when it starts (again after its watch fails), and
// then handles only the machines its watch names: a machine changed, a unit assigned to or
// gone from one (the machines' unit index), the machines of an application gone dying. The
// cost of a change does not grow with the model (issue 16).
package provisioner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/modelloop"
	"github.com/jujuclone/juju/core/life"
)

// Provider is what the provisioner needs of a provider.
type Provider interface {
	StartInstance(ctx context.Context, args local.StartArgs) (state.Instance, string, error)
	StartAgent(instanceID string) error
	// StopInstance stops every agent of an instance and releases it; StopAgents only stops the
	// agents (the machine was removed with --keep-instance). Both are idempotent.
	StopInstance(instanceID string) error
	StopAgents(instanceID string) error
}

// Store is what the provisioner reads and writes of the state (*state.State has it). A pass
// reads the machines that changed, never the model's (issue 16), except the one listing when
// a model's loop starts or its watch restarts.
type Store interface {
	Machines(ctx context.Context, uuid string) ([]*storepb.Machine, error)
	MachinesByID(ctx context.Context, uuid string, ids []string) ([]*storepb.Machine, error)
	ApplicationMachineIDs(ctx context.Context, uuid, app string) ([]string, error)
	Machine(ctx context.Context, uuid, id string) (*storepb.Machine, error)
	SetProvisioned(ctx context.Context, uuid, id string, inst state.Instance, passwordHash string) error
	SetProvisioningError(ctx context.Context, uuid, id, reason string) error
	RemoveUndeployedUnits(ctx context.Context, uuid, machineID string) ([]string, error)
	EnsureMachineDead(ctx context.Context, uuid, id string) (string, error)
	RemoveMachine(ctx context.Context, uuid, id string) error
}

// Worker provisions the machines of every model.
type Worker struct {
	// st is watched (models, machines); store is read and written.
	st    *state.State
	store Store
	p     Provider
	log   *slog.Logger
	// watchContext, when set, gives the context of each model's watch (tests end a watch
	// with it to see the loop start again).
	watchContext func(ctx context.Context, uuid string) context.Context
}

// New returns a provisioner.
func New(st *state.State, p Provider, log *slog.Logger) *Worker {
	return &Worker{st: st, store: st, p: p, log: log}
}

// Run provisions until ctx ends: one loop per model, started as models appear.
func (w *Worker) Run(ctx context.Context) {
	modelloop.Run(ctx, w.st, w.log, "provisioner", w.runModel)
}

// Kinds of the changes a model's loop follows (modelloop.Change.Kind): a machine named by its
// id, or an application by its name.
const (
	changedMachine     = "machine"
	changedApplication = "application"
)

// runModel reacts to machine changes in one model; on start it also restarts the agents of
// machines provisioned before a controller restart.
func (w *Worker) runModel(ctx context.Context, uuid string) {
	machines, _ := state.KeyPrefix(uuid, state.KindMachine, "")
	apps, _ := state.KeyPrefix(uuid, state.KindApplication, "")
	wctx := ctx
	if w.watchContext != nil {
		wctx = w.watchContext(ctx, uuid)
	}
	changes, err := modelloop.WatchChanges(wctx, w.st,
		modelloop.Watch{Prefix: machines, PrevKV: true, Keep: provisioningChange, Kind: changedMachine},
		// A unit leaving a dying machine that never got an instance lets it go (L-M5): only
		// units coming and going matter, not their status. The machines' unit index names the
		// machine in its key, so the change needs no read to find it.
		modelloop.Watch{Prefix: state.MachineUnitsIndexPrefix(uuid),
			Keep: func(ev *clientv3.Event) bool {
				return ev.Type == clientv3.EventTypeDelete || ev.IsCreate()
			},
			Name: func(ev *clientv3.Event) (modelloop.Change, bool) {
				id, ok := state.MachineOfUnitIndexKey(uuid, string(ev.Kv.Key))
				return modelloop.Change{Kind: changedMachine, ID: id}, ok
			}},
		// An application going dying takes its units on machines without an instance, which
		// no agent will ever follow (L-U6, L-M5).
		modelloop.Watch{Prefix: apps, PrevKV: true, Keep: lifeChange, Kind: changedApplication})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("provisioner: watching machines", "model", uuid, "err", err)
		}
		return
	}
	m := &model{Worker: w, uuid: uuid, started: map[string]bool{}, full: true, retry: map[string]bool{}}
	modelloop.Follow(ctx, changes.C, modelloop.RealClock, func(ctx context.Context) (time.Time, error) {
		return time.Time{}, m.pass(ctx, changes.Take())
	})
}

// provisioningChange keeps the machine changes the provisioner acts on: a machine added or
// removed, or its life, instance or provisioning error changing. Machine agents' status
// updates (a thousand of them while a big deploy settles) wake nobody.
func provisioningChange(ev *clientv3.Event) bool {
	if ev.Type != clientv3.EventTypePut || ev.PrevKv == nil {
		return true
	}
	prev, cur := &storepb.Machine{}, &storepb.Machine{}
	if proto.Unmarshal(ev.PrevKv.Value, prev) != nil || proto.Unmarshal(ev.Kv.Value, cur) != nil {
		return true // cannot tell: re-read
	}
	return prev.Life != cur.Life || prev.InstanceId != cur.InstanceId || prev.ProvisioningError != cur.ProvisioningError
}

// lifeChange keeps the application changes that can release undeployed units: a life that
// moved. Counts and statuses wake nobody.
func lifeChange(ev *clientv3.Event) bool {
	if ev.Type != clientv3.EventTypePut || ev.PrevKv == nil {
		return false // created alive, or gone with its last unit
	}
	prev, cur := &storepb.Application{}, &storepb.Application{}
	if proto.Unmarshal(ev.PrevKv.Value, prev) != nil || proto.Unmarshal(ev.Kv.Value, cur) != nil {
		return true // cannot tell: re-read
	}
	return prev.Life != cur.Life
}

// model is one model's provisioning loop.
type model struct {
	*Worker
	uuid string
	// started: machines whose agent this loop started (or restarted), by id; mu guards it
	// while machines are provisioned or released side by side (sideBySide).
	mu      sync.Mutex
	started map[string]bool
	// full: the next pass lists every machine (the loop's first, until one succeeds); the
	// watch, started before it, names every change after it.
	full bool
	// retry: machines whose handling failed, handled again on the next pass.
	retry map[string]bool
	// apps: applications whose change is still to be turned into their machines (the read
	// failed).
	apps map[string]bool
}

// pass handles the machines that changed (or every machine, on a full pass) and those that
// failed before; a failure is retried, for the failed machines only, on the next change or
// after modelloop.Follow's backoff.
func (m *model) pass(ctx context.Context, changes []modelloop.Change) error {
	ids := map[string]bool{}
	for id := range m.retry {
		ids[id] = true
	}
	for _, c := range changes {
		switch c.Kind {
		case changedMachine:
			ids[c.ID] = true
		case changedApplication:
			if m.apps == nil {
				m.apps = map[string]bool{}
			}
			m.apps[c.ID] = true
		}
	}
	var failed error
	for app := range m.apps {
		machines, err := m.store.ApplicationMachineIDs(ctx, m.uuid, app)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			m.log.Error("provisioner: listing application's machines", "model", m.uuid, "application", app, "err", err)
			failed = err
			continue
		}
		delete(m.apps, app)
		for _, id := range machines {
			ids[id] = true
		}
	}
	var machines []*storepb.Machine
	var err error
	if m.full {
		machines, err = m.store.Machines(ctx, m.uuid)
	} else if len(ids) > 0 {
		machines, err = m.store.MachinesByID(ctx, m.uuid, sortedKeys(ids))
	}
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("provisioner: reading machines", "model", m.uuid, "err", err)
		}
		for id := range ids {
			m.retry[id] = true
		}
		return err
	}
	present := map[string]bool{}
	// settle records how handling a machine went: a failure is retried on the next pass. It
	// reports whether the pass stops there (its context ended).
	settle := func(id string, err error) (stop bool) {
		if err == nil {
			return false
		}
		m.retry[id] = true
		if ctx.Err() != nil {
			return true
		}
		m.log.Error("provisioner: handling machine", "model", m.uuid, "machine", id, "err", err)
		failed = err
		return false
	}
	// Dead machines to release and machines to provision are handled side by side
	// (sideBySide), the rest one after another.
	var dead, unprovisioned []*storepb.Machine
	for _, mc := range machines {
		present[mc.Id] = true
		delete(m.retry, mc.Id)
		switch {
		case mc.Life == string(life.Dead):
			dead = append(dead, mc)
		case needsInstance(mc):
			unprovisioned = append(unprovisioned, mc)
		default:
			if err := m.handle(ctx, mc); settle(mc.Id, err) {
				return err
			}
		}
	}
	for i, err := range sideBySide(ctx, dead, m.release) {
		if settle(dead[i].Id, err) {
			return err
		}
	}
	for i, err := range sideBySide(ctx, unprovisioned, m.provision) {
		if settle(unprovisioned[i].Id, err) {
			return err
		}
	}
	// A machine gone is forgotten (a full pass comes first, with nothing started yet).
	for id := range ids {
		if !present[id] {
			delete(m.started, id)
			delete(m.retry, id)
		}
	}
	m.full = false
	return failed
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// needsInstance reports whether the provisioner starts an instance for mc: alive, without one,
// and not failed already (L-M5).
func needsInstance(mc *storepb.Machine) bool {
	return mc.Life == string(life.Alive) && mc.InstanceId == "" && mc.ProvisioningError == ""
}

// sideBySideWorkers is how many machines a pass provisions, or releases, at once.
const sideBySideWorkers = 16

// sideBySide calls fn for each machine, up to sideBySideWorkers at once, and returns each
// one's error. Provisioning and releasing a machine mostly wait: on the disk (the instance's
// agent.conf, its directory's removal), on the store's commit, on the agent host. One machine
// after another, provisioning paced a big deploy at about 60 machines a second (issue 16);
// side by side, the store commits their transactions together. Once ctx ends (the workers moved
// to another member) no machine is started on.
func sideBySide(ctx context.Context, mcs []*storepb.Machine, fn func(context.Context, *storepb.Machine) error) []error {
	errs := make([]error, len(mcs))
	sem := make(chan struct{}, sideBySideWorkers)
	var wg sync.WaitGroup
	for i, mc := range mcs {
		sem <- struct{}{}
		if err := ctx.Err(); err != nil {
			<-sem
			errs[i] = err
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn(ctx, mc)
		}()
	}
	wg.Wait()
	return errs
}

// handle does what a machine needs that is neither dead nor waiting for its instance (pass
// releases and provisions those side by side).
func (m *model) handle(ctx context.Context, mc *storepb.Machine) error {
	switch {
	case mc.Life != string(life.Alive) && mc.InstanceId == "":
		if err := m.removeUndeployed(ctx, mc); err != nil {
			return err
		}
		return m.removeUnprovisioned(ctx, mc)
	case mc.InstanceId != "":
		// Alive or dying: its agent has work to do (L-M2), also after a controller restart.
		return m.startAgent(mc.Id, mc.InstanceId)
	case mc.ProvisioningError != "":
		// L-M5: waits for `juju resolved <machine>`; meanwhile the units nobody wants go.
		return m.removeUndeployed(ctx, mc)
	}
	return nil
}

// provision starts an instance for an alive machine without one (L-S provisioner).
//
// The controller's members take turns running the provisioner (package singular), so a pass
// may find a machine half-way through its provisioning by an owner that died. Instance ids are
// stable (local.InstanceID): starting the instance again for a machine whose instance was never
// recorded takes the same directory, address and uid, and writes the agent configuration whose
// password's hash is then recorded; no agent ran on the earlier one, since agents start only
// once recorded. A machine recorded already only has its agent started (handle), which the
// agent host ignores when that agent runs.
func (m *model) provision(ctx context.Context, mc *storepb.Machine) error {
	if err := ctx.Err(); err != nil {
		return err // no longer this member's work: the next owner provisions the machine
	}
	inst, password, err := m.p.StartInstance(ctx, local.StartArgs{ModelUUID: m.uuid, MachineID: mc.Id, Constraints: mc.Constraints})
	if err != nil {
		// L-M5: recorded, visible in status, not retried until resolved.
		if serr := m.store.SetProvisioningError(ctx, m.uuid, mc.Id, err.Error()); serr != nil {
			return fmt.Errorf("recording provisioning failure: %w", serr)
		}
		return nil
	}
	hash := state.HashPassword(password)
	if err := m.store.SetProvisioned(ctx, m.uuid, mc.Id, inst, hash); err != nil {
		if errors.Is(err, apierr.NotAlive) || errors.Is(err, apierr.NotFound) {
			// The machine went dying (or away) meanwhile: release the instance nobody
			// records, so the next pass finds a machine without instance to remove.
			if serr := m.p.StopInstance(inst.ID); serr != nil {
				m.log.Error("provisioner: releasing unrecorded instance", "model", m.uuid, "machine", mc.Id, "instance", inst.ID, "err", serr)
			}
			return nil // the change that caused it brings the next pass
		}
		// Any other failure (a deadline, this member losing the workers mid-call) may have
		// come after the store committed: the instance stays, since the next pass either
		// finds it recorded and starts its agent, or provisions the same instance again (its
		// id is stable). Whether it committed decides whether it was provisioned now;
		// AlreadyExists says another owner's call recorded it, whatever the store holds.
		if !errors.Is(err, apierr.AlreadyExists) && m.recorded(ctx, mc.Id, inst.ID, hash) {
			m.provisioned(mc.Id, inst.ID)
		}
		return fmt.Errorf("recording instance: %w", err)
	}
	m.provisioned(mc.Id, inst.ID)
	return m.startAgent(mc.Id, inst.ID)
}

// provisioned says, once per machine across the controller's members, that its instance is
// recorded: only the call that recorded it says so (an end-to-end test counts these lines).
func (m *model) provisioned(id, instanceID string) {
	m.log.Info("machine provisioned", "model", m.uuid, "machine", id, "instance", instanceID)
}

// recorded reports whether the store holds this very provisioning of a machine (its instance
// and the hash of the password just written), read afresh: the caller's context may have
// ended, and the read decides nothing but a log line.
func (m *model) recorded(ctx context.Context, id, instanceID, hash string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	mc, err := m.store.Machine(ctx, m.uuid, id)
	return err == nil && mc.InstanceId == instanceID && mc.PasswordHash == hash
}

func (m *model) startAgent(id, instanceID string) error {
	m.mu.Lock()
	started := m.started[id]
	m.mu.Unlock()
	if started {
		return nil
	}
	if err := m.p.StartAgent(instanceID); err != nil {
		return fmt.Errorf("starting agent: %w", err)
	}
	m.mu.Lock()
	m.started[id] = true
	m.mu.Unlock()
	return nil
}

// release stops a dead machine's agents for good, releases its instance unless the user keeps
// it, and removes the machine (L-M3).
func (m *model) release(ctx context.Context, mc *storepb.Machine) error {
	if mc.InstanceId != "" {
		if mc.KeepInstance {
			if err := m.p.StopAgents(mc.InstanceId); err != nil {
				return fmt.Errorf("stopping agents: %w", err)
			}
		} else if err := m.p.StopInstance(mc.InstanceId); err != nil {
			return fmt.Errorf("stopping instance: %w", err)
		}
	}
	m.mu.Lock()
	delete(m.started, mc.Id)
	m.mu.Unlock()
	if err := m.store.RemoveMachine(ctx, m.uuid, mc.Id); err != nil {
		return fmt.Errorf("removing machine: %w", err)
	}
	m.log.Info("provisioner: machine removed", "model", m.uuid, "machine", mc.Id, "instance", mc.InstanceId, "kept", mc.KeepInstance)
	return nil
}

// removeUndeployed stands in for the agent a machine without an instance does not have: its
// units that are not alive, or whose application is not alive, were never deployed and are
// removed at once (L-M5, L-U6), so nothing stays dying for an agent that will never run (L-F2).
// Alive units of alive applications wait for the machine (a forced machine's go through the
// force-remover, L-F1).
func (m *model) removeUndeployed(ctx context.Context, mc *storepb.Machine) error {
	removed, err := m.store.RemoveUndeployedUnits(ctx, m.uuid, mc.Id)
	for _, u := range removed {
		m.log.Info("provisioner: undeployed unit removed", "model", m.uuid, "machine", mc.Id, "unit", u)
	}
	if err != nil {
		return fmt.Errorf("removing undeployed units: %w", err)
	}
	return nil
}

// removeUnprovisioned removes a machine that is not alive and never got an instance (a
// provisioning error, or removed before the provisioner came to it): no agent will ever set it
// dead, so the provisioner does, once no unit holds it (L-S provisioner, L-M2).
func (m *model) removeUnprovisioned(ctx context.Context, mc *storepb.Machine) error {
	l, err := m.store.EnsureMachineDead(ctx, m.uuid, mc.Id)
	if err != nil {
		return fmt.Errorf("setting machine dead: %w", err)
	}
	if l != string(life.Dead) {
		return nil // units still assigned; their removal wakes us again
	}
	if err := m.store.RemoveMachine(ctx, m.uuid, mc.Id); err != nil {
		return fmt.Errorf("removing machine: %w", err)
	}
	m.log.Info("provisioner: unprovisioned machine removed", "model", m.uuid, "machine", mc.Id)
	return nil
}
