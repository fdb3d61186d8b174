package agent

import (
	"context"
	"sync"
)

// maxBusyAgents bounds how many of a runner's agents do their work (read their world, call
// the controller, write their files) at once. A hundred thousand agents woken by one change (an
// application removed) would otherwise all call the controller in the same second: calls pass
// their deadline, agents restart and call again, and the controller spirals (issue 16). Time
// spent running a hook, an action or a command does not count: a slow hook never holds others.
const maxBusyAgents = 64

// workSlots are a runner's permits to work.
type workSlots chan struct{}

func newWorkSlots(n int) workSlots { return make(workSlots, n) }

// slot is one agent's permit, taken for a pass and given back while its processes run.
type slot struct {
	slots workSlots
	mu    sync.Mutex
	held  bool
	away  int  // processes running: the permit is given back while any is
	owed  bool // a process gave the held permit back: the last one's end takes it again
}

type slotKey struct{}

// take waits for a permit (nil slot or slots: none needed).
func (s *slot) take(ctx context.Context) error {
	if s == nil || s.slots == nil {
		return nil
	}
	s.mu.Lock()
	if s.held || s.away > 0 {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
	return nil
}

// give returns the permit.
func (s *slot) give() {
	if s == nil || s.slots == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		s.held = false
		<-s.slots
	}
}

// during gives the permit back while a process runs, and takes one again (if it was held)
// when done is called; for processes run in parallel, the last one's done takes it.
func (s *slot) during(ctx context.Context) (done func()) {
	if s == nil || s.slots == nil {
		return func() {}
	}
	s.mu.Lock()
	s.away++
	if s.held {
		s.held, s.owed = false, true
		<-s.slots
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.away--
		retake := s.away == 0 && s.owed
		if retake {
			s.owed = false
		}
		s.mu.Unlock()
		if retake {
			_ = s.take(ctx)
		}
	}
}

// withSlot carries an agent's permit to the code that runs its processes.
func withSlot(ctx context.Context, s *slot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

func slotOf(ctx context.Context) *slot {
	s, _ := ctx.Value(slotKey{}).(*slot)
	return s
}
