package apiserver

import (
	"sync"
	"time"
)

// DefaultPresenceGrace is how long an agent may go without a watch before status calls it lost:
// agents reconnect with a backoff of up to 5 s, so twice that.
const DefaultPresenceGrace = 10 * time.Second

// presenceNotifyMargin delays the "now lost" notification a little past the grace, so that a
// status read on that notification is past it too.
const presenceNotifyMargin = 50 * time.Millisecond

// presence knows which agents are connected. A running agent (machine or unit) keeps a Watch
// open on the API, so an agent with no watch open is stopped or cannot reach the controller.
// As in Juju 3, this lives in the API server's memory, not in the store: a controller that has
// just started knows nothing yet, so an agent without a watch counts as lost only once none has
// been open for longer than the grace, measured from the controller's start or the close of its
// last watch, whichever came later. Safe for concurrent use.
type presence struct {
	now     func() time.Time
	grace   time.Duration
	started time.Time

	mu sync.Mutex
	// agents holds, by model, the agents with a watch open and those whose last one closed
	// within the grace (an agent absent from it is lost once the controller is older than the
	// grace).
	agents map[string]map[agentID]*agentWatches
	subs   map[string]map[*presenceSub]struct{} // by model
}

// agentID names an agent in its model: kind "machine" or "unit", the machine id or unit name.
type agentID struct{ kind, id string }

type agentWatches struct {
	open   int
	closed time.Time // when the last watch closed
}

func newPresence(now func() time.Time, grace time.Duration) *presence {
	p := &presence{now: now, grace: grace, started: now(), agents: map[string]map[agentID]*agentWatches{},
		subs: map[string]map[*presenceSub]struct{}{}}
	// At the end of the start's grace, every agent that never connected turns lost at once.
	time.AfterFunc(grace+presenceNotifyMargin, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, subs := range p.subs {
			for sub := range subs {
				sub.notify(presenceChange{})
			}
		}
	})
	return p
}

// lostLocked reports whether w (nil: no watch since the controller started) counts as lost at
// now. p.mu is held.
func (p *presence) lostLocked(w *agentWatches, now time.Time) bool {
	if w != nil && w.open > 0 {
		return false
	}
	since := p.started
	if w != nil && w.closed.After(since) {
		since = w.closed
	}
	return now.Sub(since) > p.grace
}

// connect records a watch the agent opened; the function returned records its end (calling it
// again does nothing).
func (p *presence) connect(model, kind, id string) (disconnect func()) {
	a := agentID{kind, id}
	p.mu.Lock()
	agents := p.agents[model]
	if agents == nil {
		agents = map[agentID]*agentWatches{}
		p.agents[model] = agents
	}
	w := agents[a]
	if p.lostLocked(w, p.now()) {
		p.notifyLocked(model, a) // back from lost
	}
	if w == nil {
		w = &agentWatches{}
		agents[a] = w
	}
	w.open++
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { p.disconnect(model, a, w) }) }
}

func (p *presence) disconnect(model string, a agentID, w *agentWatches) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.open--
	if w.open > 0 {
		return
	}
	closed := p.now()
	w.closed = closed
	// Lost once the grace passes without another watch: tell the watchers of status then, and
	// forget the agent (absent, it counts as lost all the same).
	time.AfterFunc(p.grace+presenceNotifyMargin, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.agents[model][a] != w || w.open > 0 || !w.closed.Equal(closed) || !p.lostLocked(w, p.now()) {
			return
		}
		delete(p.agents[model], a)
		if len(p.agents[model]) == 0 {
			delete(p.agents, model)
		}
		p.notifyLocked(model, a)
	})
}

// alive returns, for one model, whether the agent of a machine (kind "machine") or unit (kind
// "unit") counts as connected; the view is taken once, for one status.
func (p *presence) alive(model string) func(kind, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	lost := func(w *agentWatches) bool { return p.lostLocked(w, now) }
	if !lost(nil) {
		// Within the start's grace every agent counts as connected; nothing to copy.
		return func(string, string) bool { return true }
	}
	connected := map[agentID]bool{}
	for a, w := range p.agents[model] {
		if !lost(w) {
			connected[a] = true
		}
	}
	return func(kind, id string) bool { return connected[agentID{kind, id}] }
}

// presenceChange names an agent whose connectedness changed; the zero value means any agent of
// the model (the controller's start grace ended).
type presenceChange struct{ kind, id string }

// presenceSub receives a model's presence changes; wake holds at most one pending signal and
// take returns what changed since the last take.
type presenceSub struct {
	wake    chan struct{}
	mu      sync.Mutex
	pending []presenceChange
}

func (s *presenceSub) notify(c presenceChange) {
	s.mu.Lock()
	// Bounded: a subscriber that is far behind is told "any agent", once.
	if len(s.pending) >= 1000 {
		s.pending = append(s.pending[:0], presenceChange{})
	} else {
		s.pending = append(s.pending, c)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *presenceSub) take() []presenceChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

// subscribe follows the presence changes of a model's agents until the returned function is
// called.
func (p *presence) subscribe(model string) (*presenceSub, func()) {
	sub := &presenceSub{wake: make(chan struct{}, 1)}
	p.mu.Lock()
	if p.subs[model] == nil {
		p.subs[model] = map[*presenceSub]struct{}{}
	}
	p.subs[model][sub] = struct{}{}
	p.mu.Unlock()
	return sub, func() {
		p.mu.Lock()
		delete(p.subs[model], sub)
		if len(p.subs[model]) == 0 {
			delete(p.subs, model)
		}
		p.mu.Unlock()
	}
}

// notifyLocked tells the model's subscribers that agent a changed. p.mu is held.
func (p *presence) notifyLocked(model string, a agentID) {
	for sub := range p.subs[model] {
		sub.notify(presenceChange{kind: a.kind, id: a.id})
	}
}
