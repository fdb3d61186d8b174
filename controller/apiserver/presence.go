package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"iter"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/state"
)

// DefaultPresenceGrace is how long an agent may go without a watch before status calls it lost:
// agents reconnect with a backoff of up to 5 s, so twice that.
const DefaultPresenceGrace = 10 * time.Second

// presenceNotifyMargin delays the "now lost" notification a little past the grace, so that a
// status read on that notification is past it too.
const presenceNotifyMargin = 50 * time.Millisecond

// presenceFlushDelay gathers connects and disconnects into one round of transactions: thousands
// of agents reconnecting at once cost a few transactions of up to 100 records each, and the
// other members learn of a connect this much later (this member knows at once).
const presenceFlushDelay = 100 * time.Millisecond

// presenceWriteTimeout bounds each presence transaction and lease grant.
const presenceWriteTimeout = 5 * time.Second

// presence knows which agents are connected. A running agent (machine or unit) keeps a Watch
// open on the API, so an agent with no watch open is stopped or cannot reach the controller.
//
// Each API server counts the watches open on it, in memory, as in Juju 3; a member of an HA
// controller also publishes its connected agents in the store (state.WritePresence), so that
// every member sees the agents connected to any member. An agent counts as connected when this
// server has a watch of it open or closed within the grace, or another member has a record of
// it (a member deletes its record only once the grace after the agent's last watch passed, and
// a killed member's records vanish with its lease, so an agent moving to another member never
// looks lost). A server that has just started knows nothing yet: within the grace after its
// start every agent counts as connected. Safe for concurrent use.
type presence struct {
	now     func() time.Time
	grace   time.Duration
	started time.Time
	store   *presenceStore // nil: this server's memory only

	mu sync.Mutex
	// agents holds, by model, the agents with a watch open and those whose last one closed
	// within the grace (an agent absent from it is lost once the server is older than the
	// grace, unless another member has a record of it).
	agents map[string]map[agentID]*agentWatches
	subs   map[string]*modelPresence // by model, while it has subscribers
	// expiries are the agents whose last watch closed, in the order their grace ends (every
	// grace is as long): one timer serves them all, whatever the number of agents.
	expiries    []expiry
	expiryTimer *time.Timer
}

// agentID names an agent in its model: kind "machine" or "unit", the machine id or unit name.
type agentID struct{ kind, id string }

type agentRef struct {
	model string
	agentID
}

type agentWatches struct {
	open   int
	closed time.Time // when the last watch closed
	closes int       // counts the closes, so that a queued expiry knows it was overtaken
	stored bool      // this member's record of the agent is in the store or on its way
}

type expiry struct {
	ref    agentRef
	w      *agentWatches
	closes int
	due    time.Time // real time, as timers go
}

// presenceStore is what a server needs to share its agents' presence. Its variable fields are
// guarded by presence.mu.
type presenceStore struct {
	st     *state.State
	ctx    context.Context // ends the writes and watches (the server's shutdown)
	member string
	log    *slog.Logger
	// ownLease: the server grants its records' lease itself and keeps it alive (its daemon
	// gave it none).
	ownLease bool

	lease    clientv3.LeaseID // 0: none yet, or lost (ownLease)
	pending  map[agentRef]bool
	queued   bool // a flush is scheduled
	flushing bool
	backoff  time.Duration
}

// newPresence returns the presence of a server alone (tests of the counting): nothing is
// shared with other members.
func newPresence(now func() time.Time, grace time.Duration) *presence {
	p := &presence{now: now, grace: grace, started: now(), agents: map[string]map[agentID]*agentWatches{},
		subs: map[string]*modelPresence{}}
	// At the end of the start's grace, every agent that never connected turns lost at once.
	time.AfterFunc(grace+presenceNotifyMargin, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, m := range p.subs {
			for sub := range m.subs {
				sub.notify(presenceChange{})
			}
		}
	})
	return p
}

// newSharedPresence returns the presence of a controller member that shares it through the
// store until ctx ends: its records carry member (a random id when empty) and are put on lease
// (0: a lease of the server's own, with a TTL of the grace, kept alive until ctx ends). The
// lease is not revoked at the end: the records then last as long as the grace would have,
// and agents that move to another member meanwhile never look lost.
func newSharedPresence(ctx context.Context, st *state.State, member string, lease clientv3.LeaseID, now func() time.Time, grace time.Duration, log *slog.Logger) *presence {
	if member == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		member = "api-" + hex.EncodeToString(b)
	}
	p := newPresence(now, grace)
	p.store = &presenceStore{st: st, ctx: ctx, member: member, log: log, lease: lease, ownLease: lease == 0,
		pending: map[agentRef]bool{}}
	return p
}

// lostLocked reports whether w (nil: no watch since the server started) counts as lost here
// at now, whatever other members know. p.mu is held.
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

// elsewhereLocked reports whether another member is known to have a record of the agent (known
// only for models with subscribers, the only ones told of changes). p.mu is held.
func (p *presence) elsewhereLocked(ref agentRef) bool {
	m := p.subs[ref.model]
	return m != nil && m.others[ref.agentID] > 0
}

// connect records a watch the agent opened; the function returned records its end (calling it
// again does nothing).
func (p *presence) connect(model, kind, id string) (disconnect func()) {
	ref := agentRef{model, agentID{kind, id}}
	p.mu.Lock()
	agents := p.agents[model]
	if agents == nil {
		agents = map[agentID]*agentWatches{}
		p.agents[model] = agents
	}
	w := agents[ref.agentID]
	if p.lostLocked(w, p.now()) && !p.elsewhereLocked(ref) {
		p.notifyLocked(ref) // back from lost
	}
	if w == nil {
		w = &agentWatches{}
		agents[ref.agentID] = w
	}
	w.open++
	if p.store != nil && !w.stored {
		w.stored = true
		p.queueWriteLocked(ref, true)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { p.disconnect(ref, w) }) }
}

func (p *presence) disconnect(ref agentRef, w *agentWatches) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.open--
	if w.open > 0 {
		return
	}
	w.closed = p.now()
	w.closes++
	// Lost once the grace passes without another watch: then tell the watchers of status,
	// withdraw the record and forget the agent (absent, it counts as lost all the same).
	p.expiries = append(p.expiries, expiry{ref: ref, w: w, closes: w.closes, due: time.Now().Add(p.grace + presenceNotifyMargin)})
	if len(p.expiries) == 1 {
		p.armExpiryLocked()
	}
}

// armExpiryLocked sets the timer for the first expiry. p.mu is held.
func (p *presence) armExpiryLocked() {
	d := time.Until(p.expiries[0].due)
	if p.expiryTimer == nil {
		p.expiryTimer = time.AfterFunc(d, p.expire)
		return
	}
	p.expiryTimer.Reset(d)
}

// expire ends the grace of the agents whose time has come.
func (p *presence) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now, wall := p.now(), time.Now()
	for len(p.expiries) > 0 && !p.expiries[0].due.After(wall) {
		e := p.expiries[0]
		p.expiries[0] = expiry{}
		p.expiries = p.expiries[1:]
		agents := p.agents[e.ref.model]
		if agents[e.ref.agentID] != e.w || e.w.open > 0 || e.w.closes != e.closes {
			continue // back, or closed again later: a later expiry of its own
		}
		if !p.lostLocked(e.w, now) {
			// The server's clock is behind the timers' (tests move it): look again later.
			// Queued at the end, due after every other expiry, the queue stays in order.
			e.due = wall.Add(p.grace + presenceNotifyMargin)
			p.expiries = append(p.expiries, e)
			continue
		}
		delete(agents, e.ref.agentID)
		if len(agents) == 0 {
			delete(p.agents, e.ref.model)
		}
		if e.w.stored {
			p.queueWriteLocked(e.ref, false)
		}
		if !p.elsewhereLocked(e.ref) {
			p.notifyLocked(e.ref)
		}
	}
	if len(p.expiries) == 0 {
		p.expiries = nil // lets go of the array a storm of disconnects grew
		return
	}
	p.armExpiryLocked()
}

// alive returns, for one model, whether the agent of a machine (kind "machine") or unit (kind
// "unit") counts as connected, for the agents asked about (any other counts as connected); the
// view is taken once, for one status. The other members' records are read from the store only
// when an agent asked about is lost here: a controller of one member whose agents are all
// connected reads none, where a read of a 100,000-unit model's records is a fifth of a status
// call's CPU.
func (p *presence) alive(ctx context.Context, model string, asked iter.Seq[agentID]) (func(kind, id string) bool, error) {
	p.mu.Lock()
	now := p.now()
	if !p.lostLocked(nil, now) {
		// Within the start's grace every agent counts as connected; nothing to copy.
		p.mu.Unlock()
		return func(string, string) bool { return true }, nil
	}
	agents := p.agents[model]
	lost := map[agentID]bool{}
	for a := range asked {
		if p.lostLocked(agents[a], now) {
			lost[a] = true
		}
	}
	p.mu.Unlock()
	if len(lost) > 0 && p.store != nil {
		records, _, err := p.store.st.Presence(ctx, model)
		if err != nil {
			return nil, err
		}
		for _, r := range records {
			// This member's own records are what it knows better in memory (a record of an
			// earlier run of it, under the same id, is that run's, now gone).
			if r.Member != p.store.member {
				delete(lost, agentID{r.Kind, r.ID})
			}
		}
	}
	return func(kind, id string) bool { return !lost[agentID{kind, id}] }, nil
}

// presenceChange names an agent whose connectedness changed; the zero value means any agent of
// the model (the server's start grace ended).
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

// modelPresence is a model's subscribers and, for a shared presence, what its one store watch
// (however many subscribers) knows of the other members' records.
type modelPresence struct {
	subs map[*presenceSub]struct{}
	// others counts the other members' records of each agent (absent: none).
	others map[agentID]int
	ready  chan struct{} // closed once others holds the store's records, or err says why not
	err    error
	stop   context.CancelFunc // ends the store watch
}

// subscribe follows the presence changes of a model's agents, on every member, until the
// returned function is called. Once it returns, no later change is missed. The model's first
// subscriber reads the other members' records with ctx (a degraded member's call reads its own
// copy of the store).
func (p *presence) subscribe(ctx context.Context, model string) (*presenceSub, func(), error) {
	sub := &presenceSub{wake: make(chan struct{}, 1)}
	p.mu.Lock()
	m := p.subs[model]
	first := m == nil
	if first {
		m = &modelPresence{subs: map[*presenceSub]struct{}{}, others: map[agentID]int{}, ready: make(chan struct{})}
		p.subs[model] = m
		if p.store == nil {
			close(m.ready)
		}
	}
	m.subs[sub] = struct{}{}
	p.mu.Unlock()
	var once sync.Once
	unsubscribe := func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			delete(m.subs, sub)
			if len(m.subs) == 0 {
				if p.subs[model] == m {
					delete(p.subs, model)
				}
				if m.stop != nil {
					m.stop() // nobody left to tell: the model's store watch ends
				}
			}
		})
	}
	if first && p.store != nil {
		records, rev, err := p.store.st.Presence(ctx, model)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			// Whoever waits with this one fails too; the next subscriber reads again.
			m.err = err
			if p.subs[model] == m {
				delete(p.subs, model)
			}
			close(m.ready)
			return nil, nil, err
		}
		m.others = p.store.othersOf(records)
		watchCtx, stop := context.WithCancel(p.store.ctx)
		m.stop = stop // this subscriber is still there: the watch has one at least
		close(m.ready)
		go p.watchModel(watchCtx, model, m, rev)
		return sub, unsubscribe, nil
	}
	select {
	case <-m.ready:
		if m.err != nil {
			return nil, nil, m.err
		}
		return sub, unsubscribe, nil
	case <-ctx.Done():
		unsubscribe()
		return nil, nil, ctx.Err()
	}
}

// othersOf counts the other members' records of each agent.
func (s *presenceStore) othersOf(records []state.PresenceRecord) map[agentID]int {
	others := map[agentID]int{}
	for _, r := range records {
		if r.Member != s.member {
			others[agentID{r.Kind, r.ID}]++
		}
	}
	return others
}

// watchModel follows the other members' records of a model from revision rev+1 until ctx ends;
// when the watch fails, it reads the records again and tells of the differences.
func (p *presence) watchModel(ctx context.Context, model string, m *modelPresence, rev int64) {
	s := p.store
	backoff := 100 * time.Millisecond
	for {
		watched := time.Now()
		for batch := range s.st.WatchPresence(ctx, model, rev+1) {
			p.mu.Lock()
			for _, ev := range batch {
				if ev.Member == s.member {
					continue // this member's own changes were told as they happened
				}
				switch {
				case ev.Removed:
					p.othersChangedLocked(model, m, agentID{ev.Kind, ev.ID}, -1)
				case ev.Created:
					p.othersChangedLocked(model, m, agentID{ev.Kind, ev.ID}, 1)
				}
			}
			p.mu.Unlock()
		}
		// A watch that keeps failing at once (no leader) is not retried in a busy loop.
		if time.Since(watched) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			rctx, cancel := context.WithTimeout(ctx, presenceWriteTimeout)
			records, r, err := s.st.Presence(rctx, model)
			cancel()
			if err == nil {
				rev = r
				p.mu.Lock()
				others := s.othersOf(records)
				for a, n := range m.others {
					if others[a] == 0 {
						p.othersChangedLocked(model, m, a, -n)
					}
				}
				for a, n := range others {
					p.othersChangedLocked(model, m, a, n-m.others[a])
				}
				p.mu.Unlock()
				break
			}
			if ctx.Err() == nil {
				s.log.Warn("presence: reading the agents of other controller members", "model", model, "err", err)
			}
		}
	}
}

// othersChangedLocked adds delta to the other members' records of agent a and tells the
// subscribers when that changes whether the agent counts as connected. p.mu is held.
func (p *presence) othersChangedLocked(model string, m *modelPresence, a agentID, delta int) {
	before := m.others[a]
	after := max(before+delta, 0)
	if after == 0 {
		delete(m.others, a)
	} else {
		m.others[a] = after
	}
	if (before > 0) == (after > 0) || !p.lostLocked(p.agents[model][a], p.now()) {
		return // connected here all along (or within the start's grace): no change
	}
	for sub := range m.subs {
		sub.notify(presenceChange{kind: a.kind, id: a.id})
	}
}

// notifyLocked tells the model's subscribers that an agent changed. p.mu is held.
func (p *presence) notifyLocked(ref agentRef) {
	if m := p.subs[ref.model]; m != nil {
		for sub := range m.subs {
			sub.notify(presenceChange{kind: ref.kind, id: ref.id})
		}
	}
}

// queueWriteLocked publishes (present) or withdraws this member's record of an agent with the
// next flush; the last wish for an agent wins. p.mu is held.
func (p *presence) queueWriteLocked(ref agentRef, present bool) {
	p.store.pending[ref] = present
	p.scheduleFlushLocked(presenceFlushDelay)
}

// scheduleFlushLocked flushes after d, unless a flush is due or running (which flushes again
// at its end what came meanwhile). p.mu is held.
func (p *presence) scheduleFlushLocked(d time.Duration) {
	s := p.store
	if s.queued || s.flushing {
		return
	}
	s.queued = true
	time.AfterFunc(d, p.flush)
}

// flush writes what is pending; a failure keeps it pending, to retry with a backoff.
func (p *presence) flush() {
	s := p.store
	p.mu.Lock()
	s.queued = false
	if s.ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	writes := make([]state.PresenceWrite, 0, len(s.pending))
	for ref, present := range s.pending {
		writes = append(writes, state.PresenceWrite{Model: ref.model, Kind: ref.kind, ID: ref.id, Present: present})
	}
	s.pending = map[agentRef]bool{}
	s.flushing = true
	lease := s.lease
	p.mu.Unlock()

	var err error
	if lease == 0 {
		lease, err = p.grantLease()
	}
	done := 0
	if err == nil {
		done, err = s.st.WritePresence(s.ctx, s.member, lease, presenceWriteTimeout, writes)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	s.flushing = false
	if s.ctx.Err() != nil {
		return
	}
	delay := presenceFlushDelay
	if err != nil {
		for _, w := range writes[done:] {
			ref := agentRef{w.Model, agentID{w.Kind, w.ID}}
			if _, newer := s.pending[ref]; !newer {
				s.pending[ref] = w.Present
			}
		}
		if errors.Is(err, rpctypes.ErrLeaseNotFound) && s.ownLease && s.lease == lease {
			p.leaseLostLocked()
		}
		s.backoff = min(max(2*s.backoff, 100*time.Millisecond), p.grace)
		delay = s.backoff
		s.log.Warn("presence: publishing the agents connected to this controller member", "member", s.member, "err", err)
	} else {
		s.backoff = 0
	}
	if len(s.pending) > 0 {
		p.scheduleFlushLocked(delay)
	}
}

// grantLease grants the server's own lease (with the grace as its TTL: a killed server's
// records last no longer than its agents' grace) and keeps it alive until the server stops.
func (p *presence) grantLease() (clientv3.LeaseID, error) {
	s := p.store
	if !s.ownLease {
		return 0, errors.New("presence: no lease") // never: the daemon's lease is never 0
	}
	ctx, cancel := context.WithTimeout(s.ctx, presenceWriteTimeout)
	lease, err := s.st.GrantPresenceLease(ctx, p.grace)
	cancel()
	if err != nil {
		return 0, err
	}
	lost, err := s.st.KeepPresenceLeaseAlive(s.ctx, lease)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	s.lease = lease
	p.mu.Unlock()
	go func() {
		<-lost
		if s.ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if s.lease == lease {
			p.leaseLostLocked()
		}
	}()
	return lease, nil
}

// leaseLostLocked handles the loss of the server's own lease (the store was out of reach for
// longer than its TTL): its records went with it, so every one is published again on a new
// lease. p.mu is held.
func (p *presence) leaseLostLocked() {
	s := p.store
	s.log.Warn("presence: this controller member's lease ran out; publishing its agents again", "member", s.member)
	s.lease = 0
	for model, agents := range p.agents {
		for a, w := range agents {
			ref := agentRef{model, a}
			if _, newer := s.pending[ref]; w.stored && !newer {
				s.pending[ref] = true
			}
		}
	}
	if len(s.pending) > 0 {
		p.scheduleFlushLocked(presenceFlushDelay)
	}
}
