package modelloop

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeModels lists models and hands out watches the test drives.
type fakeModels struct {
	mu      sync.Mutex
	uuids   []string
	watches chan chan clientv3.WatchResponse
}

func newFakeModels(uuids ...string) *fakeModels {
	return &fakeModels{uuids: uuids, watches: make(chan chan clientv3.WatchResponse, 10)}
}

func (f *fakeModels) ModelUUIDs(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.uuids), nil
}

func (f *fakeModels) WatchModels(ctx context.Context) clientv3.WatchChan {
	ch := make(chan clientv3.WatchResponse, 1)
	f.watches <- ch
	return ch
}

func (f *fakeModels) set(uuids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uuids = uuids
}

func (f *fakeModels) nextWatch(t *testing.T) chan clientv3.WatchResponse {
	t.Helper()
	select {
	case w := <-f.watches:
		return w
	case <-time.After(5 * time.Second):
		t.Fatal("no watch")
	}
	return nil
}

// starts records the model loops started.
type starts struct {
	mu   sync.Mutex
	seen []string
}

func (s *starts) add(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, uuid)
}

func (s *starts) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func TestRunStartsOneLoopPerModelAsModelsAppear(t *testing.T) {
	models := newFakeModels("a")
	var s starts
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stopped := make(chan string, 2)
	go func() {
		Run(ctx, models, discard, "test", func(ctx context.Context, uuid string) {
			s.add(uuid)
			<-ctx.Done()
			stopped <- uuid
		})
		close(done)
	}()
	watch := models.nextWatch(t)
	workertest.Eventually(t, "loop of a", func() bool { return slices.Equal(s.get(), []string{"a"}) })
	models.set("a", "b")
	watch <- clientv3.WatchResponse{}
	workertest.Eventually(t, "loop of b", func() bool { return len(s.get()) == 2 })
	watch <- clientv3.WatchResponse{}
	time.Sleep(20 * time.Millisecond)
	if got := s.get(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("loops started: %v", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	// Run returned only after every model loop did.
	if len(stopped) != 2 {
		t.Fatalf("%d loops stopped before Run returned", len(stopped))
	}
}

// A removed model's loop is stopped (destroy-model): no worker keeps watching a model that
// is gone; the others go on.
func TestRunStopsTheLoopOfAModelThatIsGone(t *testing.T) {
	models := newFakeModels("a", "b")
	var s, stopped starts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Run(ctx, models, discard, "test", func(ctx context.Context, uuid string) {
		s.add(uuid)
		<-ctx.Done()
		stopped.add(uuid)
	})
	watch := models.nextWatch(t)
	workertest.Eventually(t, "loops of a and b", func() bool { return len(s.get()) == 2 })
	models.set("a")
	watch <- clientv3.WatchResponse{}
	workertest.Eventually(t, "loop of b stopped", func() bool { return slices.Equal(stopped.get(), []string{"b"}) })
	watch <- clientv3.WatchResponse{}
	time.Sleep(20 * time.Millisecond)
	if got := s.get(); len(got) != 2 || len(stopped.get()) != 1 {
		t.Fatalf("started %v, stopped %v", got, stopped.get())
	}
}

func TestRunRestartsAStoppedModelLoopWhileItsModelExists(t *testing.T) {
	models := newFakeModels("a")
	var s starts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go runLoop(ctx, models, discard, "test", func(ctx context.Context, uuid string) {
		s.add(uuid)
		if len(s.get()) == 3 {
			models.set() // the model is gone: no fourth start
		}
	}, 5*time.Millisecond)
	workertest.Eventually(t, "three starts", func() bool { return len(s.get()) >= 3 })
	time.Sleep(50 * time.Millisecond)
	if got := s.get(); len(got) != 3 {
		t.Fatalf("starts = %v", got)
	}
}

func TestRunWatchesModelsAgainWhenTheWatchFails(t *testing.T) {
	models := newFakeModels("x")
	var s, stopped starts
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go runLoop(ctx, models, discard, "test", func(ctx context.Context, uuid string) {
		s.add(uuid)
		<-ctx.Done()
		stopped.add(uuid)
	}, 5*time.Millisecond)
	first := models.nextWatch(t)
	workertest.Eventually(t, "loop of x", func() bool { return len(s.get()) == 1 })
	close(first)
	models.set("x", "a")
	second := models.nextWatch(t)
	workertest.Eventually(t, "loop of a after the new watch", func() bool { return len(s.get()) == 2 })
	models.set("x", "a", "b")
	second <- clientv3.WatchResponse{}
	workertest.Eventually(t, "loop of b", func() bool { return len(s.get()) == 3 })
	// The running loops were not disturbed by the failed watch.
	if got := s.get(); !slices.Equal(got, []string{"x", "a", "b"}) || len(stopped.get()) != 0 {
		t.Fatalf("started %v, stopped %v", got, stopped.get())
	}
}

func TestFollowRereadsOncePerBurst(t *testing.T) {
	events := make(chan int, 10)
	for i := range 5 {
		events <- i
	}
	passes := make(chan int, 10)
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Follow(ctx, events, nil, func(ctx context.Context) (time.Time, error) {
			n++
			passes <- n
			return time.Time{}, nil
		})
		close(done)
	}()
	<-passes // at once
	<-passes // one for the five queued events
	select {
	case p := <-passes:
		t.Fatalf("pass %d without a change", p)
	case <-time.After(30 * time.Millisecond):
	}
	events <- 6
	<-passes
	cancel()
	<-done
}

func TestFollowStopsWhenTheWatchCloses(t *testing.T) {
	events := make(chan int)
	done := make(chan struct{})
	go func() {
		Follow(context.Background(), events, nil, func(ctx context.Context) (time.Time, error) { return time.Time{}, nil })
		close(done)
	}()
	close(events)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Follow did not return")
	}
}

func TestFollowWakesWhenAsked(t *testing.T) {
	clock := workertest.NewClock(time.Unix(1_700_000_000, 0))
	deadline := clock.Now().Add(time.Minute)
	passes := make(chan int, 10)
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Follow(ctx, make(chan int), clock, func(ctx context.Context) (time.Time, error) {
		n++
		passes <- n
		if n == 1 {
			return deadline, nil
		}
		return time.Time{}, nil
	})
	<-passes
	workertest.Eventually(t, "timer at the deadline", func() bool { return clock.HasTimerAt(deadline) })
	clock.Advance(59 * time.Second)
	select {
	case <-passes:
		t.Fatal("woke before the deadline")
	case <-time.After(20 * time.Millisecond):
	}
	clock.Advance(time.Second)
	if p := <-passes; p != 2 {
		t.Fatalf("pass %d", p)
	}
}

func TestFollowRetriesFailedPassesWithGrowingBackoff(t *testing.T) {
	clock := workertest.NewClock(time.Unix(1_700_000_000, 0))
	start := clock.Now()
	passes := make(chan int, 10)
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Follow(ctx, make(chan int), clock, func(ctx context.Context) (time.Time, error) {
		n++
		passes <- n
		if n <= 2 {
			return time.Time{}, errors.New("store unavailable")
		}
		return time.Time{}, nil
	})
	<-passes
	workertest.Eventually(t, "first backoff", func() bool { return clock.HasTimerAt(start.Add(MinBackoff)) })
	clock.Advance(MinBackoff)
	<-passes
	workertest.Eventually(t, "doubled backoff", func() bool { return clock.HasTimerAt(start.Add(3 * MinBackoff)) })
	clock.Advance(2 * MinBackoff)
	<-passes
	// The third pass succeeded: no timer, no further pass.
	clock.Advance(MaxBackoff)
	select {
	case p := <-passes:
		t.Fatalf("pass %d after success", p)
	case <-time.After(20 * time.Millisecond):
	}
}

var st *state.State

func TestMain(m *testing.M) { workertest.Main(m, &st) }

func TestWatchStoreSignalsKeptChangesOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	uuid := workertest.NewModel(t, st)
	prefix, err := state.KeyPrefix(uuid, state.KindMachine, "")
	if err != nil {
		t.Fatal(err)
	}
	signals, err := WatchStore(ctx, st, Watch{Prefix: prefix, Keep: func(ev *clientv3.Event) bool { return ev.IsCreate() }})
	if err != nil {
		t.Fatal(err)
	}
	// Changes right after WatchStore returns are seen, however late the watch registers.
	for range 3 {
		if _, err := st.AddMachine(ctx, uuid, state.MachineParams{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-signals:
	case <-time.After(5 * time.Second):
		t.Fatal("no signal")
	}
	time.Sleep(50 * time.Millisecond)
	drain(signals) // at most one more: the three creations may have come in two responses
	// A change the filter drops does not signal.
	if err := st.SetMachineStatus(ctx, uuid, "0", "started", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-signals:
		t.Fatal("signal for a dropped change")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case _, ok := <-signals:
		if ok {
			t.Fatal("signal after cancel")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("channel not closed")
	}
}

// Model loops stopping together (a worker stopping, or restarting) cancel many watches at once,
// and watching must go on working. (etcd's in-process client deadlocks here for good, etcd
// #18879 and #20716; the store uses a loopback TCP client for that reason.)
func TestWatchesSurviveManyLoopsStoppingAtOnce(t *testing.T) {
	uuid := workertest.NewModel(t, st)
	prefix, err := state.KeyPrefix(uuid, state.KindMachine, "")
	if err != nil {
		t.Fatal(err)
	}
	round := func() error {
		ctx, cancel := context.WithCancel(context.Background())
		for range 40 {
			if _, err := WatchStore(ctx, st, Watch{Prefix: prefix}, Watch{Prefix: prefix}, Watch{Prefix: prefix}); err != nil {
				cancel()
				return err
			}
		}
		// Events in flight while everything is cancelled.
		if _, err := st.AddMachine(context.Background(), uuid, state.MachineParams{}); err != nil {
			cancel()
			return err
		}
		cancel()
		ctx, cancel = context.WithCancel(context.Background())
		defer cancel()
		signals, err := WatchStore(ctx, st, Watch{Prefix: prefix})
		if err != nil {
			return err
		}
		if _, err := st.AddMachine(ctx, uuid, state.MachineParams{}); err != nil {
			return err
		}
		<-signals
		return nil
	}
	for i := range 5 {
		done := make(chan error, 1)
		go func() { done <- round() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: watching hangs after many watches were cancelled at once", i)
		}
	}
}

// DeletesOnly: writes are not even sent; deletions signal.
func TestWatchStoreDeletesOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	uuid := workertest.NewModel(t, st)
	prefix, err := state.KeyPrefix(uuid, state.KindMachine, "")
	if err != nil {
		t.Fatal(err)
	}
	signals, err := WatchStore(ctx, st, Watch{Prefix: prefix, DeletesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-signals:
		t.Fatal("signal for a write")
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := st.Client().Delete(ctx, prefix+id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-signals:
	case <-time.After(5 * time.Second):
		t.Fatal("no signal for a deletion")
	}
}
