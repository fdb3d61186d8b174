// Package modelloop is the skeleton the controller's per-model workers share (provisioner,
// cleaner, force-remover): Run keeps one goroutine per model, started as models appear, and
// Follow re-reads a model after every burst of watched changes, or when a timer the worker asked
// for fires. Workers react to etcd watches and never poll (design: State).
package modelloop

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/state"
)

// Clock is the time source of a worker's timers; tests use a fake one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// RealClock is the wall clock.
var RealClock Clock = realClock{}

// Models is what Run needs of the state; *state.State has it.
type Models interface {
	ModelUUIDs(ctx context.Context) ([]string, error)
	WatchModels(ctx context.Context) clientv3.WatchChan
}

// restartPause is how long Run waits before watching the models again, or starting again a
// model's goroutine that stopped on its own (its watch failed).
const restartPause = time.Second

// Run calls run(ctx, uuid) in a goroutine of its own for every model, starting it as models
// appear, until ctx ends; it then waits for them all to return. A run that returns while ctx
// is still alive (its watch failed) is started again after a pause, for as long as its model
// exists. A model that is gone (destroy-model removed it) has its run's context cancelled, so
// no loop outlives its model. name prefixes the log messages.
func Run(ctx context.Context, models Models, log *slog.Logger, name string, run func(ctx context.Context, uuid string)) {
	runLoop(ctx, models, log, name, run, restartPause)
}

func runLoop(ctx context.Context, models Models, log *slog.Logger, name string, run func(ctx context.Context, uuid string), pause time.Duration) {
	l := &loop{models: models, log: log, name: name, run: run, pause: pause, running: map[string]context.CancelFunc{}}
	defer l.wg.Wait()
	for ctx.Err() == nil {
		l.follow(ctx)
		if ctx.Err() == nil {
			log.Warn(name+": watching models failed; watching again", "pause", pause)
		}
		sleep(ctx, pause)
	}
}

// follow starts model loops as models appear, until ctx ends or the models' watch fails.
func (l *loop) follow(ctx context.Context) {
	// Watch first, then list: a model created in between is not missed. The model loops live
	// on ctx; a failed watch is abandoned with its own context, not leaked.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := l.models.WatchModels(wctx)
	var retry <-chan time.Time
	for {
		if err := l.start(ctx); err != nil {
			retry = time.After(l.pause)
		} else {
			retry = nil
		}
		select {
		case <-ctx.Done():
			return
		case resp, ok := <-watch:
			if !ok || resp.Err() != nil {
				return
			}
		case <-retry:
		}
	}
}

type loop struct {
	models Models
	log    *slog.Logger
	name   string
	run    func(ctx context.Context, uuid string)
	pause  time.Duration

	mu sync.Mutex
	// running: the models with a loop, and how to stop it.
	running map[string]context.CancelFunc
	wg      sync.WaitGroup
}

// start starts the goroutine of every model that has none, and stops those of models that are
// gone.
func (l *loop) start(ctx context.Context) error {
	uuids, err := l.models.ModelUUIDs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Error(l.name+": listing models", "err", err)
		}
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for uuid, stop := range l.running {
		if !slices.Contains(uuids, uuid) {
			stop()
		}
	}
	for _, uuid := range uuids {
		if l.running[uuid] != nil || ctx.Err() != nil {
			continue
		}
		mctx, stop := context.WithCancel(ctx)
		l.running[uuid] = stop
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer l.forget(uuid)
			l.model(mctx, uuid)
		}()
	}
	return nil
}

// forget drops a model whose loop has returned for good.
func (l *loop) forget(uuid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stop := l.running[uuid]; stop != nil {
		stop()
		delete(l.running, uuid)
	}
}

// model runs one model's loop, again after a pause whenever it stops on its own.
func (l *loop) model(ctx context.Context, uuid string) {
	for {
		l.run(ctx, uuid)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn(l.name+": model loop stopped; restarting", "model", uuid, "pause", l.pause)
		if !sleep(ctx, l.pause) {
			return
		}
		uuids, err := l.models.ModelUUIDs(ctx)
		if err == nil && !slices.Contains(uuids, uuid) {
			return
		}
	}
}

// sleep waits for d or until ctx ends; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Backoff bounds the retry timer of a pass that failed: it starts at MinBackoff and doubles
// while passes keep failing, up to MaxBackoff.
const (
	MinBackoff = 500 * time.Millisecond
	MaxBackoff = 30 * time.Second
)

// Reread is one full pass of a worker over its model. next, when not zero, is when the pass
// wants to run again even if nothing changes (a deadline it waits for). An error says the pass
// is incomplete: it runs again on the next change or after a backoff, whichever comes first.
// A Reread logs its own errors.
type Reread func(ctx context.Context) (next time.Time, err error)

// Follow runs reread at once, then again after every burst of events (one event and all those
// already queued behind it, so one transaction touching many documents costs one pass), and
// when the time reread asked for comes or its backoff after an error ends. It returns when ctx
// ends or events is closed (the watch failed: the caller watches again, and its first pass
// re-reads everything).
//
// The caller starts the watch before calling Follow (see WatchStore), so that nothing changing
// between the watch and the first pass is missed.
func Follow[T any](ctx context.Context, events <-chan T, clock Clock, reread Reread) {
	if clock == nil {
		clock = RealClock
	}
	backoff := MinBackoff
	for ctx.Err() == nil {
		next, err := reread(ctx)
		wait := time.Duration(-1)
		if !next.IsZero() {
			wait = max(next.Sub(clock.Now()), 0)
		}
		if err != nil {
			if wait < 0 || backoff < wait {
				wait = backoff
			}
			backoff = min(backoff*2, MaxBackoff)
		} else {
			backoff = MinBackoff
		}
		var wake <-chan time.Time
		if wait >= 0 {
			wake = clock.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok || !drain(events) {
				return
			}
		case <-wake:
		}
	}
}

// drain takes every event already queued; it reports false if the channel was closed.
func drain[T any](events <-chan T) bool {
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return false
			}
		default:
			return true
		}
	}
}

// Watch is one key prefix a worker watches, and which changes under it matter.
type Watch struct {
	Prefix string
	// PrevKV asks for each change's previous value (ev.PrevKv), for Keep to compare.
	PrevKV bool
	// DeletesOnly has the store send deletions alone: the writes of a busy model (status
	// updates of a thousand units) are not even sent.
	DeletesOnly bool
	// Keep picks the changes the worker reacts to; nil keeps every change. Filtering here keeps
	// a worker from re-reading its model for every write of a large removal.
	Keep func(ev *clientv3.Event) bool
	// Kind and Name say which entity a kept change is about, for WatchChanges: Name returns
	// it (false: no entity to act on); nil names it Kind, with its key after Prefix as id.
	Kind string
	Name func(ev *clientv3.Event) (Change, bool)
}

// WatchStore watches key prefixes of the store from its current revision on and signals, at
// most one signal pending, that a kept change happened: every change committed after
// WatchStore returns is seen, whenever the watches get registered, so a pass started after it
// misses nothing. The channel closes when ctx ends or any of the watches fails.
//
// It watches the store directly rather than through state.Hub so that workers can filter
// changes on their content (Keep) and watch documents the hub does not classify (cleanups),
// and get one merged signal rather than events.
func WatchStore(ctx context.Context, st *state.State, watches ...Watch) (<-chan struct{}, error) {
	rev, err := st.Revision(ctx)
	if err != nil {
		return nil, err
	}
	return watchStore(ctx, st, rev, nil, watches), nil
}

// WatchFrom watches key prefixes of the store from the change after rev on, for a worker that
// read its model at rev (state.Snapshot) and then keeps what it needs up to date from the
// events' own values rather than by reading again (issue 16). record is called, in the watch's
// goroutine, for every kept event, in order per watch; it says whether the change calls for a
// pass, and the signal comes after it. The channel closes as WatchStore's does.
func WatchFrom(ctx context.Context, st *state.State, rev int64, record func(Watch, *clientv3.Event) bool, watches ...Watch) <-chan struct{} {
	return watchStore(ctx, st, rev, record, watches)
}

// Change names one entity a kept event changed (Watch.Kind and Name).
type Change struct {
	Kind, ID string
}

// Changes is the set of entities changed since a worker last took them, for a worker that
// acts on what changed rather than re-reading its model (issue 16: a pass over the whole
// model per event costs O(N) per change, O(N²) over a deploy of N).
type Changes struct {
	// C signals, at most one signal pending, that Take has something; it closes when the
	// watch fails or ctx ends (as WatchStore's channel).
	C <-chan struct{}

	mu      sync.Mutex
	pending map[Change]struct{}
}

// Take returns the entities changed since the last Take, each once however often it changed
// (a burst of writes to one machine is one change).
func (c *Changes) Take() []Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Change, 0, len(c.pending))
	for ch := range c.pending {
		out = append(out, ch)
	}
	clear(c.pending)
	return out
}

func (c *Changes) add(ch Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[ch] = struct{}{}
}

// WatchChanges is WatchStore that also records which entity each kept event changed (its
// Watch's Kind and Name), for Changes.Take. The change is recorded before the signal, so a
// pass woken by C finds it; a change recorded during a pass leaves a signal for the next.
func WatchChanges(ctx context.Context, st *state.State, watches ...Watch) (*Changes, error) {
	c := &Changes{pending: map[Change]struct{}{}}
	record := func(w Watch, ev *clientv3.Event) bool {
		if w.Name == nil {
			c.add(Change{Kind: w.Kind, ID: strings.TrimPrefix(string(ev.Kv.Key), w.Prefix)})
		} else if ch, ok := w.Name(ev); ok {
			c.add(ch)
		}
		return true
	}
	rev, err := st.Revision(ctx)
	if err != nil {
		return nil, err
	}
	c.C = watchStore(ctx, st, rev, record, watches)
	return c, nil
}

func watchStore(ctx context.Context, st *state.State, rev int64, record func(Watch, *clientv3.Event) bool, watches []Watch) <-chan struct{} {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for _, w := range watches {
		opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(rev + 1)}
		if w.PrevKV {
			opts = append(opts, clientv3.WithPrevKV())
		}
		if w.DeletesOnly {
			opts = append(opts, clientv3.WithFilterPut())
		}
		wc := st.Client().Watch(clientv3.WithRequireLeader(ctx), w.Prefix, opts...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel() // one failed watch ends them all: the caller watches again
			for resp := range wc {
				if resp.Err() != nil {
					return
				}
				kept := false
				for _, ev := range resp.Events {
					if w.Keep != nil && !w.Keep(ev) {
						continue
					}
					if record == nil {
						kept = true
						break // one kept change is enough for a signal
					}
					if record(w, ev) {
						kept = true
					}
				}
				if kept {
					select {
					case out <- struct{}{}:
					default: // a signal is pending already
					}
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		cancel()
		close(out)
	}()
	return out
}
