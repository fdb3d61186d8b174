package hooktool

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// inAction makes the fake run an action with params as the controller sends them (JSON).
func inAction(f *fakeContext) {
	f.action = true
	_ = json.Unmarshal([]byte(`{"target":"s3","count":2,"ratio":0.5,"verbose":true,"nested":{"a":{"b":"deep"}},"tags":["x","y"]}`), &f.params)
}

func TestActionGet(t *testing.T) {
	const u = "[options] [<key>[.<key>.<key>...]]"
	all := "count: 2\nnested:\n  a:\n    b: deep\nratio: 0.5\ntags:\n- x\n- \"y\"\ntarget: s3\nverbose: true\n"
	runCases(t, []toolCase{
		{name: "action-get", setup: inAction, want: ok(all)},
		{name: "action-get", args: []string{"--format=json"}, setup: inAction,
			want: ok(`{"count":2,"nested":{"a":{"b":"deep"}},"ratio":0.5,"tags":["x","y"],"target":"s3","verbose":true}` + "\n")},
		{name: "action-get", args: []string{"target"}, setup: inAction, want: ok("s3\n")},
		{name: "action-get", args: []string{"count"}, setup: inAction, want: ok("2\n")},
		{name: "action-get", args: []string{"verbose"}, setup: inAction, want: ok("True\n")},
		{name: "action-get", args: []string{"nested.a.b"}, setup: inAction, want: ok("deep\n")},
		{name: "action-get", args: []string{"nested.a"}, setup: inAction, want: ok("b: deep\n")},
		{name: "action-get", args: []string{"nested.a", "--format", "json"}, setup: inAction, want: ok(`{"b":"deep"}` + "\n")},
		{name: "action-get", args: []string{"missing"}, setup: inAction, want: ok("")},
		{name: "action-get", args: []string{"target.deeper"}, setup: inAction, want: ok("")},
		{name: "action-get", args: []string{"missing", "--format=json"}, setup: inAction, want: ok("null\n")},
		{name: "action-get", setup: func(f *fakeContext) { f.action = true }, want: ok("{}\n")},
		{name: "action-get", args: []string{"--format=json"}, setup: func(f *fakeContext) { f.action = true }, want: ok("{}\n")},
		{name: "action-get", args: []string{"a", "b"}, setup: inAction, want: usage("action-get", `unrecognized args: ["b"]`, u)},
		// In a hook, as in Juju.
		{name: "action-get", want: failed("not running an action")},
	})
}

func TestActionSet(t *testing.T) {
	const u = "<key>=<value> [<key>=<value> ...]"
	runCases(t, []toolCase{
		{name: "action-set", args: []string{"a=1", "b.c=x=y", "outfile.size=10G", "d-2="}, setup: inAction, want: ok(""),
			record: []string{"action-set a=1", "action-set b.c=x=y", "action-set outfile.size=10G", "action-set d-2="}},
		{name: "action-set", setup: inAction, want: ok(""), record: []string{}},
		// Every key part is checked, and nothing is set when one fails.
		{name: "action-set", args: []string{"a=1", "Bad=2"}, setup: inAction, record: []string{},
			want: usage("action-set", `key "Bad" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods`, u)},
		{name: "action-set", args: []string{"a.=1"}, setup: inAction,
			want: usage("action-set", `key "" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods`, u)},
		{name: "action-set", args: []string{"a-=1"}, setup: inAction,
			want: usage("action-set", `key "a-" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods`, u)},
		{name: "action-set", args: []string{"x"}, setup: inAction, want: usage("action-set", `argument "x" must be of the form key...=value`, u)},
		{name: "action-set", args: []string{"stdout=x"}, setup: inAction, want: usage("action-set", `cannot set reserved action key "stdout"`, u)},
		{name: "action-set", args: []string{"a.stderr-encoding=x"}, setup: inAction, want: usage("action-set", `cannot set reserved action key "stderr-encoding"`, u)},
		{name: "action-set", args: []string{"a=1"}, want: failed("not running an action")},
	})
}

func TestActionSetNests(t *testing.T) {
	f := newFake()
	inAction(f)
	s := startServer(t, f)
	for _, args := range [][]string{{"foo.bar=2", "foo.baz.val=3"}, {"foo.bar.zab=4", "foo.baz=1", "outfile.size=10G"}} {
		if got := run(s, "", "action-set", args...); got != ok("") {
			t.Fatalf("action-set %v: %#v", args, got)
		}
	}
	// Juju's own example: a later key replaces a value with a map, and a map with a value.
	want := map[string]any{
		"foo":     map[string]any{"bar": map[string]any{"zab": "4"}, "baz": "1"},
		"outfile": map[string]any{"size": "10G"},
	}
	if !reflect.DeepEqual(f.results, want) {
		t.Errorf("results %v, want %v", f.results, want)
	}
}

func TestActionLogAndFail(t *testing.T) {
	runCases(t, []toolCase{
		{name: "action-log", args: []string{"halfway", "there"}, setup: inAction, want: ok(""), record: []string{`action-log "halfway there"`}},
		{name: "action-log", setup: inAction, want: usage("action-log", "no message specified", "<message>")},
		{name: "action-log", args: []string{"x"}, want: failed("not running an action")},
		{name: "action-fail", args: []string{"disk full"}, setup: inAction, want: ok(""), record: []string{`action-fail "disk full"`}},
		{name: "action-fail", setup: inAction, want: ok(""),
			record: []string{`action-fail "action failed without reason given, check action for errors"`}},
		// ops passes "" when the charm gave no message: Juju keeps it empty.
		{name: "action-fail", args: []string{""}, setup: inAction, want: ok(""), record: []string{`action-fail ""`}},
		{name: "action-fail", args: []string{"a", "b"}, setup: inAction, want: usage("action-fail", `unrecognized args: ["b"]`, `["<failure message>"]`)},
		{name: "action-fail", args: []string{"x"}, want: failed("not running an action")},
	})
}

// opsActionScript drives ops 2.20's _ModelBackend action calls, as an ops charm's action
// handler makes them (event.params, set_results, log, fail).
const opsActionScript = `
import json, sys, types
sys.modules.setdefault('websocket', types.ModuleType('websocket'))
sys.path.insert(0, sys.argv[1])
import ops.model

b = ops.model._ModelBackend()
out = {}
def record(name, fn):
    try:
        out[name] = fn()
    except ops.model.ModelError as e:
        out[name] = 'ModelError: ' + str(e).strip()
record('action_get', lambda: b.action_get())
record('action_set', lambda: b.action_set({'store': {'port': 7070, 'token': 'abc'}, 'unit': 'wordpress/0'}))
record('action_log', lambda: b.action_log('halfway there'))
record('action_fail_empty', lambda: b.action_fail())
record('action_fail', lambda: b.action_fail('disk full'))
print(json.dumps(out))
`

// TestOpsActionBackend runs ops's action calls against the tools with the arguments ops
// passes: in an action, and in a hook, where Juju refuses them.
func TestOpsActionBackend(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	if _, err := os.Stat(filepath.Join(opsDir, "ops", "model.py")); err != nil {
		t.Skipf("no ops library: %v", err)
	}
	if err := exec.Command(python, "-c", "import yaml").Run(); err != nil {
		t.Skip("python3 has no yaml module")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	absOps, err := filepath.Abs(opsDir)
	if err != nil {
		t.Fatal(err)
	}
	toolsDir := filepath.Join(t.TempDir(), "tools")
	if err := InstallTools(toolsDir, exe); err != nil {
		t.Fatal(err)
	}
	run := func(f *fakeContext) map[string]any {
		s := startServer(t, f)
		cmd := exec.Command(python, "-c", opsActionScript, absOps)
		cmd.Env = []string{"PATH=" + toolsDir + ":/usr/bin:/bin", "JUJU_UNIT_NAME=wordpress/0", "JUJU_VERSION=3.6.12",
			"JUJU_AGENT_SOCKET=" + s.Addr(), "JUJU_CONTEXT_ID=ctx-1", "JUJU_ACTION_NAME=backup", "JUJU_ACTION_UUID=2"}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("ops: %v\n%s", err, stderr.String())
		}
		var got map[string]any
		if err := json.Unmarshal(stdout, &got); err != nil {
			t.Fatalf("ops printed %q: %v", stdout, err)
		}
		return got
	}

	f := newFake()
	inAction(f)
	got := run(f)
	want := map[string]any{
		"action_get": map[string]any{"count": 2.0, "nested": map[string]any{"a": map[string]any{"b": "deep"}}, "ratio": 0.5,
			"tags": []any{"x", "y"}, "target": "s3", "verbose": true},
		"action_set": nil, "action_log": nil, "action_fail_empty": nil, "action_fail": nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ops got\n%#v\nwant\n%#v", got, want)
	}
	wantCalls := []string{"action-set store.port=7070", "action-set store.token=abc", "action-set unit=wordpress/0",
		`action-log "halfway there"`, `action-fail ""`, `action-fail "disk full"`}
	if calls := f.recorded(); !slices.Equal(calls, wantCalls) {
		t.Errorf("Context got\n%q\nwant\n%q", calls, wantCalls)
	}
	if want := map[string]any{"store": map[string]any{"port": "7070", "token": "abc"}, "unit": "wordpress/0"}; !reflect.DeepEqual(f.results, want) {
		t.Errorf("results %v, want %v", f.results, want)
	}

	got = run(newFake()) // a hook
	for _, k := range []string{"action_get", "action_set", "action_log", "action_fail_empty", "action_fail"} {
		if got[k] != "ModelError: ERROR not running an action" {
			t.Errorf("%s in a hook: %#v", k, got[k])
		}
	}
}
