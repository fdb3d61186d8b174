package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unitsJSON is the part of `status --format json` the charm journey reads.
type unitsJSON struct {
	Machines map[string]struct {
		MachineStatus struct{ Current, Message string } `json:"machine-status"`
	} `json:"machines"`
	Applications map[string]struct {
		Units map[string]unitJSON `json:"units"`
	} `json:"applications"`
}

type unitJSON struct {
	WorkloadStatus struct{ Current, Message string } `json:"workload-status"`
	JujuStatus     struct{ Current, Message string } `json:"juju-status"`
	Machine        string                            `json:"machine"`
	PublicAddress  string                            `json:"public-address"`
	Leader         bool                              `json:"leader"`
	OpenPorts      []string                          `json:"open-ports"`
	Subordinates   map[string]unitJSON               `json:"subordinates"`
	Blocked        []string                          `json:"removal-blocked-by"`
}

func (e *env) units() unitsJSON {
	e.t.Helper()
	r := e.ok("status", "--format", "json")
	var s unitsJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
	return s
}

// waitUntil polls status until ok holds (the test's own wait; the product is watch-driven), for
// as long as the model moves.
func (e *env) waitUntil(what string, ok func(unitsJSON) bool) unitsJSON {
	e.t.Helper()
	p := e.progress("")
	for {
		s := e.units()
		if ok(s) {
			return s
		}
		if why := p.stuck(); why != "" {
			e.t.Fatalf("waiting for %s: %s:\n%s", what, why, e.ok("status").stdout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s unitsJSON) unit(name string) (unitJSON, bool) {
	app, _, _ := strings.Cut(name, "/")
	for _, a := range s.Applications {
		if u, ok := a.Units[name]; ok {
			return u, true
		}
		for _, p := range a.Units {
			if u, ok := p.Subordinates[name]; ok {
				return u, true
			}
		}
	}
	_ = app
	return unitJSON{}, false
}

func workloadIs(name, current, contains string) func(unitsJSON) bool {
	return func(s unitsJSON) bool {
		u, ok := s.unit(name)
		return ok && u.WorkloadStatus.Current == current && strings.Contains(u.WorkloadStatus.Message, contains)
	}
}

// hooksRun lists, in order, the hooks a unit ran, from `juju debug-log --replay`.
func (e *env) hooksRun(unit string) []string {
	e.t.Helper()
	r := e.ok("debug-log", "--replay", "--no-tail", "--include", unit, "--include-module", "juju.worker.uniter")
	var hooks []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if _, after, ok := strings.Cut(line, ` running "`); ok {
			hooks = append(hooks, strings.TrimSuffix(after, `" hook`))
		}
	}
	return hooks
}

// waitHooks waits until the unit's log shows these hooks in this order (others may come
// between): units ship their logs in batches. It waits for as long as the model moves.
func (e *env) waitHooks(unit string, want ...string) {
	e.t.Helper()
	p := e.progress("")
	for {
		got := e.hooksRun(unit)
		if inOrder(got, want...) {
			return
		}
		if why := p.stuck(); why != "" {
			e.t.Errorf("%s hooks: %v; want in order %v (%s)", unit, got, want, why)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func inOrder(got []string, want ...string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestCharmsJourney drives charms that run, through the real binaries: relation data,
// departed then broken, subordinates, a failing hook and resolved, a provisioning error and
// resolved --constraints (issue 4's proof).
func TestCharmsJourney(t *testing.T) {
	longJourney(t)
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap", "--model-default", "automatically-retry-hooks=false") // the failed hooks below wait for resolved (L-U2)
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })

	// A malformed hook is refused at deploy time, before anything is sent.
	bad := filepath.Join(t.TempDir(), "broken")
	if err := os.MkdirAll(filepath.Join(bad, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "metadata.yaml"), []byte("name: broken\nsummary: s\ndescription: d\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "manifest.yaml"), []byte("bases:\n  - name: ubuntu\n    channel: \"22.04\"\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "hooks", "install"), []byte("#!/bin/sh\nexit 0\n"), 0o644)
	e.fails(1, `hook "install" is not executable`, "deploy", bad)

	// mysql hands wordpress its credentials; wordpress is active only with all of them.
	e.ok("deploy", "mysql")
	e.ok("deploy", "wordpress", "-n", "3")
	e.waitUntil("wordpress blocked without a database", workloadIs("wordpress/0", "blocked", "waiting for database"))
	e.ok("integrate", "wordpress", "mysql")
	s := e.waitUntil("wordpress active with mysql's data", func(s unitsJSON) bool {
		// Each machine has a loopback address of its own; wordpress is told mysql/0's.
		my, _ := s.unit("mysql/0")
		for _, u := range []string{"wordpress/0", "wordpress/1", "wordpress/2"} {
			if my.PublicAddress == "" || !workloadIs(u, "active", "serving with database "+my.PublicAddress+":3306")(s) {
				return false
			}
		}
		return workloadIs("mysql/0", "active", "")(s)
	})
	seen := map[string]string{}
	for _, name := range []string{"mysql/0", "wordpress/0", "wordpress/1", "wordpress/2"} {
		u, _ := s.unit(name)
		if !strings.HasPrefix(u.PublicAddress, "127.") || u.PublicAddress == "127.0.0.1" || seen[u.PublicAddress] != "" {
			t.Errorf("%s's address %q: want a loopback address of its machine's own (seen: %v)", name, u.PublicAddress, seen)
		}
		seen[u.PublicAddress] = name
	}
	if u, _ := s.unit("mysql/0"); len(u.OpenPorts) != 1 || u.OpenPorts[0] != "3306/tcp" || !u.Leader {
		t.Errorf("mysql/0: ports %v leader %v", u.OpenPorts, u.Leader)
	}
	// The hook tools those hooks called are links to jujuc, which starts in a fifth of jujud's time
	// (as root, to a hard link of it in the tools directory: the machine's uid cannot reach e.bin),
	// installed once for every unit of the agent host, or in the unit's own directory where the
	// machines' uids cannot reach the shared one.
	links, _ := filepath.Glob(filepath.Join(e.data, "controllers", "local", "instances", ".hook-tools", "v-*", "relation-set"))
	if len(links) == 0 {
		links, _ = filepath.Glob(filepath.Join(e.data, "controllers", "local", "instances", "*", "units", "unit-mysql-0", "tools", "relation-set"))
	}
	jujuc, _ := os.Stat(filepath.Join(e.bin, "jujuc"))
	if len(links) != 1 {
		t.Errorf("mysql/0's relation-set tool: found %v", links)
	} else if target, err := os.Readlink(links[0]); err != nil {
		t.Errorf("mysql/0's relation-set is not a link: %v", err)
	} else if fi, err := os.Stat(target); err != nil || !os.SameFile(fi, jujuc) {
		t.Errorf("mysql/0's relation-set links to %q (%v), want %s", target, err, filepath.Join(e.bin, "jujuc"))
	}
	tab := e.ok("status").stdout
	for _, want := range []string{"mysql/0*", "3306/tcp", "80/tcp", "serving with database", "8.0.36"} {
		if !strings.Contains(tab, want) {
			t.Errorf("tabular status lacks %q:\n%s", want, tab)
		}
	}
	show := e.ok("show-unit", "wordpress/0").stdout
	my, _ := s.unit("mysql/0")
	for _, want := range []string{"host: " + my.PublicAddress, "port: \"3306\"", "user:", "password:"} {
		if !strings.Contains(show, want) {
			t.Errorf("show-unit wordpress/0 lacks %q:\n%s", want, show)
		}
	}

	// Removing the relation: departed for the counterpart, then broken (seed 004, L-R3).
	e.ok("remove-relation", "wordpress", "mysql")
	e.waitUntil("wordpress blocked again", workloadIs("wordpress/2", "blocked", "waiting for database"))
	e.waitHooks("wordpress/0", "install", "config-changed", "start", "db-relation-joined", "db-relation-changed", "db-relation-departed", "db-relation-broken")
	e.waitHooks("mysql/0", "db-relation-joined", "db-relation-departed", "db-relation-broken")

	// Subordinates: one logging unit per wordpress unit, beside it, gone with the relation.
	e.ok("deploy", "logging")
	e.ok("integrate", "logging", "wordpress")
	s = e.waitUntil("three subordinates", func(s unitsJSON) bool {
		for _, p := range []string{"wordpress/0", "wordpress/1", "wordpress/2"} {
			u, _ := s.unit(p)
			if len(u.Subordinates) != 1 {
				return false
			}
			for _, sub := range u.Subordinates {
				if sub.WorkloadStatus.Current != "active" || sub.WorkloadStatus.Message != "logging "+p {
					return false
				}
			}
		}
		return true
	})
	e.ok("remove-relation", "logging", "wordpress")
	e.waitUntil("subordinates gone", func(s unitsJSON) bool {
		for _, p := range []string{"wordpress/0", "wordpress/1", "wordpress/2"} {
			if u, _ := s.unit(p); len(u.Subordinates) != 0 {
				return false
			}
		}
		return true
	})

	// A failing stop hook holds the unit dying in error, with the reason shown, until resolved.
	e.ok("config", "mysql", "fail-hook=stop")
	e.ok("remove-unit", "mysql/0", "--no-prompt")
	s = e.waitUntil("stop hook failed", workloadIs("mysql/0", "error", `hook failed: "stop"`))
	if u, _ := s.unit("mysql/0"); !strings.Contains(strings.Join(u.Blocked, " "), `hook failed: "stop"`) {
		t.Errorf("removal-blocked-by: %v", u.Blocked)
	}
	time.Sleep(500 * time.Millisecond)
	if _, ok := e.units().unit("mysql/0"); !ok {
		t.Fatal("mysql/0 went away while its hook was failing")
	}
	r := e.ok("resolved", "mysql/0", "--no-retry")
	if !strings.Contains(r.stderr, `will skip "stop" hook`) {
		t.Errorf("resolved said %q", r.stderr)
	}
	e.waitUntil("mysql/0 removed", func(s unitsJSON) bool { _, ok := s.unit("mysql/0"); return !ok })

	// An unsatisfiable constraint: a provisioning error on the machine, the unit waiting for
	// it; resolved with new constraints provisions it.
	e.ok("deploy", "haproxy", "--constraints", "mem=100000G")
	var machine string
	e.waitUntil("provisioning error", func(s unitsJSON) bool {
		u, ok := s.unit("haproxy/0")
		if !ok {
			return false
		}
		machine = u.Machine
		return s.Machines[machine].MachineStatus.Current == "provisioning error" && u.WorkloadStatus.Message == "waiting for machine"
	})
	e.ok("resolved", machine, "--constraints", "mem=1M")
	e.waitUntil("haproxy started", workloadIs("haproxy/0", "blocked", "waiting for backends"))
}
