package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
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

	refreshInError(t, e, v2)
}

// refreshInError: units in error refresh only with --force-units, as Juju's do: a plain
// refresh waits (the unit's log says so), a forced one puts the new charm in place at once and
// leaves the unit in error, and `juju resolved` runs the failed hook again from the new charm,
// with the config --config set in the same refresh: options gone are dropped, new ones take
// their defaults.
func refreshInError(t *testing.T, e *env, v2 string) {
	e.ok("config", "mysql", "fail-hook=config-changed", "hang-hook=never")
	for _, u := range []string{"mysql/0", "mysql/1"} {
		e.waitUntil(u+" in error", workloadIs(u, "error", `hook failed: "config-changed"`))
	}
	// v3: v2 with a marker. v4: v2 without hang-hook, with a new option greeting that its
	// config-changed hook shows.
	v3 := copyCharm(t, v2, map[string]string{"VERSION": "v3\n"})
	v4 := copyCharm(t, v2, map[string]string{
		"VERSION": "v4\n",
		"config.yaml": "options:\n  fail-hook:\n    type: string\n    default: \"\"\n" +
			"  greeting:\n    type: string\n    default: hello\n  motto:\n    type: string\n    default: keep calm\n",
		"hooks/config-changed": "#!/bin/sh\nset -e\n. \"${0%/*}/../lib/common.sh\"\n" +
			"status-set active \"$(config-get greeting), $(config-get motto)\"\n",
	})
	unitCharm := func(unit string) string {
		var show map[string]struct{ Charm string }
		if err := json.Unmarshal([]byte(e.ok("show-unit", unit, "--format", "json").stdout), &show); err != nil {
			t.Fatal(err)
		}
		return show[unit].Charm
	}
	charmFile := func(unit, name string) string {
		paths, _ := filepath.Glob(filepath.Join(e.data, "controllers", "local", "instances", "*", "units", "unit-mysql-"+unit[len(unit)-1:], "charm", name))
		if len(paths) != 1 {
			return ""
		}
		data, _ := os.ReadFile(paths[0])
		return string(data)
	}
	before := map[string]string{"mysql/0": unitCharm("mysql/0"), "mysql/1": unitCharm("mysql/1")}

	m := regexp.MustCompile(`revision (\d+),`).FindStringSubmatch(e.ok("refresh", "mysql", "--path", v3).stderr)
	if m == nil {
		t.Fatal("refresh to v3 said no revision")
	}
	for _, u := range []string{"mysql/0", "mysql/1"} {
		e.waitLog(u, `awaiting error resolution for "config-changed" hook: the upgrade to charm "local:mysql-`+m[1]+`" waits`)
		if got := unitCharm(u); got != before[u] || charmFile(u, "VERSION") != "" {
			t.Errorf("%s in error refreshed without --force-units: charm %s, VERSION %q", u, got, charmFile(u, "VERSION"))
		}
	}

	// --config is checked against the new charm before anything is sent.
	e.fails(1, `invalid --config for "mysql": unknown option "hang-hook"`, "refresh", "mysql", "--path", v4, "--config", "hang-hook=x")
	r := e.ok("refresh", "mysql", "--path", v4, "--force-units", "--config", "fail-hook=", "--config", "greeting=hi")
	m = regexp.MustCompile(`revision (\d+),`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatal("refresh to v4 said no revision")
	}
	for _, u := range []string{"mysql/0", "mysql/1"} {
		e.waitTrue(u+" on v4 while in error", func() bool { return charmFile(u, "VERSION") == "v4\n" && unitCharm(u) == "local:mysql-"+m[1] })
		e.waitUntil(u+" still in error", workloadIs(u, "error", `hook failed: "config-changed"`))
	}
	for key, want := range map[string]string{"greeting": "hi", "motto": "keep calm", "fail-hook": ""} {
		if got := e.ok("config", "mysql", key).stdout; got != want+"\n" {
			t.Errorf("config %s = %q, want %q", key, got, want)
		}
	}
	e.fails(1, `key "hang-hook" not found`, "config", "mysql", "hang-hook")

	e.ok("resolved", "--all")
	for _, u := range []string{"mysql/0", "mysql/1"} {
		e.waitUntil(u+" resolved with v4's hook", workloadIs(u, "active", "hi, keep calm"))
	}
	if got := e.charmRev("mysql"); strconv.Itoa(got) != m[1] {
		t.Errorf("status charm-rev %d, want %s", got, m[1])
	}
}

// copyCharm copies a charm directory and writes files over the copy.
func copyCharm(t *testing.T, src string, files map[string]string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copying the charm: %v\n%s", err, out)
	}
	for rel, body := range files {
		if err := os.WriteFile(filepath.Join(dst, rel), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// waitLog waits until the unit's log has text, for as long as the model moves.
func (e *env) waitLog(unit, text string) {
	e.t.Helper()
	e.waitTrue(unit+"'s log to say "+text, func() bool {
		return strings.Contains(e.ok("debug-log", "--replay", "--no-tail", "--include", unit).stdout, text)
	})
}

// waitTrue waits until cond holds, for as long as the model moves.
func (e *env) waitTrue(what string, cond func() bool) {
	e.t.Helper()
	p := e.progress("")
	for !cond() {
		if why := p.stuck(); why != "" {
			e.t.Fatalf("waiting for %s: %s", what, why)
		}
		time.Sleep(100 * time.Millisecond)
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
