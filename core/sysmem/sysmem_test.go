package sysmem

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseTotal(t *testing.T) {
	got, err := parseTotal(strings.NewReader("MemTotal:       24576000 kB\nMemFree:        1000 kB\n"))
	if err != nil || got != 24576000*1024 {
		t.Fatalf("got %d, %v", got, err)
	}
	if _, err := parseTotal(strings.NewReader("MemFree: 1 kB\n")); err == nil {
		t.Fatal("no MemTotal: no error")
	}
	if total, err := Total(); err != nil || total == 0 {
		t.Fatalf("this machine: %d, %v", total, err)
	}
}

// The environment's own GOGC and GOMEMLIMIT win over the daemon's defaults.
func TestTuneDaemonLeavesTheEnvironmentsChoice(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc, limit := TuneDaemon()
	if gc != DaemonGCPercent || debug.SetGCPercent(-1) != DaemonGCPercent {
		t.Errorf("GOGC unset: collector at %d", gc)
	}
	total, _ := Total()
	if limit != int64(total/DaemonLimitShare) || debug.SetMemoryLimit(-1) != limit {
		t.Errorf("GOMEMLIMIT unset: limit %d, want %d", limit, total/DaemonLimitShare)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if gc, limit := TuneDaemon(); gc != 0 || limit != 0 || debug.SetGCPercent(-1) != 100 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("set by the environment: tuned to %d, %d", gc, limit)
	}
}
