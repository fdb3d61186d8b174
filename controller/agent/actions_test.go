package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/agent/hooktool"
)

// TestMain lets this test binary act as the hook tools, as jujud does, so that the actions
// these tests run can call action-get and action-set.
func TestMain(m *testing.M) {
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// testUnit is a unit agent with its charm directory, log and hook tools' server, but no
// controller: enough to run tasks in its context.
func testUnit(t *testing.T, files map[string]string) (*unitAgent, *snapshot) {
	t.Helper()
	dir := t.TempDir()
	a := &unitAgent{dir: dir, conf: Conf{ID: "app/0", Tag: "unit-app-0", Model: "8d3a3a26-5c7a-4b5e-9f43-0c2b1a9e7d11"}}
	for name, body := range files {
		path := filepath.Join(a.charmDir(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(a.charmDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.readHooks(); err != nil {
		t.Fatal(err)
	}
	var err error
	if a.log, err = openUnitLog(dir, a.conf.Tag, a.conf.Model, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.log.close)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := hooktool.InstallTools(a.toolsDir(), self); err != nil {
		t.Fatal(err)
	}
	a.toolsAddr = hooktool.SocketAddr(a.conf.ID)
	if a.tools, err = hooktool.NewServer(a.toolsAddr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { a.tools.Serve(ctx); close(served) }()
	t.Cleanup(func() { cancel(); <-served })
	snap := &snapshot{unit: &pb.AgentUnit{Name: "app/0", Machine: "0"}, app: &pb.AgentApplication{Name: "app", ModelName: "default"}}
	return a, snap
}

func task(id, action, params string) *taskRun {
	run, err := newTaskRun(&pb.Task{Id: id, Action: action, ParamsJson: []byte(params)})
	if err != nil {
		panic(err)
	}
	return run
}

func checkOutcome(t *testing.T, got taskOutcome, status, message string, results map[string]any) {
	t.Helper()
	if got.status != status || got.message != message {
		t.Errorf("outcome %s %q, want %s %q (results %v)", got.status, got.message, status, message, got.results)
	}
	if !reflect.DeepEqual(got.results, results) {
		t.Errorf("results\n%#v\nwant\n%#v", got.results, results)
	}
}

const helloAction = `#!/bin/sh
echo "hello $(action-get name)"
echo "to stderr" >&2
action-set greeting.text="hi $(action-get name)" count="$(action-get count)"
`

func TestShellActionCompletes(t *testing.T) {
	a, snap := testUnit(t, map[string]string{"actions/hello": helloAction})
	out := a.execTask(context.Background(), task("2", "hello", `{"name":"bob","count":3}`), snap, nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{
		"greeting": map[string]any{"text": "hi bob"}, "count": "3",
		"return-code": 0, "stdout": "hello bob\n", "stderr": "to stderr\n",
	})
	// Its output is in the unit log too, as a hook's.
	log, _ := os.ReadFile(filepath.Join(a.dir, unitLogFile))
	if !strings.Contains(string(log), "DEBUG unit.app/0.hello hello bob") || !strings.Contains(string(log), "WARNING unit.app/0.hello to stderr") {
		t.Errorf("unit log:\n%s", log)
	}
}

func TestActionFailures(t *testing.T) {
	a, snap := testUnit(t, map[string]string{
		"actions/explicit": "#!/bin/sh\naction-set partial=yes\naction-fail 'disk full'\n",
		"actions/default":  "#!/bin/sh\naction-fail\n",
		"actions/exits":    "#!/bin/sh\nprintf 'a\\r\\nno newline'\nexit 3\n",
		// action-fail, then a non-zero exit: the exit is the message, as in Juju.
		"actions/both":  "#!/bin/sh\naction-fail 'said why'\nexit 1\n",
		"actions/notex": "",
	})
	ctx := context.Background()
	checkOutcome(t, a.execTask(ctx, task("2", "explicit", ""), snap, nil), taskFailed, "disk full",
		map[string]any{"partial": "yes", "return-code": 0})
	checkOutcome(t, a.execTask(ctx, task("3", "default", ""), snap, nil), taskFailed,
		"action failed without reason given, check action for errors", map[string]any{"return-code": 0})
	checkOutcome(t, a.execTask(ctx, task("4", "exits", ""), snap, nil), taskFailed, "exit status 3",
		map[string]any{"return-code": 3, "stdout": "a\nno newline\n"})
	checkOutcome(t, a.execTask(ctx, task("5", "both", ""), snap, nil), taskFailed, "exit status 1",
		map[string]any{"return-code": 1})
	checkOutcome(t, a.execTask(ctx, task("6", "missing", ""), snap, nil), taskFailed, `action not implemented on unit "app/0"`, nil)
	if err := os.Chmod(filepath.Join(a.charmDir(), "actions", "notex"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := a.execTask(ctx, task("7", "notex", ""), snap, nil)
	if out.status != taskFailed || !strings.Contains(out.message, "permission denied") {
		t.Errorf("a non-executable action: %+v", out)
	}
}

// A dispatch charm gets the action through JUJU_DISPATCH_PATH, with Juju's action variables.
func TestDispatchActionEnvironment(t *testing.T) {
	a, snap := testUnit(t, map[string]string{"dispatch": `#!/bin/sh
action-set dispatch-path="$JUJU_DISPATCH_PATH" name="$JUJU_ACTION_NAME" uuid="$JUJU_ACTION_UUID" \
  tag="$JUJU_ACTION_TAG" hook-name="${JUJU_HOOK_NAME-unset}" unit="$JUJU_UNIT_NAME" pwd="$PWD"
`})
	out := a.execTask(context.Background(), task("12", "do-it", ""), snap, nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{
		"dispatch-path": "actions/do-it", "name": "do-it", "uuid": "12", "tag": "action-12", "hook-name": "",
		"unit": "app/0", "pwd": a.charmDir(), "return-code": 0,
	})
}

// Cancelling a running action kills its whole process group: the action is aborted, its
// children gone. The action says "started" before it writes the pid the test waits for.
func TestAbortKillsProcessGroup(t *testing.T) {
	a, snap := testUnit(t, map[string]string{"actions/long": `#!/bin/sh
sleep 300 &
echo started
echo $! >child.pid
wait
`})
	abort := make(chan struct{})
	done := make(chan taskOutcome, 1)
	go func() { done <- a.execTask(context.Background(), task("2", "long", ""), snap, abort) }()
	pidFile := filepath.Join(a.charmDir(), "child.pid")
	pid := waitPid(t, pidFile)
	close(abort)
	var out taskOutcome
	select {
	case out = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the aborted action did not end")
	}
	checkOutcome(t, out, taskAborted, "terminated", map[string]any{"return-code": -1, "stdout": "started\n"})
	waitGone(t, pid)
}

func TestExecCommand(t *testing.T) {
	a, snap := testUnit(t, nil)
	ctx := context.Background()
	// Completed whatever the return code, as in Juju; hook tools answer, action-set included.
	out := a.execTask(ctx, task("2", execAction, `{"command":"echo hi; action-set extra=1; pwd >&2; exit 2","timeout":0}`), snap, nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{
		"return-code": 2, "stdout": "hi\n", "stderr": a.charmDir() + "\n", "extra": "1"})
	// Output is kept as it is; empty streams are left out.
	out = a.execTask(ctx, task("3", execAction, `{"command":"printf x"}`), snap, nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{"return-code": 0, "stdout": "x"})
	// The time limit kills it: failed, and the code of a killed command is 0 as Juju reports it.
	// What it printed before is kept (on a loaded machine it may not have printed yet).
	start := time.Now()
	out = a.execTask(ctx, task("4", execAction, `{"command":"echo before; sleep 300","timeout":500000000}`), snap, nil)
	if stdout, ok := out.results["stdout"]; ok && stdout != "before\n" {
		t.Errorf("stdout %q", stdout)
	}
	delete(out.results, "stdout")
	checkOutcome(t, out, taskFailed, "command cancelled", map[string]any{"return-code": 0})
	if time.Since(start) > 20*time.Second {
		t.Errorf("the timeout took %v", time.Since(start))
	}
	out = a.execTask(ctx, task("5", execAction, `{"command":"action-fail nope"}`), snap, nil)
	checkOutcome(t, out, taskFailed, "nope", map[string]any{"return-code": 0})
	out = a.execTask(ctx, task("6", execAction, `{}`), snap, nil)
	checkOutcome(t, out, taskFailed, "no command parameter to juju-exec action", nil)
	// Output that is not UTF-8 goes in base64.
	out = a.execTask(ctx, task("7", execAction, `{"command":"printf '\\377\\376' >&2"}`), snap, nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{"return-code": 0, "stderr": "//4=", "stderr-encoding": "base64"})
}

// The agent stopping kills the task and reports nothing: the task stays running and the next
// agent fails it.
func TestAgentStopLeavesTaskUnfinished(t *testing.T) {
	a, snap := testUnit(t, map[string]string{"actions/long": "#!/bin/sh\necho $$ >self.pid\nsleep 300\n"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan taskOutcome, 1)
	go func() { done <- a.execTask(ctx, task("2", "long", ""), snap, nil) }()
	pid := waitPid(t, filepath.Join(a.charmDir(), "self.pid"))
	cancel()
	select {
	case out := <-done:
		if out.status != "" {
			t.Errorf("outcome %+v, want none", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the action outlived its agent")
	}
	waitGone(t, pid)
}

func TestMachineExecCommand(t *testing.T) {
	m := &machineAgent{dir: t.TempDir()}
	ctx := context.Background()
	out := m.execCommand(ctx, task("2", execAction, `{"command":"pwd; exit 4"}`), nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{"return-code": 4, "stdout": m.dir + "\n", "stderr": ""})
	out = m.execCommand(ctx, task("3", execAction, `{"command":"printf '\\377'"}`), nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{"return-code": 0, "stdout": "/w==", "stdoutEncoding": "base64", "stderr": ""})
	out = m.execCommand(ctx, task("4", execAction, `{"command":"sleep 300","timeout":100000000}`), nil)
	checkOutcome(t, out, taskFailed, "command cancelled", nil)
	abort := make(chan struct{})
	close(abort)
	out = m.execCommand(ctx, task("5", execAction, `{"command":"sleep 300"}`), abort)
	checkOutcome(t, out, taskAborted, "command cancelled", nil)
	out = m.execCommand(ctx, task("6", "backup", `{}`), nil)
	checkOutcome(t, out, taskFailed, "unexpected action backup", nil)
}

func TestCaptureKeepsHeadOnWholeCharacters(t *testing.T) {
	c := &capture{limit: 5}
	c.Write([]byte("abcd"))
	c.Write([]byte("é and more")) // é is two bytes: the fifth byte cuts it
	got := string(c.bytes())
	if want := "abcd\n[11 more bytes not kept: a task keeps the first 5 bytes of each stream]\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	c = &capture{limit: 10}
	c.Write([]byte("short"))
	if got := string(c.bytes()); got != "short" {
		t.Errorf("got %q", got)
	}
}

func TestTaskRunSetNests(t *testing.T) {
	r := task("2", "x", "")
	for _, kv := range [][2]string{{"foo.bar", "2"}, {"foo.baz.val", "3"}, {"foo.bar.zab", "4"}, {"foo.baz", "1"}} {
		r.set(strings.Split(kv[0], "."), kv[1])
	}
	want := map[string]any{"foo": map[string]any{"bar": map[string]any{"zab": "4"}, "baz": "1"}}
	if !reflect.DeepEqual(r.results, want) {
		t.Errorf("results %v, want %v", r.results, want)
	}
	if _, err := newTaskRun(&pb.Task{Action: "x", ParamsJson: []byte("[1]")}); err == nil {
		t.Error("params that are not an object were taken")
	}
	if r := task("2", "x", "null"); r.params == nil {
		t.Error("null params are nil")
	}
}

func TestAbortRequested(t *testing.T) {
	tasks := []*pb.Task{{Id: "2", Status: taskRunning}, {Id: "3", Status: taskAborting}}
	if abortRequested(tasks, "2") || !abortRequested(tasks, "3") || !abortRequested(tasks, "4") {
		t.Error("abortRequested")
	}
}

func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		// A killed child of a killed shell is a zombie until init reaps it.
		if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(data), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("process %d outlived its aborted action", pid)
}

func TestCheckActionAgainstTheUnitsCharm(t *testing.T) {
	a, _ := testUnit(t, map[string]string{
		"metadata.yaml": "name: app\nsummary: s\n",
		"actions.yaml":  "backup:\n  params:\n    target: {type: string}\n  additionalProperties: false\n",
	})
	for _, tc := range []struct {
		action, params, want string
	}{
		{"backup", `{"target":"s3"}`, ""},
		{execAction, `{"command":"true"}`, ""},
		{"restore", `{}`, `cannot run "restore" action: not defined`},
		{"backup", `{"target":1}`, `cannot run "backup" action: validation failed for action "backup": at /target: got number, want string`},
		{"backup", `[]`, `cannot run "backup" action: params are not a JSON object: json: cannot unmarshal array into Go value of type map[string]interface {}`},
	} {
		err := a.checkAction(&pb.Task{Id: "2", Action: tc.action, ParamsJson: []byte(tc.params)})
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.action, tc.params, err, tc.want)
		}
	}
}
