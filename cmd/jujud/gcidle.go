package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The runtime collects any heap that has gone two minutes without a collection, and its
// scavenger then hands the memory that collection freed back to the system. An idle
// controller's heap does not change, so those collections free nothing, yet each marks all of
// it: at 100,000 units they, and the scavenging after them, were four fifths of the idle
// controller's and agent host's CPU (0.23 cores of the 0.2 the issue allows; BENCHMARKS.md, At
// scale). So once the process has gone a minute without a collection and with next to no
// allocation, the collector's target is turned off and a memory limit stands where the target
// would have started the next collection: the heap is collected at the same size as before, but
// not on a timer. The first check that sees a collection or allocation brings the target back.

// idleCheck is how often the process looks for a quiet spell, and quietChecks how many idle
// checks in a row make one: a minute, well inside the runtime's two, so that no timed
// collection comes after the last real one.
const (
	idleCheck   = 10 * time.Second
	quietChecks = 6
)

// gcFigures are the runtime's figures the switch is decided on.
type gcFigures struct {
	cycles  uint64 // collections so far
	allocs  uint64 // bytes allocated so far
	goal    uint64 // heap size (objects) at which the target starts the next collection
	objects uint64 // bytes of heap objects, live or not yet swept
	mapped  uint64 // memory the runtime holds and has not given back (what a memory limit counts)
	free    uint64 // of which free heap pages not given back
}

func readGCFigures() gcFigures {
	samples := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/heap/allocs:bytes"},
	}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return gcFigures{cycles: v(0), goal: v(1), objects: v(2), mapped: v(3) - min(v(4), v(3)), free: v(5), allocs: v(6)}
}

// quietLimit is the memory limit that starts a collection when the heap's objects reach the
// target's goal. A limit counts all the memory the runtime holds; the heap may grow into its
// free pages without the total growing, so what is not the heap's objects or free pages (stacks,
// the runtime's own) is added to the goal. It is at least a sixteenth above what is held now,
// so that the scavenger (which keeps what is held under 95 % of a limit) has nothing to hand
// back, and never above backstop.
func quietLimit(f gcFigures, backstop int64) int64 {
	other := f.mapped - min(f.free+f.objects, f.mapped)
	limit := max(f.goal+other, f.mapped+f.mapped/16)
	if limit >= uint64(backstop) { // a limit in force is never negative
		return backstop
	}
	return int64(limit)
}

// gcModes switches the collector between its target (busy) and a memory limit alone (quiet).
// Quiet means idle: no collection and next to no allocation, at a pace that would take more than
// quietRoom times the check's length to fill the room left before the target's next collection.
// A process at 100,000 units has gigabytes of room and may go minutes between collections while
// it works; the switch must not take it for idle then.
type gcModes struct {
	percent  int   // the target while busy
	backstop int64 // the memory limit while busy (math.MaxInt64: none)
	after    int   // idle checks in a row that make the process quiet
	quiet    bool
	cycles   uint64 // collections at the last check
	allocs   uint64 // bytes allocated at the last check
	still    int    // idle checks in a row
}

// quietRoom: a check is idle when what it allocated would fill the room before the next
// collection no sooner than in this many checks (over an hour for checks of 10 s).
const quietRoom = 384

// check is one look at the figures: quiet after m.after idle checks in a row, busy again after
// any check that is not idle. It returns the settings to apply, or ok false to leave them.
func (m *gcModes) check(f gcFigures) (percent int, limit int64, ok bool) {
	collected := f.cycles != m.cycles
	allocated := f.allocs - min(m.allocs, f.allocs)
	m.cycles, m.allocs = f.cycles, f.allocs
	room := f.goal - min(f.objects, f.goal) // while quiet, the goal is the limit's
	idle := !collected && allocated*quietRoom <= room
	if idle {
		m.still++
	} else {
		m.still = 0
	}
	switch {
	case m.quiet && !idle:
		m.quiet = false
		return m.percent, m.backstop, true
	case !m.quiet && m.still >= m.after:
		m.quiet = true
		return -1, quietLimit(f, m.backstop), true
	}
	return 0, 0, false
}

// apply sets a mode's settings: the limit first when going quiet, so that the heap is never
// without a bound, and the target first when going busy.
func apply(percent int, limit int64) {
	if percent < 0 {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
		return
	}
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
}

// keepIdleGCQuiet runs the switch until ctx ends (the process's life): a check every every
// (after idle ones in a row make the process quiet), and one at once after each collection
// made while quiet, so that a collection at the limit does not leave the next one at the same
// limit while the heap grows. The target while busy is percent, the limit the one in force
// when it starts; both are put back when it ends.
func keepIdleGCQuiet(ctx context.Context, percent int, every time.Duration, after int) {
	f := readGCFigures()
	m := &gcModes{percent: percent, backstop: debug.SetMemoryLimit(-1), after: after, cycles: f.cycles, allocs: f.allocs}
	defer func() {
		if m.quiet {
			apply(m.percent, m.backstop)
		}
	}()
	collected := make(chan struct{}, 1)
	watchCollections(ctx, collected)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-collected:
			if !m.quiet {
				continue
			}
		}
		if p, l, ok := m.check(readGCFigures()); ok {
			apply(p, l)
		}
	}
}

// watchCollections sends on ch (without blocking) after every collection until ctx ends: a
// cleanup of an object nothing references runs after the collection that finds it, and arms
// the next.
func watchCollections(ctx context.Context, ch chan<- struct{}) {
	runtime.AddCleanup(&gcSentinel{}, func(ch chan<- struct{}) {
		if ctx.Err() != nil {
			return
		}
		select {
		case ch <- struct{}{}:
		default:
		}
		watchCollections(ctx, ch)
	}, ch)
}

// gcSentinel is the object whose cleanup marks a collection; it holds a pointer, so that it is
// never one of the runtime's tiny allocations (whose cleanups may never run).
type gcSentinel struct {
	_ *int
	_ int
}
