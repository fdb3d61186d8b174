package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// charmRuns is how many times the charm figure is measured (a fresh model each time).
const charmRuns = 3

// measureCharms: mysql + wordpress -n 100 integrated, from the first deploy until every unit's
// workload is active (wordpress only gets there with mysql's data), on the running controller;
// and hooks run per second over that time, counted from the model log.
func measureCharms() error {
	var took []time.Duration
	var rates []float64
	for i := 0; i < charmRuns; i++ {
		model := fmt.Sprintf("charms%d", i)
		if _, err := juju("add-model", model); err != nil {
			return err
		}
		start := time.Now()
		for _, args := range [][]string{
			{"deploy", "./testdata/charms/mysql"},
			{"deploy", "./testdata/charms/wordpress", "-n", "100"},
			{"integrate", "wordpress", "mysql"},
		} {
			if _, err := juju(append(args, "-m", model)...); err != nil {
				return err
			}
		}
		if err := waitActive(model, 101, 120*time.Second); err != nil {
			return err
		}
		d := time.Since(start)
		took = append(took, d)
		hooks, err := countHooks(model)
		if err != nil {
			return err
		}
		rates = append(rates, float64(hooks)/d.Seconds())
		notes = append(notes, fmt.Sprintf("Charms run %d: all 101 units active after %s; %d hooks ran (%.0f/s).", i+1, fmtDur(d), hooks, rates[i]))
	}
	d := mid(took)
	rows = append(rows,
		row{what: fmt.Sprintf("mysql + wordpress -n 100 integrated, deploy until all active (%d runs)", charmRuns), budget: "≤ 10 s", median: d},
		row{what: "hooks run per second during it (processes, not counting hooks a charm lacks)", value: fmt.Sprintf("%.0f/s", midFloat(rates))})
	notes = append(notes, "Charms: the sample charms run their real hooks (POSIX sh calling the hook tools, each tool a jujuc process "+
		"talking to its unit agent over a local socket). mysql runs db-relation-joined once per wordpress unit, one at a time; every wordpress "+
		"unit runs install, leader-elected (one of them), config-changed, start, db-relation-joined and db-relation-changed. Hooks are counted "+
		"from the model log (`running \"<hook>\" hook` records). A run makes about 2,400 tool calls, so what one costs to start matters: "+
		"see the next row.")
	return measureToolStart()
}

// measureToolStart: how long one hook tool process takes, as jujuc (what the tools link to) and as
// jujud (which answers to the same names), failing fast for want of a hook's socket, so that
// only process start and the tool's own work are timed.
func measureToolStart() error {
	const calls = 101
	dir, err := os.MkdirTemp("", "bench-tools-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	startOf := func(binary string) (time.Duration, error) {
		link := filepath.Join(dir, filepath.Base(binary), "is-leader")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return 0, err
		}
		if err := os.Symlink(filepath.Join(bin, binary), link); err != nil {
			return 0, err
		}
		var ds []time.Duration
		for i := 0; i < calls; i++ {
			start := time.Now()
			// Exit 1 with "JUJU_AGENT_SOCKET is not set" is the expected end.
			out, err := exec.Command(link).CombinedOutput()
			ds = append(ds, time.Since(start))
			if err == nil || !strings.Contains(string(out), "JUJU_AGENT_SOCKET") {
				return 0, fmt.Errorf("%s as is-leader: %v: %s", binary, err, out)
			}
		}
		return mid(ds), nil
	}
	jujuc, err := startOf("jujuc")
	if err != nil {
		return err
	}
	jujud, err := startOf("jujud")
	if err != nil {
		return err
	}
	rows = append(rows, row{what: "one hook tool call, start to exit, as jujuc (baseline: as jujud, same run)", median: jujuc,
		ratio: fmt.Sprintf("%.2f× (jujud %s)", float64(jujuc)/float64(jujud), fmtDur(jujud))})
	return nil
}

// measureCharmsAlone runs the charm figure on a controller of its own (make bench -only charms).
func measureCharmsAlone() error {
	if _, err := juju("bootstrap"); err != nil {
		return err
	}
	defer killController()
	return measureCharms()
}

// waitActive waits until want units have an active workload.
func waitActive(model string, want int, limit time.Duration) error {
	return waitUnits(model, want, limit, "active", func(u unitJSON) string { return u.WorkloadStatus.Current })
}

// countHooks counts the hook processes the model's units ran, from its log.
func countHooks(model string) (int, error) {
	out, err := juju("debug-log", "-m", model, "--replay", "--no-tail", "--include-module", "juju.worker.uniter")
	if err != nil {
		return 0, err
	}
	return bytes.Count(out, []byte(`INFO juju.worker.uniter running "`)), nil
}

func midFloat(vs []float64) float64 {
	ds := make([]time.Duration, len(vs))
	for i, v := range vs {
		ds[i] = time.Duration(v * 1000)
	}
	return float64(mid(ds)) / 1000
}

// hooklessCharm copies a sample charm without its hooks into dir and returns its path: the
// figures about the controller's own machinery (deploy, status, removal at 1,000 units) are
// measured without charm code, as they were before charms ran hooks.
func hooklessCharm(name string) (string, error) {
	src := filepath.Join(root, "testdata", "charms", name)
	dst := filepath.Join(data, "hookless", name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{"metadata.yaml", "manifest.yaml", "config.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

func mustHookless(name string) string {
	p, err := hooklessCharm(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ERROR", err)
		os.Exit(1)
	}
	if !strings.HasPrefix(p, "/") {
		p = "./" + p
	}
	return p
}
