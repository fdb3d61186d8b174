package agent

import (
	"container/heap"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Leadership, as the leader's agent sees it. The controller holds the lease (an etcd lease of
// T seconds on the key leases/<app>, controller/state/leadership.go); nobody else can claim
// until etcd deletes the key, T after the controller last granted or extended it, which is
// after the agent sent that claim. From that one fact, every number here derives from T (the
// lease's granted duration; Juju's 60 s by default):
//
//   - the holder counts itself leader until it sent its last successful claim + T - T/12
//     (the guard: 5 s at 60 s), so it stops before anyone else may claim, whatever the
//     clocks' drift and however late the answer reaches the charm;
//   - is-leader says True only with at least T/2 (30 s) of that left, as Juju promises: after
//     a True, nobody else leads for at least T/2 + T/12;
//   - the lease is extended apart from the hook loop, by the runner's one lease keeper, at a
//     random point between T/4 and T/3 (15 to 20 s) after the last claim was sent, so a hook
//     or an action of any length keeps it, and leaders that claimed together (a controller
//     restart) drift apart rather than renew in one burst; at T/3 there are still T/2 + T/12
//     left, so is-leader answers without asking the controller;
//   - a failed extension is retried every T/20 until the holder's end, when the agent hears it
//     lost the leadership.
//
// Units that do not lead cost nothing here: they watch the lease key and claim when it goes.

// DefaultLeaseDuration is how long a leadership claim holds: Juju's (twice its 30 s promise).
const DefaultLeaseDuration = 60 * time.Second

func leaseGuard(ttl time.Duration) time.Duration     { return ttl / 12 }
func leaseGuarantee(ttl time.Duration) time.Duration { return ttl / 2 }
func leaseRetry(ttl time.Duration) time.Duration     { return ttl / 20 }

// renewAfter is when, after sending a claim that succeeded, the keeper extends it.
func renewAfter(ttl time.Duration) time.Duration {
	return ttl/4 + rand.N(ttl/12+1)
}

// leaseClaimer is the controller's side of a claim (client.Client).
type leaseClaimer interface {
	ClaimLeadership(ctx context.Context, model, unit string, ttlSeconds int64) (*pb.ClaimLeadershipResponse, error)
}

// leadership is one unit agent's view of its application's leadership.
type leadership struct {
	c           leaseClaimer
	model, unit string
	lease       time.Duration // the duration asked for
	keeper      *leaseKeeper
	now         func() time.Time
	// changed holds one pending "leadership came or went" for the agent's loop.
	changed chan struct{}

	// mu serialises claims with the answers that depend on them: an answer never races an
	// extension that the controller turned into a loss.
	mu      sync.Mutex
	held    bool
	ttl     time.Duration // the held lease's granted duration
	sent    time.Time     // when the claim that gave it was sent
	until   time.Time     // the holder's end: sent + ttl - guard
	stopped bool

	gen int // the keeper's: its schedule entries with another gen are void (keeper.mu)
}

func newLeadership(k *leaseKeeper, c leaseClaimer, model, unit string, lease time.Duration) *leadership {
	return &leadership{c: c, model: model, unit: unit, lease: lease, keeper: k, now: k.now, changed: make(chan struct{}, 1)}
}

// guaranteed: the unit leads for at least the promise from now.
func (l *leadership) guaranteed(now time.Time) bool {
	return l.held && l.until.Sub(now) >= leaseGuarantee(l.ttl)
}

// leading reports whether the unit leads with the promise still to run.
func (l *leadership) leading() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.guaranteed(l.now())
}

// isLeader answers is-leader: true only while the promise holds, extending the lease at once
// when the keeper has not (or claiming it when nobody holds it). An error means the
// controller could not be asked: no inference can be made, as in Juju.
func (l *leadership) isLeader(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.guaranteed(l.now()) {
		return true, nil
	}
	if err := l.claimLocked(ctx); err != nil {
		return false, err
	}
	return l.guaranteed(l.now()), nil
}

// ensure is the agent's claim when it reads that nobody leads, or that it does: the
// controller is asked unless the promise still holds (then the keeper extends it in time).
func (l *leadership) ensure(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.guaranteed(l.now()) {
		return nil
	}
	return l.claimLocked(ctx)
}

// claim always asks the controller: a unit that is not alive gives up its leadership so.
func (l *leadership) claim(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.claimLocked(ctx)
}

// observe: a read that started at readAt found another unit (or nobody) leading. The unit's
// lease has ended, unless it claimed after that read started.
func (l *leadership) observe(readAt time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held && l.sent.Before(readAt) {
		l.lose()
	}
}

// stop ends the keeper's extensions: the agent is stopping. The lease runs out unless the next
// agent of the unit extends it.
func (l *leadership) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.keeper.cancel(l)
}

// renew is the keeper's extension, independent of what the agent's loop is doing.
func (l *leadership) renew(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || !l.held {
		return
	}
	now := l.now()
	if !now.Before(l.until) {
		l.lose() // the holder's end came with no extension
		return
	}
	ctx, cancel := context.WithTimeout(ctx, l.until.Sub(now))
	defer cancel()
	if err := l.claimLocked(ctx); err != nil && l.held && !l.stopped {
		retry := l.now().Add(leaseRetry(l.ttl))
		if retry.After(l.until) {
			retry = l.until
		}
		l.keeper.schedule(l, retry)
	}
}

// claimLocked asks the controller to grant or extend the lease and records the answer.
func (l *leadership) claimLocked(ctx context.Context) error {
	sent := l.now()
	resp, err := l.c.ClaimLeadership(ctx, l.model, l.unit, int64((l.lease+time.Second-1)/time.Second))
	if errors.Is(err, apierr.NotAlive) {
		resp, err = &pb.ClaimLeadershipResponse{}, nil
	}
	if err != nil {
		return err
	}
	if !resp.GetHeld() {
		l.lose()
		return nil
	}
	ttl := time.Duration(resp.GetTtlSeconds()) * time.Second
	if ttl <= 0 {
		ttl = l.lease
	}
	was := l.held
	l.held, l.ttl, l.sent, l.until = true, ttl, sent, sent.Add(ttl-leaseGuard(ttl))
	if !l.stopped {
		l.keeper.schedule(l, sent.Add(renewAfter(ttl)))
	}
	if !was {
		l.notify()
	}
	return nil
}

func (l *leadership) lose() {
	if l.held {
		l.notify()
	}
	l.held, l.until = false, time.Time{}
	l.keeper.cancel(l)
}

func (l *leadership) notify() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// leaseKeeper extends the leases of a runner's leading units: one goroutine that sleeps until
// the next extension is due, whatever the agents are running. It bounds how many extensions
// are in flight at once, so a slow controller is not met with a burst.
type leaseKeeper struct {
	now   func() time.Time
	mu    sync.Mutex
	queue renewals
	wake  chan struct{}
	slots chan struct{}
	wg    sync.WaitGroup
}

// maxRenewing bounds the extensions in flight per runner.
const maxRenewing = 16

func newLeaseKeeper() *leaseKeeper {
	return &leaseKeeper{now: time.Now, wake: make(chan struct{}, 1), slots: make(chan struct{}, maxRenewing)}
}

// schedule (re)places l's extension at at.
func (k *leaseKeeper) schedule(l *leadership, at time.Time) {
	k.mu.Lock()
	l.gen++
	heap.Push(&k.queue, renewal{at: at, l: l, gen: l.gen})
	first := k.queue[0].l == l && k.queue[0].gen == l.gen
	k.mu.Unlock()
	if first {
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
}

// cancel voids l's scheduled extension.
func (k *leaseKeeper) cancel(l *leadership) {
	k.mu.Lock()
	l.gen++
	k.mu.Unlock()
}

// due takes the extensions due at now, and tells when the next one is (zero when none is).
func (k *leaseKeeper) due(now time.Time) (ready []*leadership, next time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.queue) > 0 {
		r := k.queue[0]
		if r.gen != r.l.gen {
			heap.Pop(&k.queue)
			continue
		}
		if r.at.After(now) {
			return ready, r.at
		}
		heap.Pop(&k.queue)
		r.l.gen++ // taken: a reschedule pushes a new entry
		ready = append(ready, r.l)
	}
	return ready, time.Time{}
}

// run extends leases as they fall due until ctx ends.
func (k *leaseKeeper) run(ctx context.Context) {
	defer k.wg.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		ready, next := k.due(k.now())
		for _, l := range ready {
			k.wg.Go(func() {
				select {
				case k.slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				defer func() { <-k.slots }()
				l.renew(ctx)
			})
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(k.now()), 0)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-k.wake:
		}
	}
}

type renewal struct {
	at  time.Time
	l   *leadership
	gen int
}

// renewals is a min-heap by due time.
type renewals []renewal

func (q renewals) Len() int           { return len(q) }
func (q renewals) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q renewals) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *renewals) Push(x any)        { *q = append(*q, x.(renewal)) }
func (q *renewals) Pop() any {
	old := *q
	r := old[len(old)-1]
	*q = old[:len(old)-1]
	return r
}
