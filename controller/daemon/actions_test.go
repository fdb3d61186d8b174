package daemon_test

// Actions and juju exec end to end: a real controller, real agents, the sample charms'
// actions (testdata/charms/mysql/actions) and, when this machine can run them, an ops charm's
// (testdata/opscharms/kvstore).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/internal/charmpack"
)

// taskWait bounds a wait for a task that does not change; only a hang reaches it.
const taskWait = 2 * time.Minute

// enqueue queues one action (or, with action "", an exec command) and returns its task ids,
// one per receiver.
func enqueue(t *testing.T, c *client.Client, req *pb.EnqueueRequest) []string {
	t.Helper()
	req.Model = "default"
	op, err := c.Enqueue(context.Background(), req)
	if err != nil {
		t.Fatalf("enqueue %v: %v", req, err)
	}
	var ids []string
	for _, task := range op.Tasks {
		ids = append(ids, task.Id)
	}
	return ids
}

func params(t *testing.T, p map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitTask polls a task until ok holds; it gives up when the task has not changed for
// taskWait.
func waitTask(t *testing.T, c *client.Client, id, what string, ok func(*pb.Task) bool) *pb.Task {
	t.Helper()
	var last *pb.Task
	changed := time.Now()
	for {
		task, err := c.GetTask(context.Background(), "default", id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(task) {
			return task
		}
		if last == nil || !proto.Equal(task, last) {
			last, changed = task, time.Now()
		}
		if time.Since(changed) > taskWait {
			t.Fatalf("timed out waiting for task %s to be %s: %v", id, what, task)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func finished(task *pb.Task) bool {
	return !slices.Contains([]string{"pending", "running", "aborting"}, task.Status)
}

func hasStatus(st string) func(*pb.Task) bool {
	return func(task *pb.Task) bool { return task.Status == st }
}

func results(t *testing.T, task *pb.Task) map[string]any {
	t.Helper()
	out := map[string]any{}
	if len(task.ResultsJson) > 0 {
		if err := json.Unmarshal(task.ResultsJson, &out); err != nil {
			t.Fatalf("task %s results %q: %v", task.Id, task.ResultsJson, err)
		}
	}
	return out
}

func checkTask(t *testing.T, task *pb.Task, status, message string, want map[string]any) {
	t.Helper()
	if task.Status != status || task.Message != message {
		t.Errorf("task %s (%s): %s %q, want %s %q; results %s", task.Id, task.Action, task.Status, task.Message, status, message, task.ResultsJson)
	}
	if want != nil {
		if got := results(t, task); !reflect.DeepEqual(got, want) {
			t.Errorf("task %s (%s) results\n%v\nwant\n%v", task.Id, task.Action, got, want)
		}
	}
	if task.Started == 0 || task.Completed < task.Started {
		t.Errorf("task %s times: started %d, completed %d", task.Id, task.Started, task.Completed)
	}
}

func mysqlIdle(t *testing.T, c *client.Client, n int) {
	t.Helper()
	deploy(t, c, "mysql", "mysql", int32(n))
	waitSlow(t, c, "mysql idle", func(fs *pb.FullStatusResponse) bool {
		a := findApp(fs, "mysql")
		return a != nil && len(a.Units) == n && allIdle(fs)
	})
}

// A shell charm's actions: params, action-set's nested keys, action-log, output, action-fail
// and exit codes, as Juju reports them.
func TestShellCharmActions(t *testing.T) {
	c, _, dir := startController(t)
	mysqlIdle(t, c, 1)

	id := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "backup", ParamsJson: params(t, map[string]any{"target": "s3"})})[0]
	task := waitTask(t, c, id, "finished", finished)
	checkTask(t, task, "completed", "", map[string]any{
		"backup":      map[string]any{"target": "s3", "unit": "mysql/0"},
		"outfile":     "mysql.dump",
		"return-code": float64(0),
		"stdout":      "backing up mysql/0 to s3\n",
	})
	if len(task.Log) != 1 || task.Log[0].Message != "backing up to s3" {
		t.Errorf("task log: %v", task.Log)
	}
	if log := hookLog(t, dir, "mysql/0"); !seq(log, "start -", "action:backup -") {
		t.Errorf("mysql/0 hooks: %v", log)
	}

	ids := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "fail", ParamsJson: params(t, map[string]any{"message": "disk full"})})
	ids = append(ids, enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "fail", ParamsJson: params(t, map[string]any{"exit-code": 2})})...)
	ids = append(ids, enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "fail",
		ParamsJson: params(t, map[string]any{"exit-code": 3, "message": "said why"})})...)
	out := map[string]any{"stdout": "about to fail\n", "stderr": "failing on purpose\n"}
	with := func(rc int) map[string]any {
		m := map[string]any{"return-code": float64(rc)}
		for k, v := range out {
			m[k] = v
		}
		return m
	}
	checkTask(t, waitTask(t, c, ids[0], "finished", finished), "failed", "disk full", with(0))
	checkTask(t, waitTask(t, c, ids[1], "finished", finished), "failed", "exit status 2", with(2))
	// A non-zero exit wins over action-fail's message, as in Juju.
	checkTask(t, waitTask(t, c, ids[2], "finished", finished), "failed", "exit status 3", with(3))
	waitSlow(t, c, "mysql idle after its actions", allIdle)
}

// A param the action is not given has its schema's default, as Juju inserts it when the
// action is queued: the charm's action-get sees it.
func TestActionParamsGetSchemaDefaults(t *testing.T) {
	c, _, _ := startController(t)
	mysqlIdle(t, c, 1)
	id := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "backup"})[0]
	task := waitTask(t, c, id, "finished", finished)
	if got := results(t, task)["backup"]; !reflect.DeepEqual(got, map[string]any{"target": "local", "unit": "mysql/0"}) {
		t.Errorf("backup without params: %v", task)
	}
}

// juju exec runs in the unit's hook context (its environment, the hook tools) and, for a
// machine, in the machine agent; a non-zero exit is reported, not failed, as in Juju.
func TestExecOnUnitsAndMachines(t *testing.T) {
	c, _, _ := startController(t)
	mysqlIdle(t, c, 2)
	fs, err := c.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	machine := findUnit(fs, "mysql/0").Machine
	ids := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0", "mysql/1"},
		Command: `echo "$JUJU_UNIT_NAME $(is-leader) $(config-get fail-hook)x"; echo oops >&2; exit 3`})
	ids = append(ids, enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{machine}, Command: "echo on the machine; pwd >/dev/null"})...)
	leader := ""
	waitSlow(t, c, "a leader", func(fs *pb.FullStatusResponse) bool {
		for _, u := range findApp(fs, "mysql").GetUnits() {
			if u.GetLeader() {
				leader = u.GetName()
			}
		}
		return leader != ""
	})
	unit0 := waitTask(t, c, ids[0], "finished", finished)
	checkTask(t, unit0, "completed", "", map[string]any{"return-code": float64(3),
		"stdout": fmt.Sprintf("mysql/0 %s x\n", pyBool(leader == "mysql/0")), "stderr": "oops\n"})
	unit1 := waitTask(t, c, ids[1], "finished", finished)
	checkTask(t, unit1, "completed", "", map[string]any{"return-code": float64(3),
		"stdout": fmt.Sprintf("mysql/1 %s x\n", pyBool(leader == "mysql/1")), "stderr": "oops\n"})
	onMachine := waitTask(t, c, ids[2], "finished", finished)
	checkTask(t, onMachine, "completed", "", map[string]any{"return-code": float64(0), "stdout": "on the machine\n", "stderr": ""})
	if onMachine.Receiver != machine || unit0.Action != "juju-exec" {
		t.Errorf("tasks: %v %v", onMachine, unit0)
	}

	// The time limit kills the command: on a unit what it printed is kept (with the code of a
	// killed command, 0, as Juju reports it); on a machine there are no results.
	ids = enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0", machine}, Command: "echo started; sleep 300", ExecTimeoutSeconds: 1})
	task := waitTask(t, c, ids[0], "finished", finished)
	checkTask(t, task, "failed", "command cancelled", nil)
	if got := results(t, task); got["return-code"] != float64(0) || (got["stdout"] != nil && got["stdout"] != "started\n") {
		t.Errorf("the killed command's results: %v", got)
	}
	checkTask(t, waitTask(t, c, ids[1], "finished", finished), "failed", "command cancelled", map[string]any{})
}

// pyBool is how is-leader prints a boolean.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// juju cancel-task on a running action kills it (aborted); the unit goes on with its queue. A
// pending task is cancelled before it runs.
func TestCancelRunningAndPendingTasks(t *testing.T) {
	c, _, dir := startController(t)
	mysqlIdle(t, c, 1)
	long := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "sleep", ParamsJson: params(t, map[string]any{"seconds": 300})})[0]
	next := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "backup"})[0]
	skipped := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "backup"})[0]
	waitLog(t, dir, "mysql/0", "action:sleep start")
	waitSlow(t, c, "mysql/0 running its action", func(fs *pb.FullStatusResponse) bool {
		u := findUnit(fs, "mysql/0")
		return u.GetAgentStatus().GetStatus() == "executing" && u.GetAgentStatus().GetMessage() == "running action sleep"
	})
	if _, err := c.CancelTasks(context.Background(), "default", []string{skipped, long}); err != nil {
		t.Fatal(err)
	}
	checkTask(t, waitTask(t, c, long, "finished", finished), "aborted", "terminated", map[string]any{"return-code": float64(-1)})
	if task := waitTask(t, c, skipped, "finished", finished); task.Status != "cancelled" {
		t.Errorf("the pending task: %v", task)
	}
	checkTask(t, waitTask(t, c, next, "finished", finished), "completed", "", nil)
	if log := hookLog(t, dir, "mysql/0"); !seq(log, "action:sleep start", "action:backup -") || slices.Contains(log, "action:sleep end") ||
		strings.Count(strings.Join(log, "\n"), "action:backup") != 1 {
		t.Errorf("mysql/0 hooks: %v", log)
	}
	waitSlow(t, c, "mysql idle", allIdle)
}

// Actions run between hooks, never beside one: a hook the config change brings waits for the
// running action, and an action queued while a hook runs waits for the hook (and runs even
// when that hook fails, as in Juju).
func TestActionsAndHooksNeverOverlap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runControllerWith(t, dir, func(cfg *daemon.Config) { cfg.HookTimeout = 5 * time.Second })
	t.Cleanup(stop)
	mysqlIdle(t, c, 1)
	ctx := context.Background()

	id := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "sleep", ParamsJson: params(t, map[string]any{"seconds": 2})})[0]
	waitLog(t, dir, "mysql/0", "action:sleep start")
	if err := c.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "mysql", Values: map[string]string{"fail-hook": "no-such-hook"}}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, dir, "mysql/0", "action:sleep start", "action:sleep end", "config-changed -")
	log := hookLog(t, dir, "mysql/0")
	start := slices.Index(log, "action:sleep start")
	if log[start+1] != "action:sleep end" {
		t.Errorf("something ran during the action: %v", log)
	}
	checkTask(t, waitTask(t, c, id, "finished", finished), "completed", "", nil)

	// A hook that hangs until its time limit kills it: the action queued meanwhile waits.
	before := len(hookLog(t, dir, "mysql/0"))
	if err := c.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "mysql", Values: map[string]string{"hang-hook": "config-changed"}}); err != nil {
		t.Fatal(err)
	}
	waitLogFrom(t, dir, "mysql/0", before, "config-changed -")
	id = enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "backup"})[0]
	if task, err := c.GetTask(ctx, "default", id); err != nil || task.Status != "pending" {
		t.Errorf("the action beside a running hook: %v %v", task, err)
	}
	checkTask(t, waitTask(t, c, id, "finished", finished), "completed", "", nil)
	// The task is recorded finished before the agent says it is idle again: wait for both.
	inError := workload("mysql/0", "error", `hook failed: "config-changed"`)
	waitSlow(t, c, "mysql/0 in error, its agent idle after its action", func(fs *pb.FullStatusResponse) bool {
		return inError(fs) && findUnit(fs, "mysql/0").GetAgentStatus().GetStatus() == "idle"
	})
	if log := hookLog(t, dir, "mysql/0")[before:]; !seq(log, "config-changed -", "action:backup -") {
		t.Errorf("mysql/0 hooks: %v", log)
	}
}

// waitLogFrom is waitLog on the lines after the first from.
func waitLogFrom(t *testing.T, controllerDir, unit string, from int, want ...string) {
	t.Helper()
	deadline := time.Now().Add(taskWait)
	for {
		if log := hookLog(t, controllerDir, unit); len(log) > from && seq(log[from:], want...) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s hooks: %v; want after line %d %v", unit, hookLog(t, controllerDir, unit), from, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A task running when its agent stops is failed by the next agent, as Juju does: running an
// arbitrary command twice could do harm.
func TestRunningTaskFailsWhenAgentRestarts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runController(t, dir, nil)
	mysqlIdle(t, c, 1)
	fs, err := c.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	machine := findUnit(fs, "mysql/0").Machine
	ids := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "sleep", ParamsJson: params(t, map[string]any{"seconds": 300})})
	ids = append(ids, enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{machine}, Command: "sleep 300"})...)
	for _, id := range ids {
		waitTask(t, c, id, "running", hasStatus("running"))
	}
	stop()

	c, _, stop = runController(t, dir, nil)
	defer stop()
	checkTask(t, waitTask(t, c, ids[0], "finished", finished), "failed", "action terminated", nil)
	checkTask(t, waitTask(t, c, ids[1], "finished", finished), "failed", "action cancelled", nil)
	// The unit goes on with its queue.
	id := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"mysql/0"}, Action: "backup"})[0]
	checkTask(t, waitTask(t, c, id, "finished", finished), "completed", "", nil)
}

// waitSlow is waitFor that waits as long as status keeps changing (ops charms start Python
// for every hook; a loaded machine is slow): it gives up after 30 s without a change.
func waitSlow(t *testing.T, c *client.Client, what string, ok func(*pb.FullStatusResponse) bool) *pb.FullStatusResponse {
	t.Helper()
	var last *pb.FullStatusResponse
	changed := time.Now()
	for {
		fs, err := c.FullStatus(context.Background(), "default", nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok(fs) {
			return fs
		}
		fs.ControllerTime, fs.Revision = 0, 0
		if last == nil || !proto.Equal(fs, last) {
			last, changed = fs, time.Now()
		}
		if time.Since(changed) > 30*time.Second {
			t.Fatalf("timed out waiting for %s; status: %v", what, fs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// opsCharm packs testdata/opscharms/<name> with ops 2.20 as `make charms` does, or skips when
// this machine cannot run ops charms (under CI=true it fails instead).
func opsCharm(t *testing.T, name string) []byte {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	thirdparty := os.Getenv("JUJU_THIRDPARTY")
	if thirdparty == "" {
		thirdparty = filepath.Join(root, "..", "shared", "thirdparty")
	}
	opsDir := filepath.Join(thirdparty, "ops-2.20.0", "ops")
	var missing []string
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml").CombinedOutput(); err != nil {
		missing = append(missing, "/usr/bin/python3 with yaml (Debian python3-yaml): "+strings.TrimSpace(string(out))+" "+err.Error())
	}
	if _, err := os.Stat(filepath.Join(opsDir, "__init__.py")); err != nil {
		missing = append(missing, "ops 2.20.0 at "+opsDir+" (set JUJU_THIRDPARTY)")
	}
	if len(missing) > 0 {
		reason := "cannot run ops charms: missing " + strings.Join(missing, "; ")
		if os.Getenv("CI") == "true" {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	file := filepath.Join(t.TempDir(), name+".charm")
	if err := charmpack.Pack(filepath.Join(root, "testdata", "opscharms", name), opsDir, file); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An ops charm's actions through ops 2.20: event.params, set_results (nested, flattened to
// dotted keys by ops), event.log, event.fail, and an uncaught exception.
func TestOpsCharmActions(t *testing.T) {
	archive := opsCharm(t, "kvstore")
	c, _, _ := startController(t)
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", archive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "kvstore", CharmUrl: up.Url, NumUnits: 1,
		Base: &pb.Base{Name: "ubuntu", Channel: "24.04"}}); err != nil {
		t.Fatal(err)
	}
	fs := waitSlow(t, c, "kvstore active", func(fs *pb.FullStatusResponse) bool {
		return workload("kvstore/0", "active", "token=")(fs) && allIdle(fs)
	})
	msg := findUnit(fs, "kvstore/0").GetWorkloadStatus().GetMessage()
	token := msg[strings.Index(msg, "token=")+len("token="):]
	if i := strings.IndexByte(token, ','); i >= 0 {
		token = token[:i]
	}

	report := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"kvstore/0"}, Action: "report"})[0]
	fail := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"kvstore/0"}, Action: "report", ParamsJson: params(t, map[string]any{"fail": "not today"})})[0]
	crash := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"kvstore/0"}, Action: "report", ParamsJson: params(t, map[string]any{"crash": true})})[0]
	sleep := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"kvstore/0"}, Action: "sleep", ParamsJson: params(t, map[string]any{"seconds": 1.5})})[0]

	task := waitTask(t, c, report, "finished", finished)
	checkTask(t, task, "completed", "", map[string]any{
		"store":       map[string]any{"port": "7070", "token": token},
		"unit":        "kvstore/0",
		"return-code": float64(0),
		"stdout":      "reporting for kvstore/0\n",
	})
	if len(task.Log) != 1 || task.Log[0].Message != "reading the store" {
		t.Errorf("report's log: %v", task.Log)
	}
	checkTask(t, waitTask(t, c, fail, "finished", finished), "failed", "not today", map[string]any{"return-code": float64(0)})
	task = waitTask(t, c, crash, "finished", finished)
	got := results(t, task)
	if task.Status != "failed" || task.Message != "exit status 1" || got["return-code"] != float64(1) ||
		!strings.Contains(got["stderr"].(string), "Uncaught RuntimeError in charm code: crashed on request") {
		t.Errorf("an uncaught exception: %s %q %v", task.Status, task.Message, got)
	}
	task = waitTask(t, c, sleep, "finished", finished)
	checkTask(t, task, "completed", "", map[string]any{"slept": "1.5", "return-code": float64(0)})
	if len(task.Log) != 1 || task.Log[0].Message != "slept 0 of 1.5 seconds" {
		t.Errorf("sleep's log: %v", task.Log)
	}
	waitSlow(t, c, "kvstore idle and active after its actions", func(fs *pb.FullStatusResponse) bool {
		return workload("kvstore/0", "active", "token=")(fs) && allIdle(fs)
	})
}

// untilFile is a command that succeeds once path exists (another task creates it), and fails
// after a minute without it.
func untilFile(path string) string {
	return fmt.Sprintf(`for i in $(seq 1200); do [ -e %s ] && exit 0; sleep 0.05; done; exit 1`, path)
}

// execTask queues an exec command with Juju's parallel and execution group.
func execTask(t *testing.T, c *client.Client, receivers []string, command string, parallel bool, group string) []string {
	t.Helper()
	return enqueue(t, c, &pb.EnqueueRequest{Receivers: receivers, Command: command,
		Parallel: proto.Bool(parallel), ExecutionGroup: proto.String(group)})
}

// runsAfter checks that task b started once task a had finished.
func runsAfter(t *testing.T, a, b *pb.Task) {
	t.Helper()
	if b.Started < a.Completed {
		t.Errorf("task %s (on %s) started at %d, before task %s (on %s) completed at %d",
			b.Id, b.Receiver, b.Started, a.Id, a.Receiver, a.Completed)
	}
}

// juju exec on a machine, as Juju's machine actions worker runs it: parallel commands side by
// side; the commands of one execution group one after another, in the order they were queued,
// beside the others; commands that are not parallel one after another. A command cancelled
// while it waits for its lock never starts, and the group goes on.
func TestExecParallelAndExecutionGroupsOnAMachine(t *testing.T) {
	c, _, _ := startController(t)
	mysqlIdle(t, c, 1)
	fs, err := c.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	on := []string{findUnit(fs, "mysql/0").Machine}
	marks := sharedDir(t) // the commands write it as their machines' uids
	mark := func(name string) string { return filepath.Join(marks, name) }

	// Each waiting command can end only when a parallel command queued after it has run.
	first := execTask(t, c, on, untilFile(mark("g")), true, "g")[0]
	second := execTask(t, c, on, "echo second", true, "g")[0]
	serial := execTask(t, c, on, untilFile(mark("serial")), false, "")[0]
	serialNext := execTask(t, c, on, "echo serial", false, "")[0]
	execTask(t, c, on, "touch "+mark("g"), true, "")
	execTask(t, c, on, "touch "+mark("serial"), true, "")
	tasks := map[string]*pb.Task{}
	for _, id := range []string{first, second, serial, serialNext} {
		tasks[id] = waitTask(t, c, id, "finished", finished)
		checkTask(t, tasks[id], "completed", "", nil)
		if rc := results(t, tasks[id])["return-code"]; rc != float64(0) {
			t.Errorf("task %s: return code %v, want 0: it ran alone", id, rc)
		}
	}
	runsAfter(t, tasks[first], tasks[second])
	runsAfter(t, tasks[serial], tasks[serialNext])

	held := execTask(t, c, on, "sleep 300", true, "h")[0]
	waiting := execTask(t, c, on, "echo never", true, "h")[0]
	waitTask(t, c, held, "running", hasStatus("running"))
	if _, err := c.CancelTasks(context.Background(), "default", []string{waiting, held}); err != nil {
		t.Fatal(err)
	}
	if task := waitTask(t, c, waiting, "cancelled", finished); task.Status != "cancelled" || task.Started != 0 {
		t.Errorf("the task waiting for its lock: %v", task)
	}
	checkTask(t, waitTask(t, c, held, "finished", finished), "aborted", "command cancelled", nil)
	after := execTask(t, c, on, "echo after", true, "h")[0]
	checkTask(t, waitTask(t, c, after, "finished", finished), "completed", "", nil)
}

// On units, as Juju's uniter does: each unit runs one thing at a time; tasks of units of one
// machine run side by side when parallel (exec's default), one after another when they share
// an execution group, or when they are not parallel (the machine's lock).
func TestExecGroupsAcrossUnitsOfAMachine(t *testing.T) {
	c, _, _ := startController(t)
	mysqlIdle(t, c, 1)
	ctx := context.Background()
	fs, err := c.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	machine := findUnit(fs, "mysql/0").Machine
	if _, err := c.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "mysql", NumUnits: 1,
		Placement: []*pb.Placement{{Scope: "#", Directive: machine}}}); err != nil {
		t.Fatal(err)
	}
	fs = waitSlow(t, c, "two mysql units idle", func(fs *pb.FullStatusResponse) bool {
		return len(findApp(fs, "mysql").GetUnits()) == 2 && allIdle(fs)
	})
	if m := findUnit(fs, "mysql/1").Machine; m != machine {
		t.Fatalf("mysql/1 is on machine %s, not %s", m, machine)
	}
	units := []string{"mysql/0", "mysql/1"}

	// Side by side: each command waits for the other's mark.
	marks := sharedDir(t) // the commands write it as their machines' uids
	ids := enqueue(t, c, &pb.EnqueueRequest{Receivers: units,
		Command: fmt.Sprintf(`touch %[1]s/$$; for i in $(seq 1200); do [ $(ls %[1]s | wc -l) -ge 2 ] && exit 0; sleep 0.05; done; exit 1`, marks)})
	for _, id := range ids {
		task := waitTask(t, c, id, "finished", finished)
		checkTask(t, task, "completed", "", nil)
		if rc := results(t, task)["return-code"]; rc != float64(0) {
			t.Errorf("parallel task %s on %s: return code %v: it ran alone", id, task.Receiver, rc)
		}
	}

	// One after the other: the workload takes long enough that overlapping ones would show.
	for _, lock := range []struct {
		parallel bool
		group    string
	}{{true, "g"}, {false, ""}} {
		ids := execTask(t, c, units, "sleep 0.3", lock.parallel, lock.group)
		a, b := waitTask(t, c, ids[0], "finished", finished), waitTask(t, c, ids[1], "finished", finished)
		checkTask(t, a, "completed", "", nil)
		checkTask(t, b, "completed", "", nil)
		if b.Started < a.Started {
			a, b = b, a
		}
		runsAfter(t, a, b)
	}
}
