package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jujuclone/juju/core/fdlimit"
)

// testRunner is a runner without a controller: its agents are the functions the tests give.
func testRunner(t *testing.T, cfg RunnerConfig) *Runner {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := NewRunner(ctx, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	t.Cleanup(func() { cancel(); r.Wait() })
	return r
}

// StopTree stops a directory's agent and those below it, and no other: a machine with its
// units and their subordinates, leaving a machine whose name shares the prefix.
func TestStopTreeStopsTheTreeOnly(t *testing.T) {
	r := testRunner(t, RunnerConfig{FDReserve: -1})
	root := t.TempDir()
	stopped := make(chan string, 100)
	start := func(dir string) {
		r.start(dir, func(ctx context.Context) error {
			<-ctx.Done()
			stopped <- dir
			return nil
		})
	}
	m1, m10 := filepath.Join(root, "machine-1"), filepath.Join(root, "machine-10")
	u0 := filepath.Join(m1, "units", "unit-app-0")
	sub := filepath.Join(u0, "subordinates", "unit-log-0")
	for _, d := range []string{m1, filepath.Join(m1, sshdDirName), u0, sub, filepath.Join(m1, "units", "unit-app-1"), m10, filepath.Join(m10, "units", "unit-app-2")} {
		start(d)
	}
	r.StopTree(u0 + "/")
	want := []string{sub, u0}
	got := []string{<-stopped, <-stopped}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stopped %v, want %v", got, want)
	}
	r.StopTree(m1)
	got = []string{<-stopped, <-stopped, <-stopped}
	slices.Sort(got)
	want = []string{m1, filepath.Join(m1, "units", "unit-app-1"), filepath.Join(m1, sshdDirName)}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stopped %v, want %v", got, want)
	}
	r.mu.Lock()
	n, m10Runs := r.agents.len(), r.agents.get(m10) != nil
	r.mu.Unlock()
	if n != 2 || !m10Runs {
		t.Errorf("%d agents left (machine-10 running: %v), want machine-10 and its unit", n, m10Runs)
	}
	// A stopped tree's agents start again.
	start(u0)
	if !r.running(u0) {
		t.Error("unit-app-0 did not start again")
	}
}

// The tree's work is that of the directory's path and its own subtree: removing one unit among
// thousands of machines touches its nodes only, and leaves no empty node behind.
func TestAgentTreeWorkIsTheSubtree(t *testing.T) {
	var tree agentTree
	noop := func() {}
	for i := range 5000 {
		tree.put(fmt.Sprintf("/c/instances/machine-%d", i), noop)
		tree.put(fmt.Sprintf("/c/instances/machine-%d/units/unit-app-%d", i, i), noop)
	}
	if n := len(tree.removeTree("/c/instances/machine-42/units/unit-app-42")); n != 1 {
		t.Fatalf("removed %d agents, want 1", n)
	}
	m := tree.root.children["c"].children["instances"].children["machine-42"]
	if m == nil || m.cancel == nil || len(m.children) != 0 {
		t.Fatalf("machine-42 after its unit went: %+v", m)
	}
	if n := len(tree.removeTree("/c/instances/machine-42")); n != 1 {
		t.Fatalf("removed %d agents, want 1", n)
	}
	if tree.root.children["c"].children["instances"].children["machine-42"] != nil {
		t.Error("an empty node was left behind")
	}
	if tree.remove("/c/instances/machine-7") == nil || tree.get("/c/instances/machine-7/units/unit-app-7") == nil {
		t.Error("remove took the machine's unit with it, or not the machine")
	}
	if tree.len() != 9997 {
		t.Errorf("%d agents left, want 9,997", tree.len())
	}
}

// Near the limit of open files the runner refuses a new agent with an error that says so,
// and starts nothing; an agent that runs already is left alone.
func TestRunnerRefusesAgentsNearTheFileLimit(t *testing.T) {
	limit, err := fdlimit.Limit()
	if err != nil || limit > 1<<30 {
		t.Skip("no limit of open files to come near")
	}
	r := testRunner(t, RunnerConfig{FDReserve: int(limit)})
	dir := filepath.Join(t.TempDir(), "unit-app-0")
	if err := WriteConf(dir, Conf{ID: "app/0", Tag: "unit-app-0", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	err = r.StartUnitAgent(dir)
	if !errors.Is(err, fdlimit.ErrTooManyOpenFiles) || !strings.HasPrefix(err.Error(), "not starting the agent of unit-app-0: too many open files: ") {
		t.Fatalf("StartUnitAgent near the limit: %v", err)
	}
	if r.running(dir) {
		t.Error("the agent started anyway")
	}
	if err := r.StartMachineAgent(dir); !errors.Is(err, fdlimit.ErrTooManyOpenFiles) {
		t.Errorf("StartMachineAgent near the limit: %v", err)
	}
}

// The shared writer keeps at most its bound of files open whatever the number of logs, appends
// each file's lines in order, and closes a forgotten file.
func TestLogFilesBoundedAndOrdered(t *testing.T) {
	w := newLogFiles(4)
	dir := t.TempDir()
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("unit-%d.log", i)) }
	before, err := fdlimit.InUse()
	if err != nil {
		t.Fatal(err)
	}
	for line := range 3 {
		for i := range 50 {
			w.write(path(i), fmt.Appendf(nil, "line %d\n", line))
		}
	}
	after, err := fdlimit.InUse()
	if err != nil {
		t.Fatal(err)
	}
	if w.openCount() != 4 || after-before != 4 {
		t.Errorf("%d files open, %d more descriptors, for 50 logs; want 4", w.openCount(), after-before)
	}
	for i := range 50 {
		b, err := os.ReadFile(path(i))
		if err != nil || string(b) != "line 0\nline 1\nline 2\n" {
			t.Fatalf("%s: %q %v", path(i), b, err)
		}
	}
	for i := range 50 {
		w.forget(path(i))
	}
	if w.openCount() != 0 {
		t.Errorf("%d files open after every log was forgotten", w.openCount())
	}
	if err := w.touch(filepath.Join(dir, "missing", "x.log")); err == nil {
		t.Error("a log in a missing directory opened")
	}
}

// An agent log without a controller to ship to runs no shipper; one stopped flushes and lets
// its file go.
func TestAgentLogHoldsNothingWhileIdle(t *testing.T) {
	dir := t.TempDir()
	l, err := openAgentLog(filepath.Join(dir, machineLogFile), "machine-0", "uuid", nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := l.shipUntilStopped(context.Background())
	l.write("INFO", deployerLogger, "one")
	l.mu.Lock()
	shipping := l.shipping
	l.mu.Unlock()
	if shipping {
		t.Error("a shipper runs with nothing to ship to")
	}
	stop()
	sharedLogs.mu.Lock()
	_, open := sharedLogs.open[l.path]
	sharedLogs.mu.Unlock()
	if open {
		t.Error("the log file is still open after stop")
	}
}
