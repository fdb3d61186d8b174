package apiserver

import (
	"net"
	"sync"
	"time"
)

// Failed-login throttle. Juju 3.6 has none (it rate-limits agent connections only), so the
// policy is ours: a few failures pass freely, then each further attempt of that user from that
// source is refused, without its password being checked, for a lockout that doubles with each
// failure, up to a cap. Failures are forgiven one per decay interval of quiet, and all at once
// by a successful login. Keys are (source, tag): an attacker hammering user-admin slows only
// user-admin from its own address, never the agents' logins.
const (
	throttleFreeFailures = 5
	throttleBaseLockout  = time.Second
	throttleMaxLockout   = 30 * time.Second
	throttleDecay        = time.Minute
	// throttleMaxEntries bounds the table (about 100 bytes an entry), however many sources and
	// names an attacker rotates through.
	throttleMaxEntries = 10000
	// throttleMaxTag bounds the bytes of a tag kept: real tags are far shorter.
	throttleMaxTag = 128
)

type throttleKey struct{ source, tag string }

type throttleEntry struct {
	failures    int       // as of last
	last        time.Time // of the last failure
	lockedUntil time.Time
}

// decayed is the failure count at now: one failure is forgiven per decay interval since the
// last.
func (e *throttleEntry) decayed(now time.Time, decay time.Duration) int {
	elapsed := now.Sub(e.last)
	if elapsed <= 0 {
		return e.failures // the same instant, or the clock went back: forgive nothing
	}
	if forgiven := elapsed / decay; forgiven < time.Duration(e.failures) {
		return e.failures - int(forgiven)
	}
	return 0
}

// loginThrottle counts failed logins per (source, tag). Its methods are safe for concurrent use.
type loginThrottle struct {
	now        func() time.Time
	free       int
	base, max  time.Duration
	decay      time.Duration
	maxEntries int

	mu      sync.Mutex
	entries map[throttleKey]*throttleEntry
}

func newLoginThrottle(now func() time.Time) *loginThrottle {
	if now == nil {
		now = time.Now
	}
	return &loginThrottle{
		now: now, free: throttleFreeFailures, base: throttleBaseLockout, max: throttleMaxLockout,
		decay: throttleDecay, maxEntries: throttleMaxEntries, entries: map[throttleKey]*throttleEntry{},
	}
}

// throttleKeyFor keys a login by the caller's address without its port (each connection has a
// new one) and, for IPv6, by its /64, which one host or attacker usually holds whole.
func throttleKeyFor(peer net.Addr, tag string) throttleKey {
	if len(tag) > throttleMaxTag {
		tag = tag[:throttleMaxTag]
	}
	if peer == nil {
		return throttleKey{source: "unknown", tag: tag}
	}
	var ip net.IP
	switch a := peer.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		if host, _, err := net.SplitHostPort(peer.String()); err == nil {
			ip = net.ParseIP(host)
		}
		if ip == nil {
			return throttleKey{source: peer.String(), tag: tag}
		}
	}
	if v4 := ip.To4(); v4 != nil {
		return throttleKey{source: v4.String(), tag: tag}
	}
	return throttleKey{source: ip.Mask(net.CIDRMask(64, 128)).String() + "/64", tag: tag}
}

// wait is how long k must wait before its next login is considered, zero when it may log in
// now; known says k has failures on record (so a success has something to forgive).
func (t *loginThrottle) wait(k throttleKey) (wait time.Duration, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[k]
	if !ok {
		return 0, false
	}
	if now := t.now(); now.Before(e.lockedUntil) {
		return e.lockedUntil.Sub(now), true
	}
	return 0, true
}

// failed records a failed login of k and returns the failures counted (after decay) and the
// lockout it starts, zero while failures are still free.
func (t *loginThrottle) failed(k throttleKey) (failures int, lockout time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	e, ok := t.entries[k]
	if !ok {
		if len(t.entries) >= t.maxEntries {
			t.makeRoom(now)
		}
		e = &throttleEntry{}
		t.entries[k] = e
	}
	e.failures = e.decayed(now, t.decay) + 1
	e.last = now
	if e.failures >= t.free {
		lockout = t.max
		if shift := e.failures - t.free; shift < 32 && t.base<<shift < t.max {
			lockout = t.base << shift
		}
		e.lockedUntil = now.Add(lockout)
	}
	return e.failures, lockout
}

// succeeded forgets k's failures.
func (t *loginThrottle) succeeded(k throttleKey) {
	t.mu.Lock()
	delete(t.entries, k)
	t.mu.Unlock()
}

// size is the number of keys tracked.
func (t *loginThrottle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// makeRoom frees an eighth of the table, so its cost is shared by the inserts that follow. It
// drops what has fully decayed first, then the entries with the fewest failures: an attacker
// rotating names or sources makes many one-failure entries, which must not push out the entry
// that throttles its guesses at a real account.
func (t *loginThrottle) makeRoom(now time.Time) {
	const buckets = 64
	var hist [buckets]int
	for k, e := range t.entries {
		n := e.decayed(now, t.decay)
		if n == 0 && !now.Before(e.lockedUntil) {
			delete(t.entries, k)
			continue
		}
		hist[min(n, buckets-1)]++
	}
	target := t.maxEntries - t.maxEntries/8
	excess := len(t.entries) - target
	if excess <= 0 {
		return
	}
	// The lowest count whose entries, with all those below it, cover the excess.
	limit, covered := 0, 0
	for limit = range buckets {
		if covered += hist[limit]; covered >= excess {
			break
		}
	}
	for k, e := range t.entries {
		if excess == 0 {
			break
		}
		if min(e.decayed(now, t.decay), buckets-1) <= limit {
			delete(t.entries, k)
			excess--
		}
	}
}
