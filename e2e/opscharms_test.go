package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/internal/charmpack"
)

// opsCharms builds the binaries, packs the ops charms as `make charms` does (into a temporary
// directory, so that the test does not depend on a stale bin/charms) and bootstraps. It skips,
// saying what is missing, when this machine cannot run ops charms; under CI=true it fails
// instead, since CI is expected to have installed them.
func opsCharms(t *testing.T) (*env, map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	thirdparty, opsDir := opsThirdparty(t, root, true)
	sources, _ := filepath.Glob(filepath.Join(root, "testdata", "opscharms", "*"))
	sources = append(sources,
		filepath.Join(thirdparty, "jubilant-test-charms", "testdb"),
		filepath.Join(thirdparty, "jubilant-test-charms", "testapp"))
	charms := packCharms(t, opsDir, sources, t.TempDir())

	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })
	return e, charms
}

// opsThirdparty finds the third-party folder and its ops library (and jubilant's test charms
// when asked), and checks the host's Python can run ops charms; it skips saying what is
// missing, or fails under CI=true.
func opsThirdparty(t *testing.T, root string, jubilantCharms bool) (thirdparty, opsDir string) {
	t.Helper()
	thirdparty = os.Getenv("JUJU_THIRDPARTY")
	if thirdparty == "" {
		thirdparty = filepath.Join(root, "..", "shared", "thirdparty")
	}
	opsDir = filepath.Join(thirdparty, "ops-2.20.0", "ops")
	var missing []string
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").CombinedOutput(); err != nil {
		missing = append(missing, fmt.Sprintf("/usr/bin/python3 with yaml and websocket (Debian python3-yaml python3-websocket): %s", lastLine(string(out), err)))
	}
	if _, err := os.Stat(filepath.Join(opsDir, "__init__.py")); err != nil {
		missing = append(missing, "ops 2.20.0 at "+opsDir+" (set JUJU_THIRDPARTY)")
	}
	if _, err := os.Stat(filepath.Join(thirdparty, "jubilant-test-charms")); err != nil && jubilantCharms {
		missing = append(missing, "jubilant's test charms at "+filepath.Join(thirdparty, "jubilant-test-charms"))
	}
	if len(missing) > 0 {
		reason := "cannot run ops charms: missing " + strings.Join(missing, "; ")
		if os.Getenv("CI") == "true" {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	return thirdparty, opsDir
}

// packCharms packs each charm source with opsDir's ops into dir as <name>_<arch>.charm, as
// `make charms` does, and returns the files by charm name.
func packCharms(t *testing.T, opsDir string, sources []string, dir string) map[string]string {
	t.Helper()
	charms := map[string]string{}
	for _, src := range sources {
		name, err := charmpack.Name(src)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, name+"_"+charmpack.HostArch()+".charm")
		if err := charmpack.Pack(src, opsDir, file); err != nil {
			t.Fatal(err)
		}
		charms[name] = file
	}
	return charms
}

func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// opsStatus is what these tests read of `status --format json`.
type opsStatus struct {
	Machines map[string]struct {
		DNSName string `json:"dns-name"`
	} `json:"machines"`
	Applications map[string]struct {
		ApplicationStatus struct{ Current, Message string } `json:"application-status"`
		Units             map[string]opsUnit                `json:"units"`
	} `json:"applications"`
}

type opsUnit struct {
	WorkloadStatus struct{ Current, Message string } `json:"workload-status"`
	JujuStatus     struct{ Current, Message string } `json:"juju-status"`
	Machine        string                            `json:"machine"`
	Leader         bool                              `json:"leader"`
	OpenPorts      []string                          `json:"open-ports"`
	PublicAddress  string                            `json:"public-address"`
}

func (e *env) opsStatus(model string) (opsStatus, string) {
	e.t.Helper()
	r := e.ok("status", "-m", model, "--format", "json")
	var s opsStatus
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
	return s, r.stdout
}

// units of an application, sorted by name.
func (s opsStatus) units(app string) []string {
	var names []string
	for n := range s.Applications[app].Units {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s opsStatus) unit(name string) opsUnit {
	app, _, _ := strings.Cut(name, "/")
	return s.Applications[app].Units[name]
}

// allWorkloads says whether app has n units whose workload status is current with a message
// containing msg.
func (s opsStatus) allWorkloads(app string, n int, current, msg string) bool {
	units := s.Applications[app].Units
	if len(units) != n {
		return false
	}
	for _, u := range units {
		if u.WorkloadStatus.Current != current || !strings.Contains(u.WorkloadStatus.Message, msg) {
			return false
		}
	}
	return true
}

// waitStatus polls the model's status until ok holds. A unit in error fails at once (no ops
// test expects one): the failed hook is in the message.
func (e *env) waitStatus(model, what string, ok func(opsStatus) bool) opsStatus {
	e.t.Helper()
	// The waits return as soon as their condition holds, fail at once on a unit in error, and
	// give up only when the model stops moving.
	p := e.progress(model)
	for {
		s, raw := e.opsStatus(model)
		if ok(s) {
			return s
		}
		for app, a := range s.Applications {
			for name, u := range a.Units {
				if u.WorkloadStatus.Current == "error" {
					e.t.Fatalf("waiting for %s: %s (of %s) is in error: %s\n%s\nits log:\n%s", what, name, app,
						u.WorkloadStatus.Message, e.ok("status", "-m", model).stdout, e.unitLog(model, name))
				}
			}
		}
		if why := p.stuck(); why != "" {
			e.t.Fatalf("waiting for %s: %s; last status:\n%s\n%s", what, why, e.ok("status", "-m", model).stdout, raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unitLog is the tail of a unit's part of the model log, for failure messages.
func (e *env) unitLog(model, unit string) string {
	r := e.juju("debug-log", "-m", model, "--replay", "--no-tail", "--include", unit)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	return strings.Join(lines, "\n")
}

// TestOpsCharmJubilant deploys jubilant's own test charms, packed as charmcraft would and
// otherwise unmodified: testdb sets application data in db-relation-created, testapp reads it
// in db-relation-changed.
func TestOpsCharmJubilant(t *testing.T) {
	e, charms := opsCharms(t)
	const model = "jubilant"
	e.ok("add-model", model)
	e.ok("deploy", "-m", model, charms["testdb"])
	// A bare name is looked up in $JUJU_REPOSITORY, where charmcraft's <name>_<arch>.charm is.
	if r := e.jujuRepo(filepath.Dir(charms["testapp"]), "deploy", "-m", model, "testapp"); r.code != 0 {
		t.Fatalf("juju deploy testapp with JUJU_REPOSITORY=%s: exit %d\n%s%s", filepath.Dir(charms["testapp"]), r.code, r.stdout, r.stderr)
	}
	e.waitStatus(model, "both deployed and idle", func(s opsStatus) bool {
		return len(s.units("testdb")) == 1 && len(s.units("testapp")) == 1 &&
			s.unit("testdb/0").JujuStatus.Current == "idle" && s.unit("testapp/0").JujuStatus.Current == "idle"
	})
	e.ok("integrate", "-m", model, "testdb", "testapp")
	e.waitStatus(model, "testdb and testapp active through the relation", func(s opsStatus) bool {
		return s.allWorkloads("testdb", 1, "active", "relation created") &&
			s.allWorkloads("testapp", 1, "active", "relation changed: dbkey=dbvalue")
	})

	out := e.ok("show-unit", "-m", model, "testapp/0", "--format", "json").stdout
	var show map[string]struct {
		RelationInfo []struct {
			Endpoint        string            `json:"endpoint"`
			ApplicationData map[string]string `json:"application-data"`
		} `json:"relation-info"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatalf("show-unit json: %v\n%s", err, out)
	}
	found := false
	for _, ri := range show["testapp/0"].RelationInfo {
		found = found || (ri.Endpoint == "db" && ri.ApplicationData["dbkey"] == "dbvalue")
	}
	if !found {
		t.Errorf("show-unit testapp/0: no db relation with application-data dbkey=dbvalue:\n%s", out)
	}
}

// TestOpsCharmKV: kvstore -n 2 and kvclient -n 2 in a model whose update-status runs every
// 2 s: leadership, the token in the peer application data, application data both ways across
// kv, unit and application statuses, update-status and a config change.
func TestOpsCharmKV(t *testing.T) {
	longJourney(t)
	e, charms := opsCharms(t)
	const model = "kv"
	e.ok("add-model", model, "--config", "update-status-hook-interval=2s")
	e.ok("deploy", "-m", model, charms["kvstore"], "-n", "2")
	e.ok("deploy", "-m", model, charms["kvclient"], "-n", "2")

	// The leader makes the token; the other unit reads it from the peer application data.
	var token string
	s := e.waitStatus(model, "kvstore active with one token, kvclient waiting", func(s opsStatus) bool {
		token = ""
		for _, name := range s.units("kvstore") {
			_, tok, ok := strings.Cut(s.unit(name).WorkloadStatus.Message, "token=")
			tok, _, _ = strings.Cut(tok, ",")
			if !ok || (token != "" && tok != token) {
				return false
			}
			token = tok
		}
		return s.allWorkloads("kvstore", 2, "active", "hello on port 7070, token=") &&
			s.allWorkloads("kvclient", 2, "blocked", "waiting for kv") &&
			strings.HasPrefix(s.Applications["kvstore"].ApplicationStatus.Message, "2 units")
	})
	leaders := 0
	for _, name := range s.units("kvstore") {
		u := s.unit(name)
		if u.Leader {
			leaders++
		}
		if strings.Join(u.OpenPorts, ",") != "7070/tcp" {
			t.Errorf("%s open ports %v, want 7070/tcp", name, u.OpenPorts)
		}
	}
	if leaders != 1 {
		t.Errorf("kvstore has %d leaders", leaders)
	}

	// Application data across: the store's token reaches every client unit, the client's
	// name reaches the store's leader.
	e.ok("integrate", "-m", model, "kvclient", "kvstore")
	e.waitStatus(model, "kvclient connected, kvstore naming its client", func(s opsStatus) bool {
		return s.allWorkloads("kvclient", 2, "active", "connected to kvstore: token="+token+" port=7070") &&
			s.Applications["kvstore"].ApplicationStatus.Message == "2 units, clients: kvclient"
	})

	// update-status runs on the model's interval: every unit's count goes past 1.
	e.waitStatus(model, "update-status run at least twice on every kvstore unit", func(s opsStatus) bool {
		for _, name := range s.units("kvstore") {
			var n int
			_, after, ok := strings.Cut(s.unit(name).WorkloadStatus.Message, "update-status #")
			if !ok {
				return false
			}
			if _, err := fmt.Sscan(after, &n); err != nil || n < 2 {
				return false
			}
		}
		return len(s.units("kvstore")) == 2
	})

	// A config change: typed options reach the charm, the port moves, the clients hear of it.
	e.ok("config", "-m", model, "kvstore", "port=7171", "greeting=hi")
	s = e.waitStatus(model, "the new port everywhere", func(s opsStatus) bool {
		for _, name := range s.units("kvstore") {
			if strings.Join(s.unit(name).OpenPorts, ",") != "7171/tcp" {
				return false
			}
		}
		return s.allWorkloads("kvstore", 2, "active", "hi on port 7171, token="+token) &&
			s.allWorkloads("kvclient", 2, "active", "connected to kvstore: token="+token+" port=7171")
	})
}

// hookRecord is one HOOKORDER line of the hookorder charm: one event it was given.
type hookRecord struct {
	Event     string            `json:"event"`
	Reemitted bool              `json:"reemitted"`
	Stored    int               `json:"stored-events"`
	Env       map[string]string `json:"env"`
	Tools     map[string]string `json:"tools"`
	Values    struct {
		Leader       bool              `json:"leader"`
		PlannedUnits int               `json:"planned-units"`
		OpenedPorts  []string          `json:"opened-ports"`
		PeerModel    string            `json:"peer-model"`
		KVAppData    map[string]string `json:"kv-app-data"`
		Network      struct {
			Bind    string `json:"bind-address"`
			Ingress string `json:"ingress-address"`
		} `json:"network"`
	} `json:"values"`
}

// hook is the hook the record's event was dispatched for (not the one it was deferred from).
func (r hookRecord) hook() string { return strings.TrimPrefix(r.Env["JUJU_DISPATCH_PATH"], "hooks/") }

// hookRecords reads a unit's HOOKORDER lines from the model log.
func (e *env) hookRecords(model, unit string) []hookRecord {
	e.t.Helper()
	r := e.ok("debug-log", "-m", model, "--replay", "--no-tail", "--include", unit)
	var records []hookRecord
	for _, line := range strings.Split(r.stdout, "\n") {
		_, js, ok := strings.Cut(line, "HOOKORDER ")
		if !ok {
			continue
		}
		var rec hookRecord
		if err := json.Unmarshal([]byte(js), &rec); err != nil {
			e.t.Fatalf("%s: bad HOOKORDER record: %v\n%s", unit, err, line)
		}
		records = append(records, rec)
	}
	return records
}

// hooksOf lists the hooks a unit ran, in order, from its records (events ops emits again
// after deferring them are not hooks).
func hooksOf(records []hookRecord) []string {
	var hooks []string
	for _, r := range records {
		if !r.Reemitted {
			hooks = append(hooks, r.hook())
		}
	}
	return hooks
}

// waitRecords polls a unit's records until ok holds.
func (e *env) waitRecords(model, unit, what string, ok func([]hookRecord) bool) []hookRecord {
	e.t.Helper()
	p := e.progress(model)
	for {
		recs := e.hookRecords(model, unit)
		if ok(recs) {
			return recs
		}
		if why := p.stuck(); why != "" {
			e.t.Fatalf("waiting for %s on %s: %s; hooks seen: %v\nstatus:\n%s\nlog:\n%s",
				what, unit, why, hooksOf(recs), e.ok("status", "-m", model).stdout, e.unitLog(model, unit))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ranInOrder(want ...string) func([]hookRecord) bool {
	return func(recs []hookRecord) bool { return inOrder(hooksOf(recs), want...) }
}

// TestOpsCharmHookOrder runs the hookorder charm, which records every event with its
// environment and the outcome of every hook tool call ops made, and checks them against
// Juju 3.6: the order of hooks from install to remove, the environment of each, every tool
// call with ops's flags, state kept by the controller (state-get/set/delete) and one
// loopback address per machine.
func TestOpsCharmHookOrder(t *testing.T) {
	longJourney(t)
	e, charms := opsCharms(t)
	const model = "hooks"
	e.ok("add-model", model)
	e.ok("deploy", "-m", model, charms["hookorder"], "-n", "2")
	s := e.waitStatus(model, "hookorder started on two units", func(s opsStatus) bool {
		return s.allWorkloads("hookorder", 2, "active", "last") &&
			s.unit("hookorder/0").JujuStatus.Current == "idle" && s.unit("hookorder/1").JujuStatus.Current == "idle"
	})
	units := s.units("hookorder")
	leader := units[0]
	if !s.unit(leader).Leader {
		leader = units[1]
	}

	// Install to start, as Juju 3.6 runs them: a peer relation that exists at install gets
	// relation-created before leader-elected.
	for _, u := range units {
		want := []string{"install", "ring-relation-created", "config-changed", "start"}
		if u == leader {
			want = []string{"install", "ring-relation-created", "leader-elected", "config-changed", "start"}
		}
		recs := e.waitRecords(model, u, "install to start", ranInOrder(want...))
		got := hooksOf(recs)
		// The leader's first five are exactly these; the other unit may also get
		// leader-settings-changed on the way.
		if u == leader && strings.Join(got[:len(want)], " ") != strings.Join(want, " ") || got[0] != "install" {
			t.Errorf("%s ran %v; want it to begin with %v", u, got, want)
		}
		// is-leader: never on the other unit; always on the leader from leader-elected on
		// (before it, the leader may already hold the lease).
		elected := false
		for _, r := range recs {
			elected = elected || (u == leader && r.hook() == "leader-elected")
			if r.Values.Leader != elected && (u != leader || elected) {
				t.Errorf("%s: is-leader said %v in %s, status says leader is %s", u, r.Values.Leader, r.hook(), leader)
				break
			}
		}
		// The first config-changed is deferred once: ops emits it again in the next hook and
		// then deletes it from the controller's state (state-delete).
		again := false
		for _, r := range recs {
			again = again || (r.Reemitted && r.Event == "config_changed")
		}
		if !again {
			t.Errorf("%s: the deferred config-changed never came back: %v", u, hooksOf(recs))
		}
	}

	// Two machines, two loopback addresses, and network-get gives each unit its own.
	s, _ = e.opsStatus(model)
	addrs := map[string]string{}
	for _, u := range units {
		unit := s.unit(u)
		addr := unit.PublicAddress
		if !strings.HasPrefix(addr, "127.") {
			t.Errorf("%s public-address %q, want a 127.x.y.z loopback address", u, addr)
		}
		if other, dup := addrs[addr]; dup {
			t.Errorf("%s and %s share the address %s", u, other, addr)
		}
		addrs[addr] = u
		if dns := s.Machines[unit.Machine].DNSName; dns != addr {
			t.Errorf("machine %s dns-name %q, its unit %s public-address %q", unit.Machine, dns, u, addr)
		}
		recs := e.hookRecords(model, u)
		if last := recs[len(recs)-1]; last.Values.Network.Ingress != addr || last.Values.Network.Bind != addr {
			t.Errorf("%s network-get: bind %q ingress %q, want %s", u, last.Values.Network.Bind, last.Values.Network.Ingress, addr)
		}
		if strings.Join(unit.OpenPorts, ",") != "8080/tcp" {
			t.Errorf("%s open ports %v, want 8080/tcp", u, unit.OpenPorts)
		}
	}

	// A regular relation: created, joined, changed; a config change with it in place (ops
	// then asks relation-list --app who is on the other side); departed and broken on removal.
	e.ok("deploy", "-m", model, charms["kvstore"])
	e.ok("integrate", "-m", model, "hookorder", "kvstore")
	for _, u := range units {
		e.waitRecords(model, u, "the kv relation with kvstore's token", func(recs []hookRecord) bool {
			if !inOrder(hooksOf(recs), "start", "kv-relation-created", "kv-relation-joined", "kv-relation-changed") {
				return false
			}
			for _, r := range recs {
				if r.hook() == "kv-relation-changed" && r.Values.KVAppData["token"] != "" {
					return true
				}
			}
			return false
		})
	}
	e.ok("config", "-m", model, "hookorder", "colour=red")
	for _, u := range units {
		e.waitRecords(model, u, "config-changed after the relation", ranInOrder("kv-relation-changed", "config-changed"))
	}
	e.ok("remove-relation", "-m", model, "hookorder", "kvstore")
	for _, u := range units {
		e.waitRecords(model, u, "the kv relation departed and broken", ranInOrder("kv-relation-created", "kv-relation-departed", "kv-relation-broken"))
	}

	// A unit removed: it leaves its peer, then stop, then remove, last of all.
	gone := units[1]
	e.ok("remove-unit", "-m", model, gone, "--no-prompt")
	recs := e.waitRecords(model, gone, "stop and remove", ranInOrder("stop", "remove"))
	if hooks := hooksOf(recs); hooks[len(hooks)-1] != "remove" || !inOrder(hooks, "ring-relation-broken", "stop", "remove") {
		t.Errorf("%s ran %v; want ring-relation-broken, stop and remove at the end", gone, hooks)
	}
	e.waitStatus(model, gone+" removed", func(s opsStatus) bool { return len(s.units("hookorder")) == 1 })

	// Every hook: Juju 3.6's environment, every tool call fine, state kept across hooks.
	for _, u := range units {
		machine := s.unit(u).Machine
		recs := e.hookRecords(model, u)
		checkRecords(t, model, u, machine, recs)
	}
}

// checkRecords checks the environment and the tool calls of each of a unit's records.
func checkRecords(t *testing.T, model, unit, machine string, recs []hookRecord) {
	t.Helper()
	uuid, contexts := "", map[string]bool{}
	for i, r := range recs {
		env := r.Env
		where := fmt.Sprintf("%s %s (record %d, event %s)", unit, r.hook(), i, r.Event)
		if r.Stored != i+1 {
			t.Errorf("%s: stored event count %d, want %d (state-get/state-set lost the charm's state)", where, r.Stored, i+1)
		}
		for name, result := range r.Tools {
			if strings.HasPrefix(result, "error") {
				t.Errorf("%s: %s: %s", where, name, result)
			}
		}
		if r.Reemitted {
			continue
		}
		if !strings.HasPrefix(env["JUJU_VERSION"], "3.6.") {
			t.Errorf("%s: JUJU_VERSION %q, want 3.6.x", where, env["JUJU_VERSION"])
		}
		if env["JUJU_HOOK_NAME"] != r.hook() || !strings.HasPrefix(env["JUJU_DISPATCH_PATH"], "hooks/") {
			t.Errorf("%s: JUJU_HOOK_NAME %q, JUJU_DISPATCH_PATH %q", where, env["JUJU_HOOK_NAME"], env["JUJU_DISPATCH_PATH"])
		}
		if r.Event != strings.ReplaceAll(r.hook(), "-", "_") {
			t.Errorf("%s: ops saw event %s", where, r.Event)
		}
		for k, want := range map[string]string{"JUJU_MODEL_NAME": model, "JUJU_UNIT_NAME": unit, "JUJU_MACHINE_ID": machine} {
			if env[k] != want {
				t.Errorf("%s: %s = %q, want %q", where, k, env[k], want)
			}
		}
		if uuid == "" {
			uuid = env["JUJU_MODEL_UUID"]
		}
		if env["JUJU_MODEL_UUID"] == "" || env["JUJU_MODEL_UUID"] != uuid || (r.Values.PeerModel != "" && r.Values.PeerModel != uuid) {
			t.Errorf("%s: JUJU_MODEL_UUID %q, first %q, relation-model-get %q", where, env["JUJU_MODEL_UUID"], uuid, r.Values.PeerModel)
		}
		if env["JUJU_CHARM_DIR"] == "" || env["CHARM_DIR"] != env["JUJU_CHARM_DIR"] {
			t.Errorf("%s: JUJU_CHARM_DIR %q, CHARM_DIR %q", where, env["JUJU_CHARM_DIR"], env["CHARM_DIR"])
		}
		if env["JUJU_CONTEXT_ID"] == "" || contexts[env["JUJU_CONTEXT_ID"]] {
			t.Errorf("%s: JUJU_CONTEXT_ID %q is empty or was used before", where, env["JUJU_CONTEXT_ID"])
		}
		contexts[env["JUJU_CONTEXT_ID"]] = true
		if env["JUJU_API_ADDRESSES"] == "" || !strings.Contains(env["PATH"], "/usr/bin") {
			t.Errorf("%s: JUJU_API_ADDRESSES %q, PATH %q", where, env["JUJU_API_ADDRESSES"], env["PATH"])
		}

		endpoint, kind, isRelation := strings.Cut(r.hook(), "-relation-")
		if !isRelation {
			for _, k := range []string{"JUJU_RELATION", "JUJU_RELATION_ID", "JUJU_REMOTE_UNIT", "JUJU_REMOTE_APP", "JUJU_DEPARTING_UNIT"} {
				if env[k] != "" {
					t.Errorf("%s: %s = %q outside a relation hook", where, k, env[k])
				}
			}
			continue
		}
		if env["JUJU_RELATION"] != endpoint || !strings.HasPrefix(env["JUJU_RELATION_ID"], endpoint+":") {
			t.Errorf("%s: JUJU_RELATION %q, JUJU_RELATION_ID %q", where, env["JUJU_RELATION"], env["JUJU_RELATION_ID"])
		}
		remoteApp := "kvstore"
		if endpoint == "ring" {
			remoteApp = "hookorder"
		}
		if env["JUJU_REMOTE_APP"] != remoteApp {
			t.Errorf("%s: JUJU_REMOTE_APP %q, want %q", where, env["JUJU_REMOTE_APP"], remoteApp)
		}
		switch kind {
		case "joined", "changed", "departed":
			if kind != "changed" || env["JUJU_REMOTE_UNIT"] != "" { // changed for app data has no remote unit
				if !strings.HasPrefix(env["JUJU_REMOTE_UNIT"], remoteApp+"/") {
					t.Errorf("%s: JUJU_REMOTE_UNIT %q", where, env["JUJU_REMOTE_UNIT"])
				}
			}
		case "created", "broken":
			if env["JUJU_REMOTE_UNIT"] != "" {
				t.Errorf("%s: JUJU_REMOTE_UNIT %q in %s", where, env["JUJU_REMOTE_UNIT"], kind)
			}
		}
		if kind == "departed" {
			if !strings.HasPrefix(env["JUJU_DEPARTING_UNIT"], remoteApp+"/") && env["JUJU_DEPARTING_UNIT"] != unit {
				t.Errorf("%s: JUJU_DEPARTING_UNIT %q", where, env["JUJU_DEPARTING_UNIT"])
			}
		} else if env["JUJU_DEPARTING_UNIT"] != "" {
			t.Errorf("%s: JUJU_DEPARTING_UNIT %q outside -departed", where, env["JUJU_DEPARTING_UNIT"])
		}
	}
	var plannedTwo bool
	for _, r := range recs {
		plannedTwo = plannedTwo || r.Values.PlannedUnits == 2
		if len(r.Values.OpenedPorts) > 0 && strings.Join(r.Values.OpenedPorts, ",") != "8080/tcp" {
			t.Errorf("%s: opened-ports %v, want 8080/tcp", unit, r.Values.OpenedPorts)
		}
	}
	if !plannedTwo {
		t.Errorf("%s: goal-state never counted 2 planned units", unit)
	}
}
