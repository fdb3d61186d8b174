package main

import "testing"

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
