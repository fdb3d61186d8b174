// Package e2e drives the real binaries as a user would: bootstrap a controller in a temporary
// $JUJU_DATA, deploy, wait for idle units through `status --format json`, break things, kill it.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type env struct {
	t    *testing.T
	bin  string
	root string
	data string
}

// built is the bin directory the binaries were compiled into, once for the whole package (a
// jujud link alone costs seconds of CPU); TestMain removes it.
var built struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// longJourney runs a journey that takes half a minute or more beside the other long ones, two
// at a time (go test's -parallel, GOMAXPROCS), once the short ones are done. Each has a
// controller of its own (its own $JUJU_DATA, free ports, processes only it signals), and much
// of their time is waiting on hooks, elections and restarts: one after another the package took
// 9 minutes, the longest part of make test.
func longJourney(t *testing.T) { t.Parallel() }

// build compiles the binaries (once per package run) and gives the test a fresh client store.
func build(t *testing.T) *env {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "e2e-bin-"); built.err != nil {
			return
		}
		// The commit for `juju version --all`, as the Makefile sets it.
		ldflags := ""
		if commit, err := exec.Command("git", "-c", "safe.directory=*", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
			ldflags = "-X github.com/jujuclone/juju/core/version.Commit=" + strings.TrimSpace(string(commit))
		}
		for _, cmd := range []string{"juju", "jujud", "jujuc"} {
			build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", ldflags, "-o", filepath.Join(built.dir, cmd), "./cmd/"+cmd)
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				built.err = fmt.Errorf("building %s: %v\n%s", cmd, err, out)
				return
			}
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return &env{t: t, bin: built.dir, root: root, data: t.TempDir()}
}

type result struct {
	stdout, stderr string
	code           int
}

// juju runs the CLI with a deadline, from the project root, with the sample charms as its
// repository.
func (e *env) juju(args ...string) result {
	e.t.Helper()
	return e.jujuRepo(filepath.Join(e.root, "testdata", "charms"), args...)
}

// jujuRepo runs the CLI as juju does, with $JUJU_REPOSITORY set to repo.
func (e *env) jujuRepo(repo string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.bin, "juju"), args...)
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), "JUJU_DATA="+e.data, "JUJU_REPOSITORY="+repo, "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		e.t.Fatalf("juju %s: hung", strings.Join(args, " "))
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

func (e *env) ok(args ...string) result {
	e.t.Helper()
	r := e.juju(args...)
	if r.code != 0 {
		e.t.Fatalf("juju %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// fails checks the exit code and that stderr is one ERROR line containing want.
func (e *env) fails(code int, want string, args ...string) {
	e.t.Helper()
	r := e.juju(args...)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != code || !strings.HasPrefix(lines[0], "ERROR ") || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "goroutine") {
		e.t.Errorf("juju %s: exit %d, stderr %q; want exit %d and an ERROR containing %q", strings.Join(args, " "), r.code, r.stderr, code, want)
	}
}

type statusJSON struct {
	Machines map[string]struct {
		JujuStatus  struct{ Current, Message string } `json:"juju-status"`
		InstanceID  string                            `json:"instance-id"`
		Constraints string                            `json:"constraints"`
		Base        struct{ Name, Channel string }    `json:"base"`
	} `json:"machines"`
	Applications map[string]struct {
		Units map[string]struct {
			JujuStatus     struct{ Current string } `json:"juju-status"`
			WorkloadStatus struct{ Current string } `json:"workload-status"`
			Machine        string                   `json:"machine"`
		} `json:"units"`
	} `json:"applications"`
}

func (e *env) status() statusJSON {
	e.t.Helper()
	r := e.ok("status", "--format", "json")
	var s statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
	return s
}

func TestOperatorJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	r := e.ok("bootstrap")
	if !strings.Contains(r.stderr, `controller "local"`) {
		t.Errorf("bootstrap said %q", r.stderr)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			e.juju("kill-controller", "local", "--no-prompt")
		}
	})
	e.fails(1, `controller "local" already exists`, "bootstrap")

	e.ok("deploy", "./testdata/charms/wordpress", "-n", "2", "--constraints", "mem=2G")
	r = e.ok("deploy", "mysql")
	if !strings.Contains(r.stderr, `Located local charm "mysql", revision 0`) {
		t.Errorf("deploy mysql said %q", r.stderr)
	}
	// --wait returns once the new unit's agent is idle, saying so on stderr.
	if r = e.ok("add-unit", "mysql", "--wait", "--timeout", "30s"); !strings.HasSuffix(r.stderr, "1 unit of mysql idle\n") || r.stdout != "" {
		t.Errorf("add-unit --wait printed %q, %q", r.stdout, r.stderr)
	}
	e.ok("add-machine", "--base", "ubuntu@22.04", "--constraints", "cores=1")
	e.ok("deploy", "./testdata/charms/logging")

	// Bad input: one ERROR line, the right code, nothing changed.
	e.fails(1, "application already exists", "deploy", "mysql")
	e.fails(2, `invalid application name "Bad"`, "add-unit", "Bad")
	e.fails(2, `bad "mem" constraint`, "deploy", "./testdata/charms/haproxy", "--constraints", "mem=lots")
	e.fails(2, "--series and --base cannot be specified together", "deploy", "haproxy", "--series", "jammy", "--base", "ubuntu@22.04")
	e.fails(1, `no charm was found at "./nope"`, "deploy", "./nope")
	e.fails(2, "expected base string to contain os and channel separated by '@'", "add-machine", "--base", "ubuntu")
	e.fails(2, "cannot use --num-units or --to with subordinate application", "deploy", "./testdata/charms/logging", "other", "-n", "2")
	e.fails(2, "option provided but not defined: --bogus", "status", "--bogus")

	var s statusJSON
	p := e.progress("")
	for {
		s = e.status()
		idle := len(s.Machines) == 5
		for _, app := range s.Applications {
			for _, u := range app.Units {
				idle = idle && u.JujuStatus.Current == "idle"
			}
		}
		for _, m := range s.Machines {
			idle = idle && m.JujuStatus.Current == "started"
		}
		if idle {
			break
		}
		if why := p.stuck(); why != "" {
			t.Fatalf("units not idle: %s: %+v", why, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(s.Applications) != 3 || len(s.Applications["wordpress"].Units) != 2 || len(s.Applications["mysql"].Units) != 2 {
		t.Fatalf("applications: %+v", s.Applications)
	}
	if _, ok := s.Applications["haproxy"]; ok {
		t.Fatal("a refused deploy left an application")
	}
	wpMachine := s.Applications["wordpress"].Units["wordpress/0"].Machine
	if got := s.Machines[wpMachine].Constraints; got != "mem=2048M" {
		t.Errorf("wordpress machine constraints = %q", got)
	}

	tab := e.ok("status").stdout
	for _, want := range []string{"Model", "App", "Unit", "Machine", "wordpress/0", "idle", "started", "ubuntu@22.04"} {
		if !strings.Contains(tab, want) {
			t.Errorf("tabular status lacks %q:\n%s", want, tab)
		}
	}
	y := e.ok("status", "--format", "yaml").stdout
	if !strings.Contains(y, "applications:") || !strings.Contains(y, "juju-status:") {
		t.Errorf("yaml status:\n%s", y)
	}

	lifecycleJourney(t, e, s)

	// A controller that is down: a clear error, fast, no hang.
	info, err := os.ReadFile(filepath.Join(e.data, "controllers", "local", "jujud.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(info)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	e.fails(1, "cannot connect to controller", "status")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("down controller took %v to report", d)
	}

	e.ok("kill-controller", "local", "--no-prompt")
	killed = true
	if _, err := os.Stat(filepath.Join(e.data, "controllers", "local")); !os.IsNotExist(err) {
		t.Errorf("controller data dir left behind: %v", err)
	}
	e.fails(1, "No controllers registered", "status")
}

// lifecycleJourney relates and removes as an operator would (rules L-D5, L-D7, L-A1, L-M1),
// waiting with wait-for, which follows the controller's watch.
func lifecycleJourney(t *testing.T, e *env, s statusJSON) {
	if r := e.ok("integrate", "wordpress", "mysql"); r.stdout != "" || r.stderr != "" {
		t.Errorf("integrate printed %q %q", r.stdout, r.stderr)
	}
	r := e.juju("integrate", "mysql", "wordpress")
	if r.code != 1 || !strings.Contains(r.stderr, "ERROR cannot add relation \"wordpress:db mysql:db\"\nrelation wordpress:db mysql:db already exists\n\nUse 'juju status --relations'") {
		t.Errorf("duplicate integrate: %d %q", r.code, r.stderr)
	}
	e.ok("relate", "logging", "wordpress")
	e.ok("wait-for", "unit", "logging/1", "--query", `agent-status=="idle"`, "--timeout", "30s")
	tab := e.ok("status", "--relations").stdout
	for _, want := range []string{"Integration provider", "mysql:db", "wordpress:db", "regular", "wordpress:juju-info", "logging:juju-info", "subordinate", "wordpress:cluster", "peer"} {
		if !strings.Contains(tab, want) {
			t.Errorf("status --relations lacks %q:\n%s", want, tab)
		}
	}

	// Bad input: one line, the right code, nothing changed.
	e.fails(1, `unit "logging/0" is a subordinate, to remove use remove-relation`, "remove-unit", "logging/0", "--no-prompt")
	e.fails(2, `invalid unit name "mysql"`, "remove-unit", "mysql")
	e.fails(2, "--no-wait without --force not valid", "remove-machine", "1", "--no-wait")
	e.fails(2, "an integration must involve two applications", "integrate", "wordpress")
	e.fails(2, `endpoint "wordpress:" not valid`, "integrate", "wordpress:", "mysql")
	e.fails(1, "with itself", "integrate", "wordpress", "wordpress")
	e.fails(1, `application "nope" not found`, "integrate", "wordpress", "nope")
	e.fails(1, "relation 99 not found", "remove-relation", "99")
	e.fails(2, `relation ID "x" not valid`, "remove-relation", "x")
	e.fails(1, "removing application nope failed", "remove-application", "nope", "--no-prompt")
	wpMachine := s.Applications["wordpress"].Units["wordpress/0"].Machine
	e.fails(1, "removing machine failed: machine "+wpMachine+` has unit "wordpress/0" assigned`, "remove-machine", wpMachine, "--no-prompt")
	e.fails(1, "timed out waiting for", "wait-for", "unit", "mysql/0", "--query", `workload-status=="blocked"`, "--timeout", "300ms")

	// A dry run says what would go and changes nothing.
	r = e.ok("remove-application", "wordpress", "--dry-run")
	if r.stdout != "will remove application wordpress\n- will remove unit wordpress/0\n- will remove unit wordpress/1\n" {
		t.Errorf("dry run: %q", r.stdout)
	}
	if _, ok := e.status().Applications["wordpress"]; !ok {
		t.Fatal("dry run removed wordpress")
	}

	// Without a terminal nothing is asked: the removal fails before anything is sent, saying
	// to pass --no-prompt.
	e.fails(1, "application removal: cannot ask for confirmation: stdin is not a terminal; pass --no-prompt", "remove-application", "wordpress")
	// With it, the application goes dying, its units leave the relations, their subordinates
	// go, and the last one out takes the application; --wait returns once it is gone.
	r = e.ok("remove-application", "wordpress", "--no-prompt", "--wait", "--timeout", "30s")
	if !strings.HasPrefix(r.stdout, "will remove application wordpress\n") || !strings.HasSuffix(r.stderr, "application wordpress removed\n") {
		t.Errorf("remove-application printed %q, %q", r.stdout, r.stderr)
	}
	r = e.ok("wait-for", "application", "wordpress", "--query", `life=="dead"`, "--timeout", "30s")
	if !strings.Contains(r.stderr, "gone") {
		t.Errorf("wait-for said %q", r.stderr)
	}
	after := e.status()
	if _, ok := after.Applications["wordpress"]; ok || len(after.Applications["logging"].Units) != 0 || len(after.Applications["mysql"].Units) != 2 {
		t.Errorf("after remove-application: %+v", after.Applications)
	}
	// The machines it leaves empty can go (L-M1 → L-M2 → L-M3).
	e.ok("remove-machine", wpMachine, "--no-prompt")
	e.ok("wait-for", "machine", wpMachine, "--query", `life=="dead"`, "--timeout", "30s")
	if _, ok := e.status().Machines[wpMachine]; ok {
		t.Errorf("machine %s still in status", wpMachine)
	}
}
