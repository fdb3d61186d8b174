package main

import (
	"os"
	"strings"
	"testing"
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
