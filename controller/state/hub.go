package state

import (
	"context"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// hubBuffer is how far a subscriber may fall behind before its subscription is ended (it then
// watches again and re-reads, as after any watch failure).
const hubBuffer = 128

// Hub shares one etcd watch per model among every subscriber (the API server's Watch calls:
// one per agent). Thousands of agents each watching the relations of a model would otherwise
// cost thousands of etcd watchers, and every scope change would be decoded once per agent.
type Hub struct {
	s      *State
	ctx    context.Context
	mu     sync.Mutex
	models map[string]*modelHub
}

type modelHub struct {
	uuid     string
	exact    map[string]map[*subscription]bool
	prefixes map[*subscription][]WatchKey
	// stop ends the model's watch: when its last subscriber leaves, so that a model nobody
	// watches (a destroyed one) costs no etcd watch.
	stop context.CancelFunc
}

type subscription struct {
	keys []WatchKey
	ch   chan Event
	done bool
}

// NewHub returns a hub whose watches stop when ctx ends.
func (s *State) NewHub(ctx context.Context) *Hub {
	return &Hub{s: s, ctx: ctx, models: map[string]*modelHub{}}
}

// Subscribe streams, until ctx ends, the changes to keys that happen after the call returns.
// The channel closes when ctx ends, when the model's watch fails, or when the subscriber falls
// too far behind; the subscriber then watches again and re-reads.
func (h *Hub) Subscribe(ctx context.Context, uuid string, keys []WatchKey) (<-chan Event, error) {
	sub := &subscription{keys: keys, ch: make(chan Event, hubBuffer)}
	h.mu.Lock()
	m, ok := h.models[uuid]
	if !ok {
		// The model's first subscriber starts its watch. The revision is read without the lock,
		// which every model's event delivery takes; whoever gets the lock back first starts it.
		h.mu.Unlock()
		rev, err := h.s.Revision(ctx)
		if err != nil {
			return nil, err
		}
		h.mu.Lock()
		if m, ok = h.models[uuid]; !ok {
			watchCtx, stop := context.WithCancel(h.ctx)
			m = &modelHub{uuid: uuid, exact: map[string]map[*subscription]bool{}, prefixes: map[*subscription][]WatchKey{}, stop: stop}
			h.models[uuid] = m
			go h.run(watchCtx, m, rev+1)
		}
	}
	// Registered before any event after this point is dispatched: the model's watch either
	// started after this call's revision or has not dispatched it yet, so nothing is missed.
	for _, k := range keys {
		if strings.HasSuffix(k.Key, "/") {
			m.prefixes[sub] = append(m.prefixes[sub], k)
			continue
		}
		if m.exact[k.Key] == nil {
			m.exact[k.Key] = map[*subscription]bool{}
		}
		m.exact[k.Key][sub] = true
	}
	h.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-h.ctx.Done():
		}
		h.unsubscribe(m, sub)
	}()
	return sub.ch, nil
}

// unsubscribe removes sub and closes its channel (once).
func (h *Hub) unsubscribe(m *modelHub, sub *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(m, sub)
}

func (h *Hub) drop(m *modelHub, sub *subscription) {
	if sub.done {
		return
	}
	sub.done = true
	for _, k := range sub.keys {
		if set := m.exact[k.Key]; set != nil {
			delete(set, sub)
			if len(set) == 0 {
				delete(m.exact, k.Key)
			}
		}
	}
	delete(m.prefixes, sub)
	close(sub.ch)
	if len(m.exact) == 0 && len(m.prefixes) == 0 {
		if h.models[m.uuid] == m {
			delete(h.models, m.uuid)
		}
		m.stop()
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
		h.mu.Lock()
		for _, ev := range resp.Events {
			key := string(ev.Kv.Key)
			kind, id := classify(key, prefix)
			if kind == "" {
				continue
			}
			out := Event{Kind: kind, ID: id, Removed: ev.Type == clientv3.EventTypeDelete, Revision: ev.Kv.ModRevision}
			lifeSame, decoded := false, false
			deliver := func(sub *subscription, lifeOnly bool) {
				if lifeOnly && ev.Type == clientv3.EventTypePut && ev.PrevKv != nil {
					if !decoded {
						lifeSame, decoded = lifeOf(kind, ev.PrevKv.Value) == lifeOf(kind, ev.Kv.Value), true
					}
					if lifeSame {
						return
					}
				}
				select {
				case sub.ch <- out:
				default:
					h.drop(m, sub) // too far behind: it re-watches and re-reads
				}
			}
			for sub := range m.exact[key] {
				for _, k := range sub.keys {
					if k.Key == key {
						deliver(sub, k.LifeOnly)
						break
					}
				}
			}
			// A whole-model watch is for what status shows: tasks (every action-log line) are
			// not, and would only make status and wait-for re-read the model.
			taskKind := kind == KindTask || kind == KindTasks
			for sub, keys := range m.prefixes {
				for _, k := range keys {
					if strings.HasPrefix(key, k.Key) && !(taskKind && k.Key == prefix) {
						deliver(sub, k.LifeOnly)
						break
					}
				}
			}
		}
		h.mu.Unlock()
	}
	// The watch ended: every subscriber re-watches, which starts a fresh model watch.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.models[m.uuid] == m {
		delete(h.models, m.uuid)
	}
	for _, key := range mapKeys(m.exact) {
		for sub := range m.exact[key] {
			h.drop(m, sub)
		}
	}
	for sub := range m.prefixes {
		h.drop(m, sub)
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
