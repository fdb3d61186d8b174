package main

import (
	"context"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the collector's target in jujud and the agent host when GOGC is not set: a heap
// may grow to three times what is live before the next collection, not Go's default two. Both
// processes keep a large live heap (the store's index, an agent's state per unit) and allocate
// a little for every call, so collection was a sixth of their CPU during a deploy; at 200 a
// 4,000-unit deploy cost them 16 % less CPU, for a third more heap (issue 16).
const gcPercent = 200

// gcSettings decides the collector's target and soft memory limit from the environment (GOGC
// and GOMEMLIMIT, which the runtime has already applied and are left as they are) and the
// machine's memory in bytes (0: unknown). The limit, half the machine's memory, is a backstop
// for the larger target: a heap that nears it is collected sooner, whatever gcPercent says.
// A limit of 0 or a percent of 0 means leave it.
func gcSettings(getenv func(string) string, memTotal int64) (percent int, limit int64) {
	if getenv("GOGC") == "" {
		percent = gcPercent
	}
	if getenv("GOMEMLIMIT") == "" && memTotal > 0 {
		limit = memTotal / 2
	}
	return percent, limit
}

// tuneGC applies gcSettings to this process.
func tuneGC() {
	percent, limit := gcSettings(os.Getenv, memTotalBytes())
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	if percent > 0 {
		debug.SetGCPercent(percent)
		// An idle process is not collected on a timer (gcidle.go); with GOGC set, the
		// collector is left as it was told.
		go keepIdleGCQuiet(context.Background(), percent, idleCheck, quietChecks)
	}
}

// memTotalBytes is MemTotal of /proc/meminfo, in bytes (0 where it cannot be read).
func memTotalBytes() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
