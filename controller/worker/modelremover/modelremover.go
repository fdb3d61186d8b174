// Package modelremover takes destroyed models apart: once destroy-model has made a model dying
// (one small transaction), it destroys what the model holds through the ordinary removals, one
// entity per transaction (L-G4), passing the model's force deadline on (L-F1), and removes the
// model when nothing is left. Agents, the provisioner and the force worker do the rest of each
// removal as usual (the provisioner releases the instances, L-M3).
package modelremover

import (
	"context"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/modelloop"
)

// Worker drains and removes the dying models of the controller.
type Worker struct {
	st        *state.State
	log       *slog.Logger
	onRemoved func(uuid string)
}

// New returns a model remover. onRemoved, when set, is called once a model it drained is gone,
// for what the controller keeps of a model outside the store (its log).
func New(st *state.State, log *slog.Logger, onRemoved func(uuid string)) *Worker {
	return &Worker{st: st, log: log, onRemoved: onRemoved}
}

// Run works until ctx ends: one loop per model, started as models appear and stopped when they
// are gone.
func (w *Worker) Run(ctx context.Context) {
	modelloop.Run(ctx, w.st, w.log, "model-remover", w.runModel)
}

// runModel passes over a model when it goes dying (or its force deadline changes), and then
// whenever an application or machine goes or changes life, or a unit goes (which may free a
// machine). In an alive model such a wake-up costs one read.
func (w *Worker) runModel(ctx context.Context, uuid string) {
	apps, _ := state.KeyPrefix(uuid, state.KindApplication, "")
	machines, _ := state.KeyPrefix(uuid, state.KindMachine, "")
	units, _ := state.KeyPrefix(uuid, state.KindUnit, "")
	changes, err := modelloop.WatchStore(ctx, w.st,
		modelloop.Watch{Prefix: state.ModelDocKey(uuid)},
		modelloop.Watch{Prefix: state.ModelDestroyingKey(uuid)},
		modelloop.Watch{Prefix: apps, PrevKV: true, Keep: goneOrLifeChanged(func() *storepb.Application { return &storepb.Application{} })},
		modelloop.Watch{Prefix: machines, PrevKV: true, Keep: goneOrLifeChanged(func() *storepb.Machine { return &storepb.Machine{} })},
		modelloop.Watch{Prefix: units, DeletesOnly: true},
	)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("model-remover: watching", "model", uuid, "err", err)
		}
		return
	}
	m := &model{Worker: w, uuid: uuid}
	modelloop.Follow(ctx, changes, modelloop.RealClock, m.pass)
}

// lifeDoc is a document with a life.
type lifeDoc interface {
	proto.Message
	GetLife() string
}

// goneOrLifeChanged keeps deletions and life changes: the other writes of a busy model (status,
// counts) wake nobody.
func goneOrLifeChanged[T lifeDoc](newDoc func() T) func(*clientv3.Event) bool {
	return func(ev *clientv3.Event) bool {
		if ev.Type == clientv3.EventTypeDelete || ev.PrevKv == nil {
			return true
		}
		prev, cur := newDoc(), newDoc()
		if proto.Unmarshal(ev.PrevKv.Value, prev) != nil || proto.Unmarshal(ev.Kv.Value, cur) != nil {
			return true // cannot tell: re-read
		}
		return prev.GetLife() != cur.GetLife()
	}
}

// model is one model's loop.
type model struct {
	*Worker
	uuid string
	// left is what the last pass left, to log progress only when it changes.
	left state.Drain
}

// pass drains the model if it is dying; a failure is retried (modelloop.Follow).
func (m *model) pass(ctx context.Context) (time.Time, error) {
	d, err := m.st.DrainModel(ctx, m.uuid)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("model-remover: draining model failed; will retry", "model", m.uuid, "err", err)
		}
		return time.Time{}, err
	}
	switch {
	case d.Removed && !m.left.Removed:
		// Removed by this pass (the first one, too: a dying model with nothing left, or a
		// member that takes over the workers after the model's last entity went), or just
		// before it by a member that owned the workers and stopped before this step: what
		// the controller keeps outside the store goes either way (Remove is idempotent).
		m.log.Info("model-remover: model removed", "model", m.uuid)
		if m.onRemoved != nil {
			m.onRemoved(m.uuid)
		}
	case d.Dying && d != m.left:
		m.log.Info("model-remover: waiting for the model's contents to go", "model", m.uuid,
			"applications", d.Applications, "machines", d.Machines, "units", d.Units, "relations", d.Relations)
	}
	m.left = d
	return time.Time{}, nil
}
