package main

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The machine's own speed. Two 100,000-unit runs of nearly the same code gave jujud 1.20× and
// 1.66× its first 1,000 units' CPU per unit over the last 1,000, and the agent host moved with
// it: on a VM the CPU time a fixed piece of work takes is not fixed (other guests share the
// caches and the memory bus; the host moves the VM between cores). So the scale run times two
// fixed pieces of work in its own process around each measured window, and reads the CPU the
// hypervisor kept for itself (steal, /proc/stat) during the windows: a ratio over budget then
// says whether the controller or the machine got slower.

// speedSample is what the fixed work took of this thread's CPU, in each kind.
type speedSample struct {
	compute time.Duration // hashing a buffer that stays in the caches
	memory  time.Duration // a walk of a chain scattered over a buffer larger than the caches (as marking a large heap is)
}

// speedWork is the fixed work: its buffers are made once, so that timing it allocates nothing
// and no collection of this process lands in it.
type speedWork struct {
	data  []byte
	chain []uint32
}

// newSpeedWork makes the buffers: the chain has slots uint32s (16 Mi, 64 MiB, in the run: larger
// than the machine's caches).
func newSpeedWork(slots int) *speedWork {
	w := &speedWork{data: make([]byte, 256<<10), chain: make([]uint32, slots)}
	for i := range w.data {
		w.data[i] = byte(i)
	}
	// One cycle through every slot in a random order: every step a cache miss.
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(w.chain))
	for i, at := range order {
		w.chain[at] = uint32(order[(i+1)%len(order)])
	}
	return w
}

// threadCPU is the CPU this OS thread has used (the caller holds it with LockOSThread), to the
// nanosecond (getrusage counts in scheduler ticks).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// sample times each kind of work reps times and keeps the medians.
func (w *speedWork) sample(reps int) speedSample {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var compute, memory []time.Duration
	for range reps {
		t0 := threadCPU()
		sum := sha256.Sum256(nil)
		for range 256 { // 64 MiB hashed
			sum = sha256.Sum256(append(w.data[:len(w.data)-len(sum)], sum[:]...))
		}
		t1 := threadCPU()
		at := uint32(0)
		for range 1 << 20 {
			at = w.chain[at]
		}
		t2 := threadCPU()
		speedSink += uint64(at) + uint64(sum[0]) // so that neither loop is optimized away
		compute, memory = append(compute, t1-t0), append(memory, t2-t1)
	}
	return speedSample{compute: mid(compute), memory: mid(memory)}
}

var speedSink uint64

// cpuStat is the machine's CPU time from /proc/stat's first line, in clock ticks: all of it,
// and the part the hypervisor kept (steal).
type cpuStat struct{ total, steal int64 }

func readCPUStat() cpuStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPUStat(line)
}

// parseCPUStat reads "cpu  user nice system idle iowait irq softirq steal guest guest_nice";
// guest time is already counted in user, so it is not added.
func parseCPUStat(line string) (s cpuStat) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuStat{}
	}
	for i := 1; i <= 8; i++ {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		s.total += v
	}
	s.steal, _ = strconv.ParseInt(f[8], 10, 64)
	return s
}

// stealShare is the share of the machine's CPU the hypervisor kept between two readings.
func stealShare(from, to cpuStat) float64 {
	if to.total <= from.total {
		return 0
	}
	return float64(to.steal-from.steal) / float64(to.total-from.total)
}

// windowSpeed is the machine as seen around one measured window.
type windowSpeed struct {
	before, after speedSample
	steal         float64
}

// around starts watching the machine around a window: the fixed work timed and /proc/stat read
// now; the returned func reads /proc/stat and times the work again, when the window ends.
func (w *speedWork) around() (end func() windowSpeed) {
	before, from := w.sample(speedReps), readCPUStat()
	return func() windowSpeed {
		steal := stealShare(from, readCPUStat())
		return windowSpeed{before: before, after: w.sample(speedReps), steal: steal}
	}
}

// speedReps is how many times each kind of work is timed on each side of a window (the median
// is kept).
const speedReps = 5

// memory is the mean of the memory walk's times before and after the window.
func (w windowSpeed) memory() time.Duration { return (w.before.memory + w.after.memory) / 2 }

func (w windowSpeed) compute() time.Duration { return (w.before.compute + w.after.compute) / 2 }

// speedNote says how the machine's speed and steal compared in the two windows, and what jujud's
// ratio would be at the first window's speed (the memory walk's, the kind of work that moved most
// in earlier runs; both are given).
func speedNote(size string, first, last windowSpeed, jujudRatio float64) string {
	times := func(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }
	mem, comp := times(last.memory(), first.memory()), times(last.compute(), first.compute())
	return fmt.Sprintf("Scale, %s units: the machine's own speed, fixed work timed in the bench's own thread before and after each measured window "+
		"(hashing 64 MiB; a walk of 1 Mi steps through a 64 MiB random chain): the first 1,000, %s and %s; the last 1,000, %s and %s, "+
		"so the same work cost %.2f× and %.2f× at the end. The hypervisor kept %.1f %% and %.1f %% of the CPU (steal) in the two windows. "+
		"At the first window's speed, jujud's ratio would be %.2f× by the hashing, %.2f× by the walk.",
		size, fmtUs(first.compute()), fmtUs(first.memory()), fmtUs(last.compute()), fmtUs(last.memory()),
		comp, mem, 100*first.steal, 100*last.steal, jujudRatio/comp, jujudRatio/mem)
}
