package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRefreshJourney: juju refresh --path through the real binaries. Refusals change nothing;
// a new revision of mysql whose upgrade-charm hook says so reaches every unit, which runs
// upgrade-charm then config-changed, keeps what the charm wrote while running, and status
// shows the new revision.
func TestRefreshJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })

	// A copy of the sample mysql charm: v1 as it is, v2 with an upgrade-charm hook.
	v1 := filepath.Join(t.TempDir(), "mysql")
	v2 := filepath.Join(t.TempDir(), "mysql")
	for _, dst := range []string{v1, v2} {
		if out, err := exec.Command("cp", "-r", filepath.Join(e.root, "testdata", "charms", "mysql"), dst).CombinedOutput(); err != nil {
			t.Fatalf("copying the charm: %v\n%s", err, out)
		}
	}
	hook := "#!/bin/sh\nset -e\n. \"${0%/*}/../lib/common.sh\"\nstatus-set active \"upgraded to v2\"\n"
	if err := os.WriteFile(filepath.Join(v2, "hooks", "upgrade-charm"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}

	e.ok("deploy", v1, "-n", "2")
	e.waitUntil("mysql ready", func(s unitsJSON) bool {
		return workloadIs("mysql/0", "active", "ready")(s) && workloadIs("mysql/1", "active", "ready")(s)
	})
	before := e.charmRev("mysql")

	// Refusals: exit 2 without --path, 1 for the rest; nothing uploaded or changed.
	e.fails(2, "only local charms can be used", "refresh", "mysql")
	e.fails(1, `application "nope" not found`, "refresh", "nope", "--path", v2)
	e.fails(1, `cannot refresh "mysql" to "wordpress"`, "refresh", "mysql", "--path", filepath.Join(e.root, "testdata", "charms", "wordpress"))
	if after := e.charmRev("mysql"); after != before {
		t.Fatalf("a refused refresh changed the charm: revision %d -> %d", before, after)
	}

	r := e.ok("refresh", "mysql", "--path", v2)
	m := regexp.MustCompile(`^Added local charm "mysql", revision (\d+), to the model\n$`).FindStringSubmatch(r.stderr)
	if r.stdout != "" || m == nil {
		t.Fatalf("refresh: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	e.waitUntil("every unit upgraded", func(s unitsJSON) bool {
		return workloadIs("mysql/0", "active", "upgraded to v2")(s) && workloadIs("mysql/1", "active", "upgraded to v2")(s)
	})
	if got := e.charmRev("mysql"); got <= before || m[1] != strings.TrimSpace(jsonInt(got)) {
		t.Errorf("status charm-rev %d, want %s (was %d)", got, m[1], before)
	}
	for _, u := range []string{"mysql/0", "mysql/1"} {
		// hooks.log is written by every hook into the charm directory: it survives the swap.
		e.waitHooks(u, "install", "start", "upgrade-charm", "config-changed")
		logs, _ := filepath.Glob(filepath.Join(e.data, "controllers", "local", "instances", "*", "units", "unit-mysql-"+u[len(u)-1:], "charm", "hooks.log"))
		if len(logs) != 1 {
			t.Errorf("%s: hooks.log %v", u, logs)
			continue
		}
		data, _ := os.ReadFile(logs[0])
		if !strings.Contains(string(data), "install -") || !strings.Contains(string(data), "upgrade-charm -") {
			t.Errorf("%s's hooks.log lost what the old charm wrote:\n%s", u, data)
		}
	}
	log := e.ok("debug-log", "--replay", "--no-tail").stdout
	if !strings.Contains(log, `running "upgrade-charm" hook`) {
		t.Errorf("debug-log lacks the upgrade-charm hook:\n%s", log)
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// charmRev is the application's charm-rev in status --format json.
func (e *env) charmRev(app string) int {
	e.t.Helper()
	var s struct {
		Applications map[string]struct {
			CharmRev int `json:"charm-rev"`
		} `json:"applications"`
	}
	if err := json.Unmarshal([]byte(e.ok("status", "--format", "json").stdout), &s); err != nil {
		e.t.Fatal(err)
	}
	return s.Applications[app].CharmRev
}
