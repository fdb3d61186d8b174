package agent

import "time"

// Juju's uniter retries a failed hook after 5s, then twice as long each time, up to 5m.
const (
	minHookRetryDelay = 5 * time.Second
	maxHookRetryDelay = 5 * time.Minute
)

// hookRetry is automatically-retry-hooks: while a failed hook waits and the model asks for it,
// a timer brings the hook back after a growing delay, as if `juju resolved` had been run.
type hookRetry struct {
	// enabled follows the model's automatically-retry-hooks.
	enabled bool
	timer   *time.Timer
	// armed: the timer runs for the failure at hand; due: it fired, the hook runs again.
	armed, due bool
	// delay is the last delay (0 before the first retry of a failure).
	delay time.Duration
}

// C is the channel the timer fires on (a stopped timer until first armed).
func (r *hookRetry) C() <-chan time.Time {
	if r.timer == nil {
		r.timer = time.NewTimer(time.Hour)
		r.timer.Stop()
	}
	return r.timer.C
}

// arm starts the timer for a hook that waits in error, when retries are on and it is not
// running yet.
func (r *hookRetry) arm() {
	if !r.enabled || r.armed {
		return
	}
	r.C()
	switch {
	case r.delay == 0:
		r.delay = minHookRetryDelay
	case r.delay < maxHookRetryDelay:
		r.delay = min(2*r.delay, maxHookRetryDelay)
	}
	r.timer.Reset(r.delay)
	r.armed = true
}

// fired records the timer's firing: the next pass retries the hook if retries are still on.
func (r *hookRetry) fired() {
	r.armed = false
	r.due = r.enabled
}

// take reports whether a retry is due, and consumes it.
func (r *hookRetry) take() bool {
	due := r.due && r.enabled
	r.due = false
	return due
}

// reset forgets the failure: the hook ran, or the user resolved it.
func (r *hookRetry) reset() {
	if r.timer != nil {
		r.timer.Stop()
	}
	r.armed, r.due, r.delay = false, false, 0
}
