// Package forcer is the force-remover (L-F1): when an entity removed with --force is still
// there at its deadline (force_after) because its agent made no progress, it does the agents'
// duties itself through the state's force operations, one ordinary transaction per step, so
// every count and reference stays right.
package forcer

import (
	"context"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/modelloop"
	"github.com/jujuclone/juju/core/life"
)

// Worker force-removes the forced entities of every model at their deadlines.
type Worker struct {
	st    *state.State
	log   *slog.Logger
	clock modelloop.Clock
}

// New returns a force-remover on the wall clock.
func New(st *state.State, log *slog.Logger) *Worker {
	return &Worker{st: st, log: log, clock: modelloop.RealClock}
}

// SetClock replaces the clock the deadlines are compared with (tests); call it before Run.
func (w *Worker) SetClock(c modelloop.Clock) { w.clock = c }

// Run force-removes until ctx ends: one loop per model, started as models appear.
func (w *Worker) Run(ctx context.Context) {
	modelloop.Run(ctx, w.st, w.log, "force-remover", w.runModel)
}

// runModel follows one model: it re-reads it when an entity's life or deadline changes, and
// when the earliest pending deadline comes (one timer, no polling).
func (w *Worker) runModel(ctx context.Context, uuid string) {
	var watches []modelloop.Watch
	for kind, keep := range map[string]func(*clientv3.Event) bool{
		state.KindUnit:        forcedChange(func() *storepb.Unit { return &storepb.Unit{} }),
		state.KindMachine:     forcedChange(func() *storepb.Machine { return &storepb.Machine{} }),
		state.KindApplication: forcedChange(func() *storepb.Application { return &storepb.Application{} }),
		state.KindRelation:    forcedChange(func() *storepb.Relation { return &storepb.Relation{} }),
	} {
		prefix, err := state.KeyPrefix(uuid, kind, "")
		if err != nil {
			w.log.Error("force-remover: "+err.Error(), "model", uuid)
			return
		}
		watches = append(watches, modelloop.Watch{Prefix: prefix, PrevKV: true, Keep: keep})
	}
	changes, err := modelloop.WatchStore(ctx, w.st, watches...)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("force-remover: watching", "model", uuid, "err", err)
		}
		return
	}
	m := &model{Worker: w, uuid: uuid, destroyed: map[string]int64{}}
	modelloop.Follow(ctx, changes, w.clock, m.pass)
}

// lifeDoc is a document with a life and a force deadline.
type lifeDoc interface {
	proto.Message
	GetLife() string
	GetForceAfter() int64
}

// forcedChange keeps the changes that can make a forced entity due: a document that is not
// alive and has a deadline, when its life or deadline changed. The many other writes of a large
// removal (scopes left, counts, statuses) wake nobody.
func forcedChange[T lifeDoc](newDoc func() T) func(*clientv3.Event) bool {
	return func(ev *clientv3.Event) bool {
		if ev.Type != clientv3.EventTypePut {
			return false
		}
		cur := newDoc()
		if proto.Unmarshal(ev.Kv.Value, cur) != nil {
			return true // cannot tell: re-read
		}
		if cur.GetForceAfter() == 0 || cur.GetLife() == string(life.Alive) {
			return false
		}
		if ev.PrevKv == nil {
			return true
		}
		prev := newDoc()
		if proto.Unmarshal(ev.PrevKv.Value, prev) != nil {
			return true
		}
		return prev.GetLife() != cur.GetLife() || prev.GetForceAfter() != cur.GetForceAfter()
	}
}

// model is one model's force-removal loop.
type model struct {
	*Worker
	uuid string
	// destroyed: forced dying machines whose units were set dying, with the deadline used.
	destroyed map[string]int64
}

// pass applies every step that is due and returns the earliest deadline still pending. Each
// step is idempotent; a failed one is logged and retried (modelloop.Follow).
func (m *model) pass(ctx context.Context) (time.Time, error) {
	snap, err := m.st.Snapshot(ctx, m.uuid)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("force-remover: reading model", "model", m.uuid, "err", err)
		}
		return time.Time{}, err
	}
	now := m.clock.Now().UnixNano()
	var next int64
	due := func(forceAfter int64) bool {
		if forceAfter <= now {
			return true
		}
		if next == 0 || forceAfter < next {
			next = forceAfter
		}
		return false
	}
	var failed error
	step := func(what, kind, id string, forceAfter int64, fn func() error) {
		if ctx.Err() != nil {
			return
		}
		m.log.Info("force-remover: "+what, "model", m.uuid, kind, id, "force-after", time.Unix(0, forceAfter).UTC())
		if err := fn(); err != nil {
			if ctx.Err() == nil {
				m.log.Error("force-remover: "+what+" failed; will retry", "model", m.uuid, kind, id, "err", err)
			}
			failed = err
		}
	}

	for _, u := range snap.Units {
		// A subordinate goes with its principal, or with its forced application.
		if u.Life == string(life.Alive) || u.ForceAfter == 0 || u.Principal != "" || !due(u.ForceAfter) {
			continue
		}
		step("removing unit", "unit", u.Name, u.ForceAfter, func() error {
			return m.st.ForceRemoveUnit(ctx, m.uuid, u.Name, u.ForceAfter)
		})
	}

	forced := map[string]bool{}
	for _, mc := range snap.Machines {
		if mc.Life != string(life.Dying) || mc.ForceAfter == 0 {
			continue
		}
		forced[mc.Id] = true
		// At once, not at the deadline: the units' agents get the grace period to leave
		// cleanly, and the same deadline.
		if m.destroyed[mc.Id] != mc.ForceAfter {
			step("setting machine's units dying", "machine", mc.Id, mc.ForceAfter, func() error {
				if err := m.st.DestroyMachineUnits(ctx, m.uuid, mc.Id, mc.ForceAfter); err != nil {
					return err
				}
				m.destroyed[mc.Id] = mc.ForceAfter
				return nil
			})
		}
		if due(mc.ForceAfter) {
			step("removing machine", "machine", mc.Id, mc.ForceAfter, func() error {
				return m.st.ForceRemoveMachine(ctx, m.uuid, mc.Id, mc.ForceAfter)
			})
		}
	}
	for id := range m.destroyed {
		if !forced[id] {
			delete(m.destroyed, id)
		}
	}

	for _, app := range snap.Applications {
		if app.Life != string(life.Dying) || app.ForceAfter == 0 || !due(app.ForceAfter) {
			continue
		}
		step("removing application's units", "application", app.Name, app.ForceAfter, func() error {
			return m.st.ForceRemoveApplicationUnits(ctx, m.uuid, app.Name, app.ForceAfter)
		})
	}

	for _, rel := range snap.Relations {
		if rel.Life != string(life.Dying) || rel.ForceAfter == 0 || !due(rel.ForceAfter) {
			continue
		}
		step("leaving relation", "relation", rel.Key, rel.ForceAfter, func() error {
			return m.st.ForceLeaveRelation(ctx, m.uuid, rel.Id)
		})
	}

	if ctx.Err() != nil {
		return time.Time{}, ctx.Err()
	}
	if next == 0 {
		return time.Time{}, failed
	}
	return time.Unix(0, next), failed
}
