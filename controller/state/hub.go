package state

import (
	"context"
	"iter"
	"strings"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
)

// hubBuffer is how many events a subscriber may have pending before its subscription is ended
// (it then watches again and re-reads, as after any watch failure).
const hubBuffer = 128

// Hub shares one etcd watch per model among every subscriber (the API server's Watch calls:
// one per agent). Thousands of agents each watching the relations of a model would otherwise
// cost thousands of etcd watchers, and every scope change would be decoded once per agent.
//
// An event costs the lookups of its key and of its key's ancestors plus its own subscribers,
// whatever the number of subscribers to other keys; an idle subscription costs a few hundred
// bytes and no goroutine (100,000 unit agents each hold several).
type Hub struct {
	s   *State
	ctx context.Context
	// mu guards models only: each model's subscribers and deliveries are under the model's own
	// lock, so one model's fan-out never holds up another model's Subscribe or unsubscribe.
	mu     sync.Mutex
	models map[string]*modelHub
	// attempts counts index lookups and subscriber entries looked at, so that a test can show
	// that an event's cost does not grow with subscribers to other keys.
	attempts atomic.Int64
}

type modelHub struct {
	uuid string
	// stop ends the model's watch: when its last subscriber leaves, so that a model nobody
	// watches (a destroyed one) costs no etcd watch.
	stop context.CancelFunc

	mu sync.Mutex
	// index maps every watched key and prefix (ending in "/") to its subscribers: an event's
	// subscribers are those of its key and of its ancestors, a handful of lookups.
	index map[string][]hubEntry
	subs  int
	// dead: the watch ended or its last subscriber left; a later Subscribe starts a fresh one.
	dead bool
	// seq numbers events so that a subscriber whose keys match an event several times is handed
	// it once; matched is the event's subscribers, reused from event to event.
	seq     uint64
	matched []*Subscription
}

// hubEntry is one key of one subscription: sub.keys[key].
type hubEntry struct {
	sub *Subscription
	key int
}

// Subscription is one subscriber's pending events: at most hubBuffer of them, in a queue that
// grows only as they arrive.
type Subscription struct {
	keys []WatchKey

	m *modelHub // the model it is in; set once subscribed

	// Under the model's lock.
	pos    []int // pos[i] is where keys[i]'s entry is in the model's index
	done   bool
	stop   func() bool // releases the context.AfterFunc that ends the subscription (Subscribe's)
	seq    uint64      // the last event matched
	filter filter      // the least filtered of its keys that match that event

	mu     sync.Mutex
	queue  []Event
	ended  bool
	notify chan struct{} // a token when events are pending; closed when the subscription ends
	// ready, when set (SubscribeFunc), replaces notify: called under mu when the queue stops
	// being empty and when the subscription ends.
	ready func()
}

// NewHub returns a hub whose watches stop when ctx ends.
func (s *State) NewHub(ctx context.Context) *Hub {
	return &Hub{s: s, ctx: ctx, models: map[string]*modelHub{}}
}

// Subscribe streams, until ctx ends, the changes to keys that happen after the call returns.
// The subscription ends when ctx ends, when the model's watch fails, or when the subscriber
// falls too far behind; the subscriber then watches again and re-reads.
func (h *Hub) Subscribe(ctx context.Context, uuid string, keys []WatchKey) (*Subscription, error) {
	return h.subscribe(ctx, uuid, &Subscription{keys: keys, notify: make(chan struct{}, 1)}, true)
}

// SubscribeFunc is Subscribe for a subscriber that serves many subscriptions from one
// goroutine (WatchMany: an agent host's thousands of watches on one stream): instead of a
// channel to wait on, ready is called when the subscription has events pending (once until
// Take empties its queue) and when it ends; Take then drains it as usual. ready is called
// with the hub's locks held: it must not block nor call the hub (a non-blocking send, a small
// lock of its own). Ready and Events are not for these subscriptions.
//
// ctx bounds the call only: the subscription lasts until Close (or until the model's watch
// fails or the subscriber falls behind). A context and an after-func per subscription were
// a fifth of jujud's live heap at 20,000 units, and every collection marks them.
func (h *Hub) SubscribeFunc(ctx context.Context, uuid string, keys []WatchKey, ready func()) (*Subscription, error) {
	return h.subscribe(ctx, uuid, &Subscription{keys: keys, ready: ready}, false)
}

// subscribe registers sub in uuid's hub; endWithCtx: ctx's end also ends the subscription.
func (h *Hub) subscribe(ctx context.Context, uuid string, sub *Subscription, endWithCtx bool) (*Subscription, error) {
	sub.pos = make([]int, len(sub.keys))
	for {
		if err := h.ctx.Err(); err != nil {
			return nil, apierr.Errorf(apierr.Unavailable, "cannot watch model %s: the controller is stopping", uuid)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := h.model(ctx, uuid)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		if m.dead {
			// Its last subscriber left or its watch failed since we looked it up.
			m.mu.Unlock()
			h.forget(m)
			continue
		}
		// Registered before any event after this point is dispatched: the model's watch either
		// started after this call's revision or has not dispatched it yet, so nothing is missed.
		m.add(sub)
		sub.m = m
		if endWithCtx {
			sub.stop = context.AfterFunc(ctx, sub.Close)
		}
		m.mu.Unlock()
		return sub, nil
	}
}

// model returns uuid's hub, starting its watch if nobody watches it.
func (h *Hub) model(ctx context.Context, uuid string) (*modelHub, error) {
	h.mu.Lock()
	m, ok := h.models[uuid]
	h.mu.Unlock()
	if ok {
		return m, nil
	}
	// The revision is read without the lock, which every Subscribe takes; whoever gets the lock
	// back first starts the watch.
	rev, err := h.s.Revision(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if m, ok := h.models[uuid]; ok {
		return m, nil
	}
	watchCtx, stop := context.WithCancel(h.ctx)
	m = &modelHub{uuid: uuid, stop: stop, index: map[string][]hubEntry{}}
	h.models[uuid] = m
	go h.run(watchCtx, m, rev+1)
	return m, nil
}

// forget removes m from the hub if it is still there (dead, so that it is not used again).
func (h *Hub) forget(m *modelHub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.models[m.uuid] == m {
		delete(h.models, m.uuid)
	}
}

// Ready receives when events are pending, and at once for ever once the subscription ended.
// It may also receive when nothing is pending: Take then returns no events. Subscribe's
// subscriptions only (SubscribeFunc's have no channel).
func (s *Subscription) Ready() <-chan struct{} { return s.notify }

// Take removes and returns the pending events; ok is false once the subscription has ended
// (the events returned with it are its last).
func (s *Subscription) Take() (events []Event, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	events, s.queue = s.queue, nil
	return events, !s.ended
}

// Events yields every event until the subscription ends.
func (s *Subscription) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			<-s.notify
			events, ok := s.Take()
			for _, ev := range events {
				if !yield(ev) {
					return
				}
			}
			if !ok {
				return
			}
		}
	}
}

// push queues ev; false when the subscriber is too far behind.
func (s *Subscription) push(ev Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return true
	}
	if len(s.queue) >= hubBuffer {
		return false
	}
	s.queue = append(s.queue, ev)
	if s.ready != nil {
		// Once per filling: until Take empties the queue, the subscriber knows already.
		if len(s.queue) == 1 {
			s.ready()
		}
		return true
	}
	select {
	case s.notify <- struct{}{}:
	default: // a token is already there
	}
	return true
}

func (s *Subscription) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	if s.ready != nil {
		s.ready()
		return
	}
	close(s.notify)
}

// add indexes sub's keys; m.mu is held. A key others watch too (every unit agent watches its
// application, the relations, the model) then shares their copy: the subscriber's own becomes
// garbage, instead of five strings a unit living as long as its agent.
func (m *modelHub) add(sub *Subscription) {
	for i, k := range sub.keys {
		entries := m.index[k.Key]
		if len(entries) > 0 {
			first := entries[0]
			sub.keys[i].Key = first.sub.keys[first.key].Key
		}
		sub.pos[i] = len(entries)
		m.index[k.Key] = append(entries, hubEntry{sub: sub, key: i})
	}
	m.subs++
}

// Close ends the subscription, if it has not ended; its pending events stay for Take.
func (s *Subscription) Close() {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drop(s)
}

// drop removes sub and ends it (once); the last subscriber to leave stops the model's watch.
// m.mu is held.
func (m *modelHub) drop(sub *Subscription) {
	if sub.done {
		return
	}
	sub.done = true
	for i, k := range sub.keys {
		m.remove(k.Key, sub.pos[i])
	}
	sub.pos = nil
	m.subs--
	if sub.stop != nil {
		sub.stop()
	}
	sub.end()
	if m.subs == 0 && !m.dead {
		m.dead = true
		m.stop() // run then leaves the hub
	}
}

// remove takes the entry at pos out of key's subscribers: the last entry takes its place, so
// that leaving costs the same however many watch the key (every unit agent watches relations).
func (m *modelHub) remove(key string, pos int) {
	entries := m.index[key]
	last := len(entries) - 1
	if pos != last {
		moved := entries[last]
		entries[pos] = moved
		moved.sub.pos[moved.key] = pos
	}
	entries[last] = hubEntry{}
	entries = entries[:last]
	switch {
	case len(entries) == 0:
		delete(m.index, key)
	case cap(entries) > 64 && len(entries) < cap(entries)/4:
		// Most of the key's subscribers left (a removed application's units): give it back.
		m.index[key] = append([]hubEntry(nil), entries...)
	default:
		m.index[key] = entries
	}
}

// run is the model's one watch: every event is classified once, its life decoded at most once,
// and handed to each matching subscriber.
func (h *Hub) run(ctx context.Context, m *modelHub, fromRev int64) {
	defer m.stop()
	prefix := ModelPrefix(m.uuid)
	wc := h.s.kv.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(fromRev))
	for resp := range wc {
		if resp.Err() != nil {
			break
		}
		m.mu.Lock()
		for _, ev := range resp.Events {
			h.dispatch(m, prefix, ev)
		}
		m.mu.Unlock()
	}
	// The watch ended: every subscriber re-watches, which starts a fresh model watch.
	m.mu.Lock()
	m.dead = true
	var subs []*Subscription
	for _, entries := range m.index {
		for _, e := range entries {
			subs = append(subs, e.sub)
		}
	}
	for _, sub := range subs {
		m.drop(sub)
	}
	m.mu.Unlock()
	h.forget(m)
}

// dispatch hands ev to the subscribers of its key and of its key's ancestors; m.mu is held.
func (h *Hub) dispatch(m *modelHub, prefix string, ev *clientv3.Event) {
	key := string(ev.Kv.Key)
	kind, id := classify(key, prefix)
	if kind == "" {
		return
	}
	m.seq++
	matched := m.matched[:0]
	attempts := 0
	visit := func(k string) {
		entries := m.index[k]
		attempts += 1 + len(entries)
		for _, e := range entries {
			sub := e.sub
			if sub.seq != m.seq {
				sub.seq, sub.filter = m.seq, filterLife
				matched = append(matched, sub)
			}
			sub.filter = min(sub.filter, sub.keys[e.key].filter())
		}
	}
	if !strings.HasSuffix(key, "/") {
		visit(key)
	}
	// A whole-model watch is for what status shows: tasks (every action-log line) are not, and
	// would only make status and wait-for re-read the model.
	taskKind := kind == KindTask || kind == KindTasks
	for i := 0; i < len(key); i++ {
		if key[i] == '/' && !(taskKind && i == len(prefix)-1) {
			visit(key[:i+1])
		}
	}
	h.attempts.Add(int64(attempts))

	out := Event{Kind: kind, ID: id, Removed: ev.Type == clientv3.EventTypeDelete, Revision: ev.Kv.ModRevision}
	var same sameness
	for _, sub := range matched {
		// A subscriber whose every matching key is LifeOnly hears of creations, removals and
		// life changes only; one whose keys ignore statuses, of everything but those.
		if sub.filter != filterNone && ev.Type == clientv3.EventTypePut && ev.PrevKv != nil &&
			same.of(kind, ev.PrevKv.Value, ev.Kv.Value, sub.filter) {
			continue
		}
		if !sub.push(out) {
			m.drop(sub) // too far behind: it re-watches and re-reads
		}
	}
	clear(matched) // hold no subscription past its event
	m.matched = matched[:0]
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
