// Package forcer is the force-remover (L-F1): when an entity removed with --force is still
// there at its deadline (force_after) because its agent made no progress, it does the agents'
// duties itself through the state's force operations, one ordinary transaction per step, so
// every count and reference stays right.
package forcer

import (
	"container/heap"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
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

// runModel follows one model: it reads the model once, then keeps its forced entities up to
// date from the watched changes' own values, and acts when the earliest deadline comes (one
// timer, no polling, no read of the whole model per change: issue 16). When the watch fails,
// modelloop.Run starts it again, and it reads the model again.
func (w *Worker) runModel(ctx context.Context, uuid string) {
	snap, err := w.st.Snapshot(ctx, uuid)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("force-remover: reading model", "model", uuid, "err", err)
		}
		return
	}
	m := &model{Worker: w, uuid: uuid, forced: map[string]*entity{}, fresh: map[string]bool{}}
	var watches []modelloop.Watch
	for _, kind := range []string{state.KindUnit, state.KindMachine, state.KindApplication, state.KindRelation} {
		prefix, err := state.KeyPrefix(uuid, kind, "")
		if err != nil {
			w.log.Error("force-remover: "+err.Error(), "model", uuid)
			return
		}
		watches = append(watches, modelloop.Watch{Prefix: prefix, Kind: kind})
		m.prefixes = append(m.prefixes, prefix)
	}
	for _, u := range snap.Units {
		m.track(m.prefixes[0]+u.Name, fromUnit(u))
	}
	for _, mc := range snap.Machines {
		m.track(m.prefixes[1]+mc.Id, fromMachine(mc))
	}
	for _, app := range snap.Applications {
		m.track(m.prefixes[2]+app.Name, fromApplication(app))
	}
	for _, rel := range snap.Relations {
		m.track(m.prefixes[3]+strconv.FormatInt(rel.Id, 10), fromRelation(rel))
	}
	changes := modelloop.WatchFrom(ctx, w.st, snap.Revision, m.record, watches...)
	modelloop.Follow(ctx, changes, w.clock, m.pass)
}

// entity is what the force-remover keeps of a forced entity: one that is not alive and has a
// deadline (L-F1). Every other entity is forgotten as soon as it is seen.
type entity struct {
	kind, id   string
	life       string
	forceAfter int64
	relID      int64
	// destroyed: for a forced dying machine, the deadline its units were set dying with.
	destroyed int64
}

// forcedOrNil is e when it is forced; a subordinate unit goes with its principal, or with its
// forced application, so it is never forced on its own; a dead machine, application or
// relation is the provisioner's or gone already.
func forcedOrNil(e *entity, subordinate bool) *entity {
	if e.forceAfter == 0 || e.life == string(life.Alive) || subordinate {
		return nil
	}
	if e.kind != state.KindUnit && e.life != string(life.Dying) {
		return nil
	}
	return e
}

func fromUnit(u *storepb.Unit) *entity {
	return forcedOrNil(&entity{kind: state.KindUnit, id: u.Name, life: u.Life, forceAfter: u.ForceAfter}, u.Principal != "")
}

func fromMachine(mc *storepb.Machine) *entity {
	return forcedOrNil(&entity{kind: state.KindMachine, id: mc.Id, life: mc.Life, forceAfter: mc.ForceAfter}, false)
}

func fromApplication(app *storepb.Application) *entity {
	return forcedOrNil(&entity{kind: state.KindApplication, id: app.Name, life: app.Life, forceAfter: app.ForceAfter}, false)
}

func fromRelation(rel *storepb.Relation) *entity {
	return forcedOrNil(&entity{kind: state.KindRelation, id: rel.Key, life: rel.Life, forceAfter: rel.ForceAfter, relID: rel.Id}, false)
}

// model is one model's force-removal loop.
type model struct {
	*Worker
	uuid     string
	prefixes []string // of units, machines, applications, relations

	mu sync.Mutex
	// forced maps each forced entity's key to it.
	forced map[string]*entity
	// deadlines holds (deadline, key) for every forced entity, and stale pairs of entities
	// forgotten or given another deadline since: those are dropped as they come up.
	deadlines deadlineHeap
	// fresh: forced dying machines whose units are still to be set dying.
	fresh map[string]bool
}

// record keeps a watched change; it reports whether a pass is called for: an entity newly
// forced, or given another deadline. The many other writes of a large removal (scopes left,
// counts, statuses) wake nobody.
func (m *model) record(w modelloop.Watch, ev *clientv3.Event) bool {
	key := string(ev.Kv.Key)
	var e *entity
	if ev.Type == clientv3.EventTypePut {
		var err error
		if e, err = decode(w.Kind, ev.Kv.Value); err != nil {
			// Cannot tell: forget it, as a removal would. A whole read (after a restart) sees
			// it again.
			m.log.Error("force-remover: decoding a change", "model", m.uuid, "key", key, "err", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.track(key, e)
}

func decode(kind string, value []byte) (*entity, error) {
	switch kind {
	case state.KindUnit:
		u := &storepb.Unit{}
		err := proto.Unmarshal(value, u)
		return fromUnit(u), err
	case state.KindMachine:
		mc := &storepb.Machine{}
		err := proto.Unmarshal(value, mc)
		return fromMachine(mc), err
	case state.KindApplication:
		app := &storepb.Application{}
		err := proto.Unmarshal(value, app)
		return fromApplication(app), err
	default:
		rel := &storepb.Relation{}
		err := proto.Unmarshal(value, rel)
		return fromRelation(rel), err
	}
}

// track records key's entity as it is now (nil: not forced, or gone); it reports whether the
// entity is newly forced or has another deadline. m.mu is held (or the loop has not started).
func (m *model) track(key string, e *entity) bool {
	old := m.forced[key]
	if e == nil {
		delete(m.forced, key)
		delete(m.fresh, key)
		return false
	}
	m.forced[key] = e
	changed := old == nil || old.forceAfter != e.forceAfter
	if old != nil && old.forceAfter == e.forceAfter {
		e.destroyed = old.destroyed
	}
	if changed {
		heap.Push(&m.deadlines, deadline{at: e.forceAfter, key: key})
	}
	// At once, not at the deadline: the units' agents get the grace period to leave cleanly,
	// and the same deadline.
	if e.kind == state.KindMachine && e.destroyed != e.forceAfter {
		changed = changed || !m.fresh[key]
		m.fresh[key] = true
	}
	return changed
}

// due takes the machines whose units are to be set dying and the entities whose deadline has
// come, and returns the earliest deadline still pending.
func (m *model) due(now int64) (fresh, due []entity, next int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.fresh {
		fresh = append(fresh, *m.forced[key])
	}
	for m.deadlines.Len() > 0 {
		d := m.deadlines[0]
		e := m.forced[d.key]
		if e == nil || e.forceAfter != d.at {
			heap.Pop(&m.deadlines) // stale
			continue
		}
		if d.at > now {
			return fresh, due, d.at
		}
		heap.Pop(&m.deadlines)
		due = append(due, *e)
	}
	return fresh, due, 0
}

// pass applies every step that is due and returns the earliest deadline still pending. Each
// step is idempotent; a failed one is kept and retried (modelloop.Follow's backoff).
func (m *model) pass(ctx context.Context) (time.Time, error) {
	fresh, due, next := m.due(m.clock.Now().UnixNano())
	var failed error
	step := func(what string, e entity, fn func() error) bool {
		if ctx.Err() != nil {
			return false
		}
		m.log.Info("force-remover: "+what, "model", m.uuid, e.kind, e.id, "force-after", time.Unix(0, e.forceAfter).UTC())
		if err := fn(); err != nil {
			if ctx.Err() == nil {
				m.log.Error("force-remover: "+what+" failed; will retry", "model", m.uuid, e.kind, e.id, "err", err)
			}
			failed = err
			return false
		}
		return true
	}

	for _, e := range fresh {
		ok := step("setting machine's units dying", e, func() error {
			return m.st.DestroyMachineUnits(ctx, m.uuid, e.id, e.forceAfter)
		})
		if ok {
			m.destroyedUnits(e)
		}
	}
	// Units first, then machines, applications and relations, as their agents would go.
	order := map[string]int{state.KindUnit: 0, state.KindMachine: 1, state.KindApplication: 2, state.KindRelation: 3}
	slices.SortStableFunc(due, func(a, b entity) int { return order[a.kind] - order[b.kind] })
	for _, e := range due {
		var ok bool
		switch e.kind {
		case state.KindUnit:
			ok = step("removing unit", e, func() error { return m.st.ForceRemoveUnit(ctx, m.uuid, e.id, e.forceAfter) })
		case state.KindMachine:
			ok = step("removing machine", e, func() error { return m.st.ForceRemoveMachine(ctx, m.uuid, e.id, e.forceAfter) })
		case state.KindApplication:
			ok = step("removing application's units", e, func() error {
				return m.st.ForceRemoveApplicationUnits(ctx, m.uuid, e.id, e.forceAfter)
			})
		case state.KindRelation:
			ok = step("leaving relation", e, func() error { return m.st.ForceLeaveRelation(ctx, m.uuid, e.relID) })
		}
		if !ok {
			m.retry(e)
		}
	}

	if ctx.Err() != nil {
		return time.Time{}, ctx.Err()
	}
	if next == 0 {
		return time.Time{}, failed
	}
	return time.Unix(0, next), failed
}

// destroyedUnits marks a machine's units set dying with its deadline, unless the machine has
// changed meanwhile.
func (m *model) destroyedUnits(e entity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := m.keyOf(e)
	if cur := m.forced[key]; cur != nil && cur.forceAfter == e.forceAfter {
		cur.destroyed = e.forceAfter
		delete(m.fresh, key)
	}
}

// retry puts a failed step's deadline back, unless the entity has changed meanwhile (its
// change pushed its own).
func (m *model) retry(e entity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := m.keyOf(e)
	if cur := m.forced[key]; cur != nil && cur.forceAfter == e.forceAfter {
		heap.Push(&m.deadlines, deadline{at: e.forceAfter, key: key})
	}
}

func (m *model) keyOf(e entity) string {
	switch e.kind {
	case state.KindUnit:
		return m.prefixes[0] + e.id
	case state.KindMachine:
		return m.prefixes[1] + e.id
	case state.KindApplication:
		return m.prefixes[2] + e.id
	default:
		return m.prefixes[3] + strconv.FormatInt(e.relID, 10)
	}
}

// deadline is one entity's deadline in the heap.
type deadline struct {
	at  int64
	key string
}

// deadlineHeap is a min-heap of deadlines (container/heap).
type deadlineHeap []deadline

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}
