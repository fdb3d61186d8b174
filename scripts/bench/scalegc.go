package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The scale run starts its controller with GODEBUG=gctrace=1: the Go runtime of jujud and of the
// agent host then writes a line per collection to their logs, which say how many collections
// fell in a measured window and what CPU they took. At 100,000 units one collection of jujud
// marks gigabytes, and whether the last 1,000 units' window holds one or none moves their CPU
// per unit by more than the whole budget; the note says which it was.

// gcLogs are the logs the two processes' stderr goes to, in the controller's directory: jujud's
// and the agent host's, in scaleProbe's order.
var gcLogs = [2]string{"jujud.log", "agents.log"}

// gcTraceEnv is what bootstrap adds to the environment jujud (and the agent host it starts) inherit.
const gcTraceEnv = "GODEBUG=gctrace=1"

// logSizes is where each log ends now: a window's collections are the lines written between two.
func logSizes() (sizes [2]int64) {
	for i, name := range gcLogs {
		if fi, err := os.Stat(filepath.Join(ctrlDir(), name)); err == nil {
			sizes[i] = fi.Size()
		}
	}
	return sizes
}

// gcSummary is what the collections of one process in a window cost.
type gcSummary struct {
	count  int
	cpuMs  float64 // the CPU the runtime reports for them: the stop-the-world phases and marking
	liveMB int     // the largest heap left live after one of them
}

func (s gcSummary) String() string {
	if s.count == 0 {
		return "none"
	}
	return fmt.Sprintf("%d (%.1f s of CPU, up to %s MB live)", s.count, s.cpuMs/1000, thousands(float64(s.liveMB)))
}

// gcBetween sums, for each process, the collections its log records between two probes.
func gcBetween(from, to scaleProbe) (out [2]gcSummary) {
	for i, name := range gcLogs {
		if to.logSizes[i] <= from.logSizes[i] {
			continue
		}
		f, err := os.Open(filepath.Join(ctrlDir(), name))
		if err != nil {
			continue
		}
		out[i] = parseGCTrace(io.NewSectionReader(f, from.logSizes[i], to.logSizes[i]-from.logSizes[i]))
		f.Close()
	}
	return out
}

// gcLine is the runtime's line per collection (runtime/extern.go, gctrace):
// "gc 12 @3.456s 2%: 0.02+1.2+0.01 ms clock, 0.05+0.3/2.1/0.9+0.03 ms cpu, 40->41->20 MB, ...".
var gcLine = regexp.MustCompile(`^gc \d+ @[0-9.]+s \d+%: [0-9.+]+ ms clock, ([0-9.+/]+) ms cpu, \d+->\d+->(\d+) MB`)

func parseGCTrace(r io.Reader) (s gcSummary) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("gc ")) {
			continue
		}
		m := gcLine.FindSubmatch(line)
		if m == nil {
			continue
		}
		s.count++
		for _, part := range strings.FieldsFunc(string(m[1]), func(r rune) bool { return r == '+' || r == '/' }) {
			if ms, err := strconv.ParseFloat(part, 64); err == nil {
				s.cpuMs += ms
			}
		}
		if live, err := strconv.Atoi(string(m[2])); err == nil {
			s.liveMB = max(s.liveMB, live)
		}
	}
	return s
}
