// Package health watches whether this controller member can still reach a majority of the
// store's members (its quorum), so that the API server can refuse writes at once, saying why,
// rather than let each one wait for its deadline, and serve reads from the member's own copy.
package health

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Defaults.
const (
	// DefaultInterval is how often the quorum is probed: a lost quorum is noticed within about
	// this plus the check's own time (a second for store.CheckQuorum).
	DefaultInterval = 500 * time.Millisecond
	// ProbeTimeout bounds one probe, a backstop: the check bounds itself (store.CheckQuorum's
	// read gives up after a second, then it spends up to a second asking each member, to say
	// how many it reaches), and a check that hangs past this counts as a failure.
	ProbeTimeout = 3 * time.Second
	// FailuresToDegrade is how many probes in a row must fail before the member says it is
	// degraded: a loaded member (a hundred thousand agents) answers a probe late now and then,
	// and refusing every write for that starts the retry spiral it is meant to avoid.
	FailuresToDegrade = 3
)

// Monitor probes the quorum every interval and keeps the last verdict. Its Degraded method
// is safe for concurrent use and costs one atomic load: the API server calls it on every call.
type Monitor struct {
	// Log gets the transitions (degraded, healthy again); slog.Default() when nil. Set it
	// before Run.
	Log *slog.Logger

	check        func(context.Context) error
	interval     time.Duration
	probeTimeout time.Duration
	reason       atomic.Pointer[string] // nil or "": healthy
	failures     int                    // failed probes in a row (Run's goroutine only)
}

// New returns a monitor that calls check every interval (DefaultInterval when zero), each
// call bounded by ProbeTimeout. check is the store's CheckQuorum: nil when a majority of the
// store's members answers, else an error that says why not, which becomes the reason Degraded
// gives. The monitor says healthy until its first probe fails.
func New(check func(context.Context) error, interval time.Duration) *Monitor {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Monitor{check: check, interval: interval, probeTimeout: ProbeTimeout}
}

// Run probes at once, then every interval, until ctx ends. FailuresToDegrade failed probes in
// a row make the member degraded (a lost quorum is noticed within a few seconds), and one
// successful probe healthy again.
func (m *Monitor) Run(ctx context.Context) {
	log := m.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		m.probe(ctx, log)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probe runs one check and records its verdict, unless ctx ended meanwhile (a shutdown is no
// loss of quorum).
func (m *Monitor) probe(ctx context.Context, log *slog.Logger) {
	pctx, cancel := context.WithTimeout(ctx, m.probeTimeout)
	err := m.check(pctx)
	timedOut := pctx.Err() != nil
	cancel()
	if ctx.Err() != nil {
		return
	}
	was := m.Degraded()
	if err == nil {
		m.failures = 0
		if was != "" {
			m.reason.Store(nil)
			log.Info("this controller member reaches a majority of the store's members again: writes are served")
		}
		return
	}
	if m.failures++; m.failures < FailuresToDegrade {
		return
	}
	reason := err.Error()
	if timedOut {
		reason = fmt.Sprintf("the store's quorum check did not answer within %s: %v", m.probeTimeout, err)
	}
	m.reason.Store(&reason)
	if was == "" {
		log.Warn("controller degraded: writes are refused and reads served from this member's copy of the store", "reason", reason)
	}
}

// Degraded returns "" while this member reaches the store's quorum, else why not.
func (m *Monitor) Degraded() string {
	if r := m.reason.Load(); r != nil {
		return *r
	}
	return ""
}
