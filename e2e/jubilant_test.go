package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jubilantDeadline bounds the whole Python suite, a backstop (it takes a minute or two): its
// waits fail on their own once the model stops making progress, and each of its tests has a
// limit of its own (run.py). Near the test binary's own deadline, the suite is stopped a
// minute before it, so that the report names the test that was running.
const jubilantDeadline = 10 * time.Minute

// jubilantOutcome is one test of the suite, from run.py's JUBILANT-SUMMARY line.
type jubilantOutcome struct {
	Name    string  `json:"name"`
	Outcome string  `json:"outcome"` // PASS, FAIL, ERROR or SKIP
	Seconds float64 `json:"seconds"`
	Reason  string  `json:"reason"`
}

// TestJubilant drives our binaries through the real jubilant (Canonical's Python wrapper of the
// juju CLI that charm CI pipelines use), unmodified, from the third-party folder: the suite in
// e2e/jubilant/ deploys jubilant's own test charms and this project's, and calls every jubilant
// method the CLI contract covers. Set JUBILANT_TESTS to a space-separated list of name patterns
// to run only some of its tests.
func TestJubilant(t *testing.T) {
	longJourney(t)
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	thirdparty := os.Getenv("JUJU_THIRDPARTY")
	if thirdparty == "" {
		thirdparty = filepath.Join(root, "..", "shared", "thirdparty")
	}
	jubilantDir := filepath.Join(thirdparty, "jubilant-1.12.0")
	if _, err := os.Stat(filepath.Join(jubilantDir, "jubilant", "__init__.py")); err != nil {
		reason := "cannot run the jubilant suite: jubilant 1.12.0 not found at " + jubilantDir + " (set JUJU_THIRDPARTY)"
		if os.Getenv("CI") == "true" {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	// The charms, the binaries and a controller, as the ops charm tests have them (they skip
	// or fail, saying what is missing, in the same way).
	e, charms := opsCharms(t)

	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), jubilantDeadline)
	defer cancel()
	if d, ok := t.Deadline(); ok && time.Until(d) < jubilantDeadline+time.Minute {
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Minute))
		defer cancel()
	}

	args := append([]string{"-u", "run.py"}, strings.Fields(os.Getenv("JUBILANT_TESTS"))...)
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", args...)
	cmd.Dir = filepath.Join(root, "e2e", "jubilant")
	cmd.Env = append(withoutJujuEnv(os.Environ()),
		"JUJU_DATA="+e.data,
		"PATH="+e.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PYTHONPATH="+jubilantDir,
		"PYTHONDONTWRITEBYTECODE=1", // nothing written into the source tree or the third-party folder
		"TMPDIR="+t.TempDir(),
		"NO_COLOR=1",
		"JUBILANT_E2E_CHARMS="+filepath.Dir(charms["testdb"]),
		"JUBILANT_E2E_ROOT="+root,
	)
	// One process group, killed as a whole at the deadline: python and the juju it runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second

	// stdout and stderr share one pipe, so jubilant's log lines and the results stay in order.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		t.Fatal(err)
	}
	w.Close()

	var outcomes []jubilantOutcome
	var running string
	var tail []string
	scan := bufio.NewScanner(r)
	scan.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for scan.Scan() {
		line := scan.Text()
		if js, ok := strings.CutPrefix(line, "JUBILANT-SUMMARY "); ok {
			var summary struct {
				Tests []jubilantOutcome `json:"tests"`
			}
			if err := json.Unmarshal([]byte(js), &summary); err != nil {
				t.Errorf("bad summary line from run.py: %v\n%s", err, line)
			}
			outcomes = summary.Tests
			continue
		}
		t.Log(line)
		if name, ok := strings.CutPrefix(line, "=== RUN   "); ok {
			running = name
		} else if strings.HasPrefix(line, "--- ") {
			running = ""
		}
		if tail = append(tail, line); len(tail) > 20 {
			tail = tail[1:]
		}
	}
	r.Close()
	waitErr := cmd.Wait()

	if ctx.Err() != nil {
		where := "between tests"
		if running != "" {
			where = "in " + running
		}
		t.Fatalf("the jubilant suite did not finish in time: killed after %v, %s", time.Since(started).Round(time.Second), where)
	}
	if outcomes == nil {
		t.Fatalf("the jubilant suite ended without its summary (%v); its last lines:\n%s", waitErr, strings.Join(tail, "\n"))
	}
	// A failure in a class or module fixture (setUpClass ...) is an outcome of its own.
	var failed []string
	count := map[string]int{}
	for _, o := range outcomes {
		count[o.Outcome]++
		switch o.Outcome {
		case "FAIL", "ERROR":
			failed = append(failed, o.Name)
			t.Errorf("%s %s: %s", o.Name, o.Outcome, o.Reason)
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed, %d skipped", count["PASS"], len(failed), count["SKIP"])
	switch {
	case len(failed) > 0:
		t.Errorf("jubilant suite: %s; failed: %s (tracebacks above)", summary, strings.Join(failed, ", "))
	case waitErr != nil:
		var exit *exec.ExitError
		if !errors.As(waitErr, &exit) {
			t.Fatal(waitErr)
		}
		t.Errorf("jubilant suite: %s, yet it exited %d; its last lines:\n%s", summary, exit.ExitCode(), strings.Join(tail, "\n"))
	default:
		t.Log("jubilant suite: " + summary)
	}
}

// withoutJujuEnv drops the variables that would point jubilant's juju at another controller or
// model than the test's.
func withoutJujuEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "JUJU_DATA", "JUJU_CONTROLLER", "JUJU_MODEL", "JUJU_REPOSITORY", "PYTHONPATH":
			continue
		}
		out = append(out, kv)
	}
	return out
}
