package main

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCSettingsRaiseTheTargetUnlessGOGCIsSet(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, tc := range []struct {
		name        string
		vars        map[string]string
		mem         int64
		wantPercent int
		wantLimit   int64
	}{
		{"defaults", nil, 24 << 30, gcPercent, 12 << 30},
		{"GOGC set", map[string]string{"GOGC": "100"}, 24 << 30, 0, 12 << 30},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "4GiB"}, 24 << 30, gcPercent, 0},
		{"memory unknown", nil, 0, gcPercent, 0},
	} {
		percent, limit := gcSettings(env(tc.vars), tc.mem)
		if percent != tc.wantPercent || limit != tc.wantLimit {
			t.Errorf("%s: got %d, %d; want %d, %d", tc.name, percent, limit, tc.wantPercent, tc.wantLimit)
		}
	}
}

func TestMemTotalIsRead(t *testing.T) {
	if memTotalBytes() <= 0 {
		t.Fatal("no MemTotal in /proc/meminfo")
	}
}

// Idle checks in a row (no collection, next to no allocation) make the process quiet (no
// target, a limit where the target would have collected); the first check that is not idle
// makes it busy again (issue 16).
func TestIdleGCQuietAfterIdleChecks(t *testing.T) {
	const mib = 1 << 20
	m := &gcModes{percent: 200, backstop: 12 << 30, after: 2, cycles: 5, allocs: 1000 * mib}
	// 200 MiB of room before the next collection: a check is idle below 200 MiB / 384.
	f := gcFigures{cycles: 6, allocs: 1000 * mib, goal: 300 * mib, objects: 100 * mib, mapped: 400 * mib, free: 50 * mib}
	if _, _, ok := m.check(f); ok || m.quiet {
		t.Fatal("a check after a collection changed the settings")
	}
	if _, _, ok := m.check(f); ok || m.quiet {
		t.Fatal("one idle check of the two needed changed the settings")
	}
	f.allocs += 1 * mib // busy: 1 MiB in one check would fill the room in 200 checks
	if _, _, ok := m.check(f); ok || m.quiet || m.still != 0 {
		t.Fatal("a check that allocated a lot counted as idle")
	}
	m.check(f)
	f.allocs += 100 << 10 // 100 KiB: idle
	percent, limit, ok := m.check(f)
	// The goal plus what is neither objects nor free pages: 300 + (400 - 150) MiB.
	if !ok || percent != -1 || limit != 550*mib || !m.quiet {
		t.Fatalf("quiet check = %d, %d MiB, %v; want -1, 550 MiB, true", percent, limit/mib, ok)
	}
	if _, _, ok := m.check(f); ok {
		t.Fatal("an idle check while quiet changed the settings")
	}
	f.allocs += 10 * mib
	if percent, limit, ok := m.check(f); !ok || percent != 200 || limit != 12<<30 || m.quiet {
		t.Fatalf("check after allocation while quiet = %d, %d, %v; want 200, the backstop, true", percent, limit, ok)
	}
	m.quiet, m.still = true, 0
	f.cycles++
	if percent, _, ok := m.check(f); !ok || percent != 200 || m.quiet {
		t.Fatal("a collection while quiet did not make the process busy")
	}
}

func TestQuietLimitBounds(t *testing.T) {
	const mib = 1 << 20
	// A heap at its goal: the limit stays a sixteenth above what is held, so the scavenger
	// has nothing to give back.
	f := gcFigures{goal: 100 * mib, objects: 100 * mib, mapped: 160 * mib, free: 0}
	if got := quietLimit(f, math.MaxInt64); got != 170*mib {
		t.Errorf("limit at the goal = %d MiB, want 170", got/mib)
	}
	f = gcFigures{goal: 3000 * mib, objects: 1000 * mib, mapped: 2000 * mib}
	if got := quietLimit(f, 2500*mib); got != 2500*mib {
		t.Errorf("limit above the backstop = %d MiB, want the backstop 2500", got/mib)
	}
}

// In this very process: after a check with no collection the target is off and a limit set;
// a collection puts the target and the limit back.
func TestIdleGCQuietInProcess(t *testing.T) {
	oldPercent := debug.SetGCPercent(200)
	oldLimit := debug.SetMemoryLimit(8 << 30)
	t.Cleanup(func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { keepIdleGCQuiet(ctx, 200, 20*time.Millisecond, 3); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	waitGOGC := func(want int64) {
		t.Helper()
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		deadline := time.Now().Add(time.Minute)
		for {
			metrics.Read(s)
			if int64(s[0].Value.Uint64()) == want || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if got := int64(s[0].Value.Uint64()); got != want {
			t.Fatalf("GOGC = %d, want %d", got, want)
		}
	}
	waitGOGC(-1) // the test allocates little: quiet within a few checks
	if limit := debug.SetMemoryLimit(-1); limit >= 8<<30 {
		t.Errorf("quiet limit = %d, want below the backstop", limit)
	}
	runtime.GC()
	waitGOGC(200)
	if limit := debug.SetMemoryLimit(-1); limit != 8<<30 {
		t.Errorf("busy limit = %d, want the backstop back", limit)
	}
}
