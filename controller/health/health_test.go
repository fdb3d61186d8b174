package health

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCheck hands each probe to the test: the probe waits for the answer the test gives it.
// Probes run one after another, so when probe n+1 arrives, probe n's verdict is recorded.
type fakeCheck struct {
	probes chan probe
}

type probe struct {
	deadline time.Duration // left on the probe's context when it arrived
	answer   chan error
}

func (f *fakeCheck) check(ctx context.Context) error {
	d, _ := ctx.Deadline()
	p := probe{deadline: time.Until(d), answer: make(chan error)}
	select {
	case f.probes <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next waits for the monitor's next probe.
func (f *fakeCheck) next(t *testing.T) probe {
	t.Helper()
	select {
	case p := <-f.probes:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no probe")
		return probe{}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// One failed probe degrades, one success heals, each transition is logged once, and every
// probe has its own deadline.
func TestMonitorTransitions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeCheck{probes: make(chan probe)}
	var logs syncBuffer
	m := New(f.check, time.Millisecond)
	m.Log = slog.New(slog.NewTextHandler(&logs, nil))
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()

	if m.Degraded() != "" {
		t.Fatalf("degraded before any probe: %q", m.Degraded())
	}
	p := f.next(t)
	if p.deadline <= 0 || p.deadline > ProbeTimeout {
		t.Errorf("probe deadline %v, want at most %v", p.deadline, ProbeTimeout)
	}
	p.answer <- nil
	want := "etcd member m1 cannot reach a majority of the store's voting members: it reaches 1 of 3, a majority is 2: context deadline exceeded"
	for range FailuresToDegrade - 1 {
		f.next(t).answer <- errors.New(want)
		if got := m.Degraded(); got != "" {
			t.Fatalf("degraded after fewer than %d failed probes: %q", FailuresToDegrade, got)
		}
	}
	// A success in between starts the count again.
	f.next(t).answer <- nil
	for range FailuresToDegrade {
		f.next(t).answer <- errors.New(want)
	}
	p = f.next(t) // the failure is recorded
	if got := m.Degraded(); got != want {
		t.Fatalf("Degraded() = %q, want %q", got, want)
	}
	p.answer <- errors.New("etcdserver: no leader")
	p = f.next(t)
	if got := m.Degraded(); got != "etcdserver: no leader" {
		t.Fatalf("Degraded() = %q, want the latest reason", got)
	}
	p.answer <- nil
	p = f.next(t)
	if got := m.Degraded(); got != "" {
		t.Fatalf("Degraded() = %q after a successful probe", got)
	}
	cancel()
	<-done

	out := logs.String()
	if n := strings.Count(out, "controller degraded"); n != 1 {
		t.Errorf("logged degraded %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "reaches a majority of the store's members again"); n != 1 {
		t.Errorf("logged healthy again %d times, want once:\n%s", n, out)
	}
}

// A probe cut short by the monitor's own shutdown is no loss of quorum.
func TestMonitorShutdownIsNotDegraded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeCheck{probes: make(chan probe)}
	m := New(f.check, time.Millisecond)
	m.Log = slog.New(slog.DiscardHandler)
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	f.next(t) // never answered: the probe ends with ctx
	cancel()
	<-done
	if got := m.Degraded(); got != "" {
		t.Fatalf("Degraded() = %q after shutdown", got)
	}
}

// A check that does not bound itself is cut off by the probe's deadline, and says so.
func TestMonitorProbeDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probes := make(chan struct{}, 1)
	hang := func(ctx context.Context) error {
		select {
		case probes <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}
	m := New(hang, time.Millisecond)
	m.Log = slog.New(slog.DiscardHandler)
	m.probeTimeout = 10 * time.Millisecond
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	for range FailuresToDegrade + 1 { // the last: the previous verdicts are recorded
		<-probes
	}
	if got, want := m.Degraded(), "the store's quorum check did not answer within 10ms: context deadline exceeded"; got != want {
		t.Errorf("Degraded() = %q, want %q", got, want)
	}
	cancel()
	<-done
}
