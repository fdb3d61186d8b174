package state_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// firstEvent waits for sub's next event (false once the subscription ended, as when the
// test's context does); the rest of what arrived with it is dropped.
func firstEvent(sub *state.Subscription) (state.Event, bool) {
	for ev := range sub.Events() {
		return ev, true
	}
	return state.Event{}, false
}

// idleSubscribers subscribes n subscribers shaped like unit agents on keys nobody writes: their
// unit (exact), a relation's scopes and settings (prefixes, one LifeOnly).
func idleSubscribers(tb testing.TB, ctx context.Context, hub *state.Hub, uuid string, from, n int) {
	tb.Helper()
	p := state.ModelPrefix(uuid)
	for i := from; i < from+n; i++ {
		id := strconv.Itoa(i)
		keys := []state.WatchKey{{Key: p + "units/idle/" + id}, {Key: p + "scopes/" + id + "/"}, {Key: p + "settings/" + id + "/", LifeOnly: true}}
		if _, err := hub.Subscribe(ctx, uuid, keys); err != nil {
			tb.Fatal(err)
		}
	}
}

// An event reaches only its own subscribers, once each, and what the hub looks at for it does
// not grow with the subscribers to other keys (thousands of unit agents); an idle subscription
// costs no goroutine.
func TestHubEventCostsOnlyItsSubscribers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	p := state.ModelPrefix(uuid)
	hub := st.NewHub(ctx)
	all, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "machines/"}})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "machines/7"}})
	if err != nil {
		t.Fatal(err)
	}
	// Two keys matching one event: it is handed over once, and wanted since one key is not LifeOnly.
	both, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "machines/", LifeOnly: true}, {Key: p + "machines/7"}})
	if err != nil {
		t.Fatal(err)
	}
	lifeOnly, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "machines/", LifeOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	idleSubscribers(t, ctx, hub, uuid, 0, 10)

	// write puts machines/7 and returns what the hub looked at for it, once every subscriber has it.
	write := func() int64 {
		t.Helper()
		before := hub.MatchAttempts()
		if _, err := st.Client().Put(ctx, p+"machines/7", "x"); err != nil {
			t.Fatal(err)
		}
		if _, ok := firstEvent(all); !ok {
			t.Fatal("no event")
		}
		hub.HoldModel(uuid)() // the event's fan-out is over
		return hub.MatchAttempts() - before
	}
	takeAll := func(sub *state.Subscription) int {
		t.Helper()
		evs, ok := sub.Take()
		if !ok {
			t.Fatal("subscription ended")
		}
		return len(evs)
	}

	few := write() // a creation: LifeOnly subscribers hear of it
	for name, sub := range map[string]*state.Subscription{"exact": exact, "both": both, "lifeOnly": lifeOnly} {
		if n := takeAll(sub); n != 1 {
			t.Errorf("%s subscriber: %d events for a creation, want 1", name, n)
		}
	}

	goroutines := runtime.NumGoroutine()
	idleSubscribers(t, ctx, hub, uuid, 10, 3000)
	if n := runtime.NumGoroutine(); n > goroutines+10 {
		t.Errorf("3,000 subscriptions: %d goroutines, were %d", n, goroutines)
	}
	many := write() // no change of life: LifeOnly-only subscribers do not hear of it
	if few != many {
		t.Errorf("looked at %d entries for an event with 10 idle subscribers, %d with 3,010", few, many)
	}
	if n := takeAll(exact) + takeAll(both); n != 2 {
		t.Errorf("exact subscribers: %d events, want 1 each", n)
	}
	if n := takeAll(lifeOnly); n != 0 {
		t.Errorf("LifeOnly subscriber woke %d times for a change that kept the life", n)
	}
}

// A subscriber that falls more than the buffer behind is ended after what it has pending (it
// watches again and re-reads); the others keep going.
func TestHubEndsASubscriberTooFarBehind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	p := state.ModelPrefix(uuid)
	hub := st.NewHub(ctx)
	slow, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "machines/"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "applications/"}})
	if err != nil {
		t.Fatal(err)
	}
	ops := make([]clientv3.Op, 129)
	for i := range ops {
		ops[i] = clientv3.OpPut(p+"machines/"+strconv.Itoa(i), "x")
	}
	if _, err := st.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
		t.Fatal(err)
	}
	var got int
	for range slow.Events() {
		got++
	}
	if got != 128 {
		t.Errorf("a subscriber ended for falling behind got %d events first, want 128", got)
	}
	if _, err := st.Client().Put(ctx, p+"applications/a", "x"); err != nil {
		t.Fatal(err)
	}
	if ev, ok := firstEvent(other); !ok || ev.ID != "a" {
		t.Fatalf("the other subscriber: %+v, %v", ev, ok)
	}
}

// One model's fan-out (the model's lock held) does not hold up subscribing to, hearing from and
// leaving another model.
func TestHubModelsDoNotWaitOnEachOther(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	busy, quiet := newModel(t, ""), newModel(t, "")
	hub := st.NewHub(ctx)
	if _, err := hub.Subscribe(ctx, busy, []state.WatchKey{{Key: state.ModelPrefix(busy)}}); err != nil {
		t.Fatal(err)
	}
	release := hub.HoldModel(busy)
	defer release()
	subCtx, unsubscribe := context.WithCancel(ctx)
	sub, err := hub.Subscribe(subCtx, quiet, []state.WatchKey{{Key: state.ModelPrefix(quiet) + "machines/"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().Put(ctx, state.ModelPrefix(quiet)+"machines/0", "x"); err != nil {
		t.Fatal(err)
	}
	if _, ok := firstEvent(sub); !ok {
		t.Fatal("no event from the quiet model while the busy one delivers")
	}
	unsubscribe()
	for range sub.Events() { // ends once unsubscribed
	}
	if ctx.Err() != nil {
		t.Fatal("leaving the quiet model waited for the busy one")
	}
}

// BenchmarkHubFanOut: events per second delivered to one subscriber of a model, with 10 and
// 10,000 idle subscribers (shaped like unit agents) on other keys, and the memory of an idle
// subscription. Events come from etcd in transactions of 100 puts.
func BenchmarkHubFanOut(b *testing.B) {
	for _, idle := range []int{10, 10000} {
		b.Run(fmt.Sprintf("idle=%d", idle), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m, err := st.AddModel(ctx, fmt.Sprintf("bench-%d-%d", idle, time.Now().UnixNano()%1000000), "admin", "", "localhost", "localhost")
			if err != nil {
				b.Fatal(err)
			}
			uuid, p := m.Uuid, state.ModelPrefix(m.Uuid)
			hub := st.NewHub(ctx)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			idleSubscribers(b, ctx, hub, uuid, 0, idle)
			runtime.GC()
			runtime.ReadMemStats(&after)
			perSub := float64(int64(after.HeapAlloc+after.StackInuse)-int64(before.HeapAlloc+before.StackInuse)) / float64(idle)
			sub, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: p + "machines/"}})
			if err != nil {
				b.Fatal(err)
			}
			const batch = 100
			ops := make([]clientv3.Op, batch)
			for j := range ops {
				ops[j] = clientv3.OpPut(p+"machines/"+strconv.Itoa(j), "x")
			}
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(batch, b.N-done)
				if _, err := st.Client().Txn(ctx).Then(ops[:n]...).Commit(); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < n; {
					<-sub.Ready()
					evs, ok := sub.Take()
					if !ok {
						b.Fatal("subscription ended")
					}
					got += len(evs)
				}
				done += n
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if idle >= 1000 { // with a few, the garbage collector's noise is larger than they are
				b.ReportMetric(perSub, "B/idle-sub")
			}
		})
	}
}

// A unit agent's own writes (statuses before and after each hook, entering a relation's scope)
// do not wake it: a key with IgnoreOwnWrites hears of every other change of the unit, and a
// plain key of every change.
func TestHubIgnoreOwnWritesSkipsStatusAndScopeChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	deploy(t, uuid, "wp", "name: wp\nsummary: s\ndescription: d\npeers:\n  cluster: wp-peers\n", "")
	units, err := st.AddUnits(ctx, uuid, "wp", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	unit := units[0]
	key, err := state.KeyPrefix(uuid, state.KindUnit, unit)
	if err != nil {
		t.Fatal(err)
	}
	hub := st.NewHub(ctx)
	ignoring, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: key, IgnoreOwnWrites: true}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetUnitStatus(ctx, uuid, unit, state.UnitStatus{
		Agent:         &storepb.Status{Status: "executing", Message: "running install hook"},
		Workload:      &storepb.Status{Status: "maintenance", Message: "installing charm software"},
		PublicAddress: "127.1.0.9",
	}); err != nil {
		t.Fatal(err)
	}
	statusOnly, ok := firstEvent(plain)
	if !ok || statusOnly.ID != unit {
		t.Fatalf("a plain watch of the unit missed its status change: %+v", statusOnly)
	}
	rels, err := st.Relations(ctx, uuid)
	if err != nil || len(rels) != 1 {
		t.Fatalf("the peer relation: %v %v", rels, err)
	}
	if _, err := st.EnterScope(ctx, uuid, rels[0].Id, unit, map[string]string{"private-address": "127.1.0.9"}); err != nil {
		t.Fatal(err)
	}
	scope, ok := firstEvent(plain)
	if !ok || scope.ID != unit || scope.Revision <= statusOnly.Revision {
		t.Fatalf("a plain watch of the unit missed its scope change: %+v", scope)
	}
	if _, err := st.SetUnitPorts(ctx, uuid, unit, []string{"80/tcp"}, nil); err != nil {
		t.Fatal(err)
	}
	ev, ok := firstEvent(ignoring)
	if !ok || ev.ID != unit {
		t.Fatalf("the watch ignoring its own writes missed the ports' change: %+v", ev)
	}
	if ev.Revision <= scope.Revision {
		t.Errorf("the watch ignoring its own writes heard of the status or scope change (revision %d)", ev.Revision)
	}
}

// A SubscribeFunc subscription outlives the context of its call (it holds none: WatchMany's
// thousands of watches each held a context and an after-func) and ends on Close, once; a key
// others watch too is held once.
func TestHubSubscribeFuncEndsOnCloseOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	key := state.ModelPrefix(uuid) + "machines/0"
	hub := st.NewHub(ctx)
	ready := make(chan struct{}, 1)
	callCtx, endCall := context.WithCancel(ctx)
	sub, err := hub.SubscribeFunc(callCtx, uuid, []state.WatchKey{{Key: key}}, func() {
		select {
		case ready <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	endCall()
	if _, err := st.Client().Put(ctx, key, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal("no event after the call's context ended")
	}
	if evs, ok := sub.Take(); len(evs) != 1 || !ok {
		t.Fatalf("Take = %v, %v; want one event of a live subscription", evs, ok)
	}
	// A second subscriber of the same key keeps the first one's copy of it, not its own.
	again, err := hub.SubscribeFunc(ctx, uuid, []state.WatchKey{{Key: strings.Clone(key)}}, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if again.KeyData(0) != sub.KeyData(0) {
		t.Error("a key two subscriptions watch is held twice")
	}
	again.Close()
	sub.Close()
	sub.Close()
	<-ready // the end is announced
	if _, ok := sub.Take(); ok {
		t.Fatal("the subscription did not end on Close")
	}
}
