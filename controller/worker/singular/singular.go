// Package singular runs the controller's singular workers (provisioner, cleaner, force-remover,
// model remover, action pruner, firewaller) on one controller member at a time. The members
// campaign in an etcd election (package concurrency); the winner runs the workers until it stops
// or loses its lease, and another member takes over: at once when the owner stops cleanly (it
// resigns), within about the lease's TTL when it dies.
//
// # Fencing
//
// Another member can win only once the owner's election key is gone: the owner resigned, or
// its lease expired in the store. The owner renews its lease itself, every TTL/4, and notes
// when each renewal that succeeded was sent: the store restarts the TTL when it handles the
// renewal, which is later, so the lease lives at least until then + TTL. The owner cancels its
// workers' context TTL/4 before that moment unless a later renewal succeeded, so a member
// partitioned from the store stops its workers before the store can let anyone else win.
// (etcd's own session.Done is not enough: it fires only once the client's deadline passed, up to
// TTL + 1 s after the last renewal it heard of, when the lease may have expired already.)
//
// What is left, honestly: cancelling is not stopping. A worker finishes the call it is in, and
// a store request sent before the fence, but delayed in the network by more than TTL/4 (or
// sent by a process paused between checking its context and sending: SIGSTOP, swapping), can
// land after the new owner started. The fence also assumes that this host's clock and the
// store leader's do not drift apart by TTL/4 within one TTL. The workers are therefore written
// so that such a late step is harmless: every store write is a transaction that compares what
// it read (L-G3), and what a worker does outside the store (an instance directory) is
// idempotent for a given machine.
package singular

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Prefix is the election's key prefix; each candidate's key is Prefix + "/" + its lease id,
// holding its member id.
const Prefix = "/juju/elections/workers"

// DefaultTTL is the lease of an owner that stopped renewing it: how long the workers may stand
// still after their owner died.
const DefaultTTL = 3 * time.Second

const (
	// callTimeout bounds every single call to the store.
	callTimeout = 5 * time.Second
	// handOverTimeout bounds the resignation and the lease's revocation when a term ends: if
	// the store does not answer by then, the lease runs out on its own.
	handOverTimeout = time.Second
	minBackoff      = 100 * time.Millisecond
	maxBackoff      = 5 * time.Second
)

var errLeaseLost = errors.New("lost the lease (the store is unreachable, or the lease expired)")

// Config says who campaigns, and where.
type Config struct {
	Client *clientv3.Client
	// MemberID names this member in the election (Owner reports it). One process at a time may
	// run with a given id: at the start of each term an Elector revokes the election key that
	// an earlier run of its member left behind (killed without resigning), so that a restarted
	// member does not wait a TTL for itself. Empty: "<hostname>/<pid>".
	MemberID string
	// TTL is the lease of the election key (DefaultTTL when zero; whole seconds, at least one).
	// The store may grant more: etcd's minimum is one and a half election timeouts, rounded up
	// to a second (2 s for the embedded store); the fence follows what it granted.
	TTL time.Duration
	Log *slog.Logger
}

// Elector campaigns for the workers on behalf of one member and runs them while it owns them.
type Elector struct {
	cfg     Config
	ttlSec  int64
	leading atomic.Bool
}

// New returns an Elector; Run campaigns.
func New(cfg Config) *Elector {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	secs := int64((cfg.TTL + time.Second - 1) / time.Second)
	cfg.TTL = time.Duration(secs) * time.Second
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MemberID == "" {
		host, _ := os.Hostname()
		cfg.MemberID = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	return &Elector{cfg: cfg, ttlSec: secs}
}

// Run is New(cfg).Run(ctx, work).
func Run(ctx context.Context, cfg Config, work func(ctx context.Context)) {
	New(cfg).Run(ctx, work)
}

// Leading reports whether this member runs the workers now: elected, and its lease not
// (possibly) lost.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Owner is the member that holds the election ("" when none does). A member that was just cut
// off from the store may still hold it for up to a TTL after it stopped its workers.
func Owner(ctx context.Context, cli *clientv3.Client) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := cli.Get(ctx, Prefix+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("reading the owner of the controller's workers: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// Run campaigns until ctx ends; whenever elected it runs work, with a context that ends when
// ctx ends or the lease may be lost, and waits for work to return before it campaigns again:
// two terms' work never overlap in this process. Once ctx ends it resigns, so that another
// member takes over at once, and returns after work did.
func (e *Elector) Run(ctx context.Context, work func(ctx context.Context)) {
	backoff := minBackoff
	for ctx.Err() == nil {
		ran, err := e.term(ctx, work)
		if ctx.Err() != nil {
			return
		}
		if ran >= e.cfg.TTL {
			backoff = minBackoff // a term that held: whatever ended it is news
		}
		if err != nil {
			e.cfg.Log.Warn("singular: campaigning for the controller's workers", "member", e.cfg.MemberID, "err", err, "retry-in", backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// term is one lease: campaign, run the work while elected, hand over. It returns how long this
// member ran the work.
func (e *Elector) term(ctx context.Context, work func(ctx context.Context)) (time.Duration, error) {
	cli := e.cfg.Client
	e.reclaim(ctx)
	// The lease lives on a context of its own: after ctx ends it is still renewed until the
	// work has returned and the member resigned.
	lctx, stopLease := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLease()
	sent := time.Now()
	gctx, cancel := context.WithTimeout(ctx, callTimeout)
	grant, err := cli.Grant(gctx, e.ttlSec)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("granting a lease: %w", err)
	}
	defer e.revoke(ctx, grant.ID)
	session, err := concurrency.NewSession(cli, concurrency.WithLease(grant.ID), concurrency.WithContext(lctx),
		concurrency.WithTTL(int(e.ttlSec)))
	if err != nil {
		return 0, fmt.Errorf("opening a session: %w", err)
	}
	defer session.Orphan()
	ttl := time.Duration(grant.TTL) * time.Second
	lost := make(chan struct{})
	go keep(lctx, cli, grant.ID, sent, ttl, session.Done(), lost)

	el := concurrency.NewElection(session, Prefix)
	cctx, stopCampaign := context.WithCancel(ctx)
	defer stopCampaign()
	elected := make(chan error, 1)
	// Campaign resigns with the client's own context when cctx ends: the goroutine is not
	// waited for, since it may wait for the store (or the client's closing). The revocation
	// of the lease (deferred) removes its key whatever it does.
	go func() { elected <- el.Campaign(cctx, e.cfg.MemberID) }()
	select {
	case <-ctx.Done():
		return 0, nil
	case <-lost:
		return 0, errLeaseLost
	case err := <-elected:
		if err != nil {
			return 0, fmt.Errorf("campaigning: %w", err)
		}
	}
	if err := e.check(ctx, el, grant.ID, lost); err != nil {
		return 0, err
	}

	started := time.Now()
	e.leading.Store(true)
	e.cfg.Log.Info("singular: running the controller's workers", "member", e.cfg.MemberID)
	wctx, stopWork := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(wctx)
	}()
	why, err := "this member stops", error(nil)
	select {
	case <-ctx.Done():
	case <-lost:
		why, err = "lost the lease", errLeaseLost
	case <-done:
		why, err = "the workers returned", errors.New("the controller's workers returned on their own")
	}
	e.leading.Store(false)
	stopWork()
	e.waitWork(done, ttl)
	ran := time.Since(started)
	e.cfg.Log.Info("singular: stopped running the controller's workers", "member", e.cfg.MemberID, "why", why, "ran", ran.Round(time.Millisecond))

	// The lease is still renewed (lctx) until here, so nobody else started meanwhile unless it
	// was lost; resigning lets the next member start now rather than when the lease runs out.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handOverTimeout)
	if rerr := el.Resign(rctx); rerr != nil && err == nil {
		e.cfg.Log.Warn("singular: resigning; the next member takes over when the lease runs out", "member", e.cfg.MemberID, "err", rerr)
	}
	cancel()
	return ran, err
}

// check makes sure this member holds the election now: Campaign returns once every earlier
// key is gone, even if this member's own key went meanwhile (its lease revoked).
func (e *Elector) check(ctx context.Context, el *concurrency.Election, lease clientv3.LeaseID, lost <-chan struct{}) error {
	select {
	case <-lost:
		return errLeaseLost
	default:
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := e.cfg.Client.Get(cctx, el.Key())
	if err != nil {
		return fmt.Errorf("checking the election: %w", err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != el.Rev() || clientv3.LeaseID(resp.Kvs[0].Lease) != lease {
		return errors.New("elected, but this member's election key is gone")
	}
	return nil
}

// waitWork waits for the work to return, and says so when that takes long: once the lease is
// lost, another member may start the workers meanwhile.
func (e *Elector) waitWork(done <-chan struct{}, ttl time.Duration) {
	t := time.NewTimer(ttl)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
		e.cfg.Log.Warn("singular: the controller's workers are slow to stop", "member", e.cfg.MemberID, "waited", ttl)
	}
	<-done
}

// reclaim revokes the leases of election keys this member id holds: an earlier run of this
// member that died without resigning (one process per id, and this one runs no work now).
func (e *Elector) reclaim(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := e.cfg.Client.Get(ctx, Prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return // the grant that follows fails too, and says why
	}
	for _, kv := range resp.Kvs {
		if string(kv.Value) != e.cfg.MemberID {
			continue
		}
		if kv.Lease == 0 {
			_, err = e.cfg.Client.Delete(ctx, string(kv.Key))
		} else if _, err = e.cfg.Client.Revoke(ctx, clientv3.LeaseID(kv.Lease)); errors.Is(err, rpctypes.ErrLeaseNotFound) {
			err = nil
		}
		if err != nil {
			e.cfg.Log.Warn("singular: removing this member's earlier election key", "member", e.cfg.MemberID, "key", string(kv.Key), "err", err)
			continue
		}
		e.cfg.Log.Info("singular: removed this member's earlier election key (it died without resigning)", "member", e.cfg.MemberID, "key", string(kv.Key))
	}
}

// revoke ends a term's lease, and with it the member's election key, if the store answers in
// time; otherwise the lease runs out.
func (e *Elector) revoke(ctx context.Context, id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handOverTimeout)
	defer cancel()
	_, _ = e.cfg.Client.Revoke(ctx, id)
}

// keep renews the lease every ttl/4 until ctx ends, and closes lost once the lease may have
// expired in the store: TTL/4 before sent + ttl, sent being when the last renewal that
// succeeded was sent (see Fencing), or at once when the store says the lease is gone or the
// session gave up.
func keep(ctx context.Context, cli *clientv3.Client, lease clientv3.LeaseID, sent time.Time, ttl time.Duration,
	sessionDone <-chan struct{}, lost chan<- struct{}) {
	defer close(lost)
	margin := ttl / 4
	valid := sent.Add(ttl - margin)
	tick := time.NewTicker(ttl / 4)
	defer tick.Stop()
	for {
		fence := time.NewTimer(time.Until(valid))
		select {
		case <-ctx.Done():
		case <-sessionDone:
		case <-fence.C:
		case <-tick.C:
		}
		fence.Stop()
		if ctx.Err() != nil || !time.Now().Before(valid) {
			return
		}
		select {
		case <-sessionDone:
			return
		default:
		}
		at := time.Now()
		rctx, cancel := context.WithDeadline(ctx, valid)
		resp, err := cli.KeepAliveOnce(rctx, lease)
		cancel()
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return
		}
		if err == nil && resp.TTL > 0 {
			valid = at.Add(time.Duration(resp.TTL)*time.Second - margin)
		}
	}
}
