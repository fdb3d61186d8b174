package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// procStat reads this process's own page faults: touching fresh memory adds some.
func TestProcStatReadsFaults(t *testing.T) {
	_, before := procStat(os.Getpid())
	buf := make([]byte, 32<<20)
	for i := 0; i < len(buf); i += 4 << 10 {
		buf[i] = 1 // touched, so faulted in
	}
	_, after := procStat(os.Getpid())
	if after <= before {
		t.Errorf("procStat: %d minor faults before touching 32 MiB of fresh memory, %d after", before, after)
	}
	if ticks, faults := procStat(-1); ticks != 0 || faults != 0 {
		t.Errorf("procStat of no process = %d, %d; want 0, 0", ticks, faults)
	}
}

// The faults note gives each window's faults per unit, and says a window it did not measure.
func TestFaultsNote(t *testing.T) {
	got := faultsNote("100,000", [2]int64{250000, 30000}, [2]int64{400000, 50000}, batchCost{})
	for _, want := range []string{"the first 1,000, jujud 250 and the agent host 30", "the last 1,000, jujud 400 and the agent host 50",
		"the last add-unit -n 0, jujud not measured"} {
		if !strings.Contains(got, want) {
			t.Errorf("faultsNote = %q; want it to say %q", got, want)
		}
	}
}

// The fixed work takes CPU of both kinds, and the walk visits every slot of its chain once a cycle.
func TestSpeedWorkSample(t *testing.T) {
	w := newSpeedWork(1 << 12)
	at, seen := uint32(0), map[uint32]bool{}
	for range len(w.chain) {
		seen[at] = true
		at = w.chain[at]
	}
	if at != 0 || len(seen) != len(w.chain) {
		t.Errorf("the chain is not one cycle through all %d slots: %d seen, back at %d", len(w.chain), len(seen), at)
	}
	s := w.sample(3)
	if s.compute <= 0 || s.memory <= 0 {
		t.Errorf("sample = %+v; want both kinds of work to take CPU", s)
	}
}

// /proc/stat's first line gives the machine's CPU and its steal; steal is a share of what passed.
func TestCPUStatSteal(t *testing.T) {
	from := parseCPUStat("cpu  100 0 50 800 10 0 5 35 0 0")
	to := parseCPUStat("cpu  200 0 100 1500 20 0 10 70 7 0")
	if from != (cpuStat{total: 1000, steal: 35}) {
		t.Errorf("parseCPUStat = %+v; want total 1000, steal 35", from)
	}
	if got := stealShare(from, to); got != 35.0/900 {
		t.Errorf("stealShare = %v; want %v", got, 35.0/900)
	}
	if got := stealShare(to, to); got != 0 {
		t.Errorf("stealShare of no time = %v; want 0", got)
	}
	if got := parseCPUStat("cpu0 1 2 3"); got != (cpuStat{}) {
		t.Errorf("parseCPUStat of another line = %+v; want zero", got)
	}
	if live := readCPUStat(); live.total <= 0 {
		t.Errorf("readCPUStat = %+v; want this machine's CPU time", live)
	}
}

// The speed note gives both windows' times and jujud's ratio at the first window's speed.
func TestSpeedNote(t *testing.T) {
	ms := time.Millisecond
	first := windowSpeed{before: speedSample{compute: 40 * ms, memory: 100 * ms}, after: speedSample{compute: 40 * ms, memory: 100 * ms}, steal: 0.01}
	last := windowSpeed{before: speedSample{compute: 44 * ms, memory: 140 * ms}, after: speedSample{compute: 44 * ms, memory: 140 * ms}, steal: 0.05}
	got := speedNote("100,000", first, last, 1.68)
	for _, want := range []string{"the first 1,000, 40.00 ms and 100.00 ms", "the last 1,000, 44.00 ms and 140.00 ms",
		"cost 1.10× and 1.40× at the end", "1.0 % and 5.0 %", "1.53× by the hashing, 1.20× by the walk"} {
		if !strings.Contains(got, want) {
			t.Errorf("speedNote = %q; want it to say %q", got, want)
		}
	}
}

// The mount that holds a path is the longest mount point over it, the later of two at one point.
func TestMountOf(t *testing.T) {
	info := strings.Join([]string{
		"21 26 0:20 / /proc rw,relatime - proc proc rw",
		"26 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
		"30 26 0:30 / /tmp rw - tmpfs tmpfs rw",
		"31 26 7:0 / /var/lib/with\\040space rw - ext4 /dev/loop0 rw",
		"32 30 0:31 / /tmp rw - ext4 /dev/vdb rw",
		"garbage",
	}, "\n")
	for _, tc := range []struct{ path, source, fsType string }{
		{"/home/x", "/dev/vda", "ext4"},
		{"/", "/dev/vda", "ext4"},
		{"/tmp/juju-bench-1", "/dev/vdb", "ext4"},
		{"/tmpfoo", "/dev/vda", "ext4"},
		{"/var/lib/with space/data", "/dev/loop0", "ext4"},
		{"/proc/self", "proc", "proc"},
	} {
		source, fsType := mountOf(strings.NewReader(info), tc.path)
		if source != tc.source || fsType != tc.fsType {
			t.Errorf("mountOf(%q) = %q, %q; want %q, %q", tc.path, source, fsType, tc.source, tc.fsType)
		}
	}
	// On this machine the note is either empty or names the device.
	if note := journalNote(os.TempDir()); note != "" && !strings.Contains(note, "/dev/") {
		t.Errorf("journalNote = %q; want it to name the device", note)
	}
}
