// Command bench measures the figures of BENCHMARKS.md with the real binaries: medians of repeated
// runs, each next to a baseline measured in the same run (the cost of starting any process).
// Run it with `make bench` (it expects bin/juju and bin/jujud).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type row struct {
	what, budget string
	median       time.Duration
	value        string // for non-duration rows
	ratio        string
}

var (
	root, bin, data string
	rows            []row
	notes           []string // paragraphs after the table: how a figure was measured, what went wrong
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ERROR", err)
		os.Exit(1)
	}
}

// stopOnSignal makes Ctrl-C (or kill) take the controller down with the bench: the figures
// are lost anyway, and a controller left behind would eat the next run's CPU.
func stopOnSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "bench: %v: stopping the controller\n", sig)
		cleanUp()
		os.Exit(130)
	}()
}

// cleanUp stops what a run that failed half-way left running, or it would eat the next run's
// CPU (and its data directory goes below it). Its agent host too, even when jujud is down (a
// restart figure failed half-way).
func cleanUp() {
	for _, f := range []string{"jujud.pid", "agents.pid"} {
		if _, err := os.Stat(filepath.Join(ctrlDir(), f)); err == nil {
			killControllerAndHost()
			break
		}
	}
	os.RemoveAll(data)
}

func run() error {
	var err error
	if root, err = os.Getwd(); err != nil {
		return err
	}
	only := flag.String("only", "", "measure one figure only, print it and leave BENCHMARKS.md alone: txn, removal, charms, ops, actions, restart, bundle or ha")
	flag.StringVar(&bin, "bin", filepath.Join(root, "bin"), "directory of juju and jujud")
	flag.IntVar(&restartUnits, "n", restartUnits, "units of the restart and memory figures")
	scale := flag.Int("scale", 0, "measure the scale figures at this many units instead (make bench-scale), into their own section of BENCHMARKS.md")
	scaleBatch := flag.Int("scale-batch", 10_000, "units per add-unit call of the scale figures")
	scaleFor := flag.Duration("scale-for", 0, "stop growing the scale model after this long (0: until -scale units), then measure what it has")
	flag.Parse()
	data, err = os.MkdirTemp("", "juju-bench-")
	if err != nil {
		return err
	}
	defer cleanUp()
	stopOnSignal()

	if *scale > 0 {
		if err := measureScale(*scale, *scaleBatch, *scaleFor); err != nil {
			return err
		}
		return writeScale(*scale)
	}
	switch *only {
	case "":
	case "txn", "removal", "charms", "ops", "actions", "restart", "bundle", "ha":
		measure := map[string]func() error{"txn": measureTxn, "removal": measureRemoval, "charms": measureCharmsAlone, "ops": measureOpsAlone, "actions": measureActionsAlone, "restart": measureRestart, "bundle": measureBundleAlone, "ha": measureHA}[*only]
		if err := measure(); err != nil {
			return err
		}
		for _, r := range rows {
			v := r.value
			if v == "" {
				v = fmtDur(r.median)
			}
			fmt.Printf("| %s | %s | %s | %s |\n", r.what, v, r.budget, r.ratio)
		}
		for _, n := range notes {
			fmt.Println("\n" + n)
		}
		return nil
	default:
		return fmt.Errorf("-only %q: want txn, removal, charms, ops, actions, restart, bundle or ha", *only)
	}

	floor := median(50, func() error { return exec.Command("/bin/true").Run() })
	rows = append(rows, row{what: "baseline: exec /bin/true", median: floor})
	version := median(50, func() error { _, err := juju("version"); return err })
	rows = append(rows, row{what: "juju version (cold start)", budget: "≤ 5 ms", median: version, ratio: ratio(version, floor)})

	// In-process etcd and controller/state only: measured before any controller runs.
	var txnRows []row
	saved := rows
	rows = nil
	if err := measureTxn(); err != nil {
		return err
	}
	txnRows, rows = rows, saved

	rows = append(rows, statusRenderRow()) // in-process, before any controller runs
	if _, err := juju("bootstrap"); err != nil {
		return err
	}
	defer juju("kill-controller", "local", "--no-prompt")
	if _, err := juju("add-model", "empty"); err != nil {
		return err
	}
	empty := median(30, func() error { _, err := juju("status", "--format", "json", "-m", "empty"); return err })
	rows = append(rows, row{what: "juju status --format json, empty model", budget: "≤ 15 ms", median: empty, ratio: ratio(empty, version)})

	var deploys []time.Duration
	for i := 0; i < 3; i++ {
		model := fmt.Sprintf("deploy%d", i)
		if _, err := juju("add-model", model); err != nil {
			return err
		}
		start := time.Now()
		if _, err := juju("deploy", mustHookless("wordpress"), "-n", "100", "-m", model); err != nil {
			return err
		}
		if err := waitIdle(model, 100, 120*time.Second); err != nil {
			return err
		}
		deploys = append(deploys, time.Since(start))
	}
	d := mid(deploys)
	rows = append(rows, row{what: "deploy -n 100 until all units idle, charm without hooks (3 runs)", budget: "≤ 3 s", median: d})

	if err := measureCharms(); err != nil {
		return err
	}
	if err := measureOps(); err != nil {
		return err
	}
	if err := measureActions(version); err != nil {
		return err
	}
	if err := measureBundle(); err != nil {
		return err
	}

	if _, err := juju("add-model", "big"); err != nil {
		return err
	}
	if _, err := juju("deploy", mustHookless("wordpress"), "-n", "1000", "-m", "big"); err != nil {
		return err
	}
	if err := waitIdle("big", 1000, 600*time.Second); err != nil {
		return err
	}
	sj := median(20, func() error { _, err := juju("status", "--format", "json", "-m", "big"); return err })
	st := median(20, func() error { _, err := juju("status", "-m", "big"); return err })
	rows = append(rows,
		row{what: "juju status --format json, 1,000 units", budget: "≤ 60 ms", median: sj, ratio: ratio(sj, version)},
		row{what: "juju status (tabular), 1,000 units", budget: "≤ 60 ms", median: st, ratio: ratio(st, version)},
		row{what: "controller (jujud) RSS, 1,000 units (+1,000 machines) beside the models above, agents apart", value: rss()})
	if err := measureCompletionLive(version); err != nil {
		return err
	}
	killController()
	if err := measureCompletionDead(); err != nil {
		return err
	}

	// Each removal run bootstraps its own controller.
	if err := measureRemoval(); err != nil {
		return err
	}
	// So do the restart and memory figures (agents apart, agents in jujud, one machine).
	if err := measureRestart(); err != nil {
		return err
	}
	// And the HA takeover (a 3-member controller), then the HA throughput (etcd in-process).
	if err := measureHA(); err != nil {
		return err
	}
	rows = append(rows, txnRows...)
	return report()
}

func juju(args ...string) ([]byte, error) {
	out, _, err := jujuOutErr(args...)
	return out, err
}

// jujuOutErr runs the CLI against the bench's controller and returns stdout and stderr.
func jujuOutErr(args ...string) ([]byte, []byte, error) { return jujuEnvOutErr(nil, args...) }

// jujuEnvOutErr is jujuOutErr with env added to the CLI's environment (bootstrap passes it on
// to jujud).
func jujuEnvOutErr(env []string, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command(filepath.Join(bin, "juju"), args...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "JUJU_DATA="+data, "NO_COLOR=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("juju %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), errb.Bytes(), nil
}

func waitIdle(model string, want int, limit time.Duration) error {
	return waitUnits(model, want, limit, "idle", func(u unitJSON) string { return u.JujuStatus.Current })
}

// unitJSON is what the waits read of a unit in `status --format json`.
type unitJSON struct {
	JujuStatus     struct{ Current string } `json:"juju-status"`
	WorkloadStatus struct{ Current string } `json:"workload-status"`
}

// waitUnits polls status until want units have value in the field that field reads.
func waitUnits(model string, want int, limit time.Duration, value string, field func(unitJSON) string) error {
	deadline := time.Now().Add(limit)
	got := 0
	for time.Now().Before(deadline) {
		out, err := juju("status", "--format", "json", "-m", model)
		if err != nil {
			return err
		}
		var s struct {
			Applications map[string]struct {
				Units map[string]unitJSON `json:"units"`
			} `json:"applications"`
		}
		if err := json.Unmarshal(out, &s); err != nil {
			return err
		}
		got = 0
		for _, a := range s.Applications {
			for _, u := range a.Units {
				if field(u) == value {
					got++
				}
			}
		}
		if got == want {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("model %s: %d of %d units %s after %v", model, got, want, value, limit)
}

func median(n int, fn func() error) time.Duration {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := fn(); err != nil {
			fmt.Fprintln(os.Stderr, "ERROR", err)
			os.Exit(1)
		}
		ds = append(ds, time.Since(start))
	}
	return mid(ds)
}

func mid(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func ratio(d, base time.Duration) string {
	return fmt.Sprintf("%.1f×", float64(d)/float64(base))
}

func rss() string {
	kb, err := rssKB(readPID(filepath.Join(ctrlDir(), "jujud.pid")))
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f MB", float64(kb)/1024)
}

func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		if len(f) > 1 {
			kb, _ := strconv.Atoi(f[1])
			mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%d × %s%s, %s %s/%s", runtime.NumCPU(), cpu, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func report() error {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\nMeasured by `make bench` with the real binaries (TLS gRPC, embedded etcd with fsync).\n")
	fmt.Fprintf(&b, "Machine: %s. Date: %s.\n\n", machine(), time.Now().UTC().Format("2006-01-02"))
	b.WriteString("Ratios: CLI figures against `juju version` (the cost of starting the CLI at all) measured in the same run; `juju version` against exec of /bin/true; " +
		"the removal against its own model's `juju status --format json`; ops charms against the shell sample charms in the same shape and the big .charm's deploy against cp of the same file; a controller restart's exec against the same exec with the controller up just before, and memory against the agents-in-jujud layout; lifecycle transactions as a share of the etcd Txn floor measured in the same run; the HA takeover against add-machine with every member up, and the HA cluster's lifecycle transactions against one member's, both in the same run (see the notes below the table).\n\n")
	writeTable(&b, "median")
	fmt.Print(b.String())
	// The scale section is make bench-scale's: kept as it is.
	if old, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md")); err == nil {
		if i := strings.Index(string(old), scaleHeading); i >= 0 {
			b.WriteString("\n" + string(old[i:]))
		}
	}
	return os.WriteFile(filepath.Join(root, "BENCHMARKS.md"), []byte(b.String()), 0o644)
}

// writeTable writes the rows measured (their value column named column) and the notes.
func writeTable(b *strings.Builder, column string) {
	fmt.Fprintf(b, "| what | %s | budget | ratio |\n|---|---|---|---|\n", column)
	for _, r := range rows {
		v := r.value
		if v == "" {
			v = fmtDur(r.median)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", r.what, v, r.budget, r.ratio)
	}
	for _, n := range notes {
		b.WriteString("\n" + n + "\n")
	}
}
