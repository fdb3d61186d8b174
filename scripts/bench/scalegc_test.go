package main

import (
	"strings"
	"testing"
)

func TestParseGCTraceSumsTheCollectionsOfAWindow(t *testing.T) {
	log := strings.Join([]string{
		`time=2026-12-02T06:00:00Z level=INFO msg="machine provisioned"`,
		`gc 7 @12.345s 3%: 0.021+15+0.030 ms clock, 0.042+1.5/20/4.0+0.060 ms cpu, 300->310->150 MB, 320 MB goal, 1 MB stacks, 0 MB globals, 2 P`,
		`gc 8 @20.000s 3%: 0.020+900+0.031 ms clock, 0.040+100/1200/300+0.060 ms cpu, 4200->4300->2100 MB, 4400 MB goal, 9 MB stacks, 0 MB globals, 2 P`,
		`gc 9 @25.000s 3%: 0.020+900+0.031 ms clock, cut short`,
	}, "\n")
	s := parseGCTrace(strings.NewReader(log))
	if s.count != 2 {
		t.Fatalf("count = %d, want 2", s.count)
	}
	if want := 0.042 + 1.5 + 20 + 4.0 + 0.060 + 0.040 + 100 + 1200 + 300 + 0.060; s.cpuMs < want-1e-6 || s.cpuMs > want+1e-6 {
		t.Errorf("cpu = %v ms, want %v", s.cpuMs, want)
	}
	if s.liveMB != 2100 {
		t.Errorf("live = %d MB, want 2100", s.liveMB)
	}
	if got, want := s.String(), "2 (1.6 s of CPU, up to 2,100 MB live)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (gcSummary{}).String(); got != "none" {
		t.Errorf("empty String() = %q, want none", got)
	}
}
