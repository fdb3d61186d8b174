package state_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

const dbMeta = "name: db\nsummary: db\nbases: [ubuntu@22.04]\n"

const dbActions = `backup:
  description: Back the database up.
  params:
    target:
      type: string
    compress:
      type: boolean
  required: [target]
  additionalProperties: false
snapshot:
  description: Take a snapshot.
  parallel: true
  execution-group: snaps
`

// deployDB deploys an application of a charm with actions.yaml and n units (deployed, on
// provisioned machines).
func deployDB(t *testing.T, uuid, name string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ch, err := st.AddCharm(ctx, uuid, zipOf(t, zf{name: "metadata.yaml", body: dbMeta}, zf{name: "actions.yaml", body: dbActions}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: name, CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return nil
	}
	return addUnits(t, uuid, name, n)
}

func enqueue(t *testing.T, uuid string, args state.EnqueueArgs) *state.OperationInfo {
	t.Helper()
	info, err := st.Enqueue(context.Background(), uuid, args)
	if err != nil {
		t.Fatalf("enqueue %+v: %v", args, err)
	}
	return info
}

func taskOf(t *testing.T, uuid, id string) *storepb.Task {
	t.Helper()
	task, err := st.Task(context.Background(), uuid, id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func queueIDs(t *testing.T, uuid, receiver string) []string {
	t.Helper()
	tasks, err := st.ReceiverTasks(context.Background(), uuid, receiver)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, task := range tasks {
		ids = append(ids, task.Id+":"+task.Status)
	}
	return ids
}

func operationIDs(ops []*state.OperationInfo) string {
	var out []string
	for _, op := range ops {
		var tasks []string
		for _, task := range op.Tasks {
			tasks = append(tasks, task.Id)
		}
		out = append(out, op.Operation.Id+"("+strings.Join(tasks, ",")+")"+op.Status)
	}
	return strings.Join(out, " ")
}

// Operations and tasks share one sequence per model, as in Juju 3.6: the first operation is 1,
// its tasks 2, 3; the next operation 4.
func TestEnqueueIDsShareOneSequence(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	units := deployDB(t, uuid, "db", 2)
	op := enqueue(t, uuid, state.EnqueueArgs{Receivers: units, Action: "backup", ParamsJSON: []byte(`{"target":"/srv"}`)})
	if op.Operation.Id != "1" || len(op.Tasks) != 2 || op.Tasks[0].Id != "2" || op.Tasks[1].Id != "3" {
		t.Fatalf("first operation %s with tasks %v", op.Operation.Id, op.Operation.TaskIds)
	}
	if op.Operation.Summary != "backup run on unit-db-0,unit-db-1" || op.Status != "pending" {
		t.Fatalf("summary %q status %q", op.Operation.Summary, op.Status)
	}
	task := taskOf(t, uuid, "3")
	if task.Receiver != "db/1" || task.Action != "backup" || task.Status != "pending" || task.Enqueued == 0 ||
		task.OperationId != "1" || string(task.ParamsJson) != `{"target":"/srv"}` {
		t.Fatalf("task 3 = %v", task)
	}
	snap := enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "snapshot"})
	if snap.Operation.Id != "4" || snap.Tasks[0].Id != "5" || !snap.Tasks[0].Parallel || snap.Tasks[0].ExecutionGroup != "snaps" {
		t.Fatalf("second operation %s: %v", snap.Operation.Id, snap.Tasks[0])
	}

	// exec: a machine and an application (its units), "juju-exec" with Juju's params.
	u0, _ := st.Unit(ctx, uuid, "db/0")
	ex := enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{u0.MachineId, "db"}, Command: "hostname"})
	if ex.Operation.Id != "6" || len(ex.Tasks) != 3 {
		t.Fatalf("exec operation %s tasks %d", ex.Operation.Id, len(ex.Tasks))
	}
	want := fmt.Sprintf("juju-exec run on machine-%s,unit-db-0,unit-db-1", u0.MachineId)
	if ex.Operation.Summary != want {
		t.Fatalf("exec summary %q, want %q", ex.Operation.Summary, want)
	}
	if ex.Tasks[0].Receiver != u0.MachineId || ex.Tasks[0].Action != "juju-exec" ||
		string(ex.Tasks[0].ParamsJson) != `{"command":"hostname","timeout":300000000000}` {
		t.Fatalf("exec task %v", ex.Tasks[0])
	}

	// app/leader resolves to the lease holder; the summary keeps what was asked.
	claim(t, uuid, "db/1", true, "db/1")
	lead := enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/leader"}, Action: "snapshot"})
	if lead.Tasks[0].Receiver != "db/1" || lead.Operation.Summary != "snapshot run on db/leader" {
		t.Fatalf("leader task %v summary %q", lead.Tasks[0], lead.Operation.Summary)
	}

	// The queue is one range read per receiver, oldest first.
	if got := queueIDs(t, uuid, "db/0"); !reflect.DeepEqual(got, []string{"2:pending", "5:pending", "8:pending"}) {
		t.Fatalf("db/0 queue %v", got)
	}
	if got := queueIDs(t, uuid, u0.MachineId); !reflect.DeepEqual(got, []string{"7:pending"}) {
		t.Fatalf("machine queue %v", got)
	}
	audit(t, uuid)
}

// A task's parallel and execution group are Juju's: for exec parallel and no group unless the
// request says otherwise; for an action the charm's actions.yaml, which the request may
// override (as Juju's API allows).
func TestEnqueueParallelAndExecutionGroup(t *testing.T) {
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 1)
	tests := []struct {
		args     state.EnqueueArgs
		parallel bool
		group    string
	}{
		{state.EnqueueArgs{Command: "ls"}, true, ""},
		{state.EnqueueArgs{Command: "ls", Parallel: ptr(false)}, false, ""},
		{state.EnqueueArgs{Command: "ls", Parallel: ptr(true), ExecutionGroup: ptr("db-ops")}, true, "db-ops"},
		{state.EnqueueArgs{Action: "backup", ParamsJSON: []byte(`{"target":"x"}`)}, false, ""},
		{state.EnqueueArgs{Action: "snapshot"}, true, "snaps"},
		{state.EnqueueArgs{Action: "snapshot", Parallel: ptr(false), ExecutionGroup: ptr("")}, false, ""},
	}
	for _, tt := range tests {
		tt.args.Receivers = []string{"db/0"}
		task := enqueue(t, uuid, tt.args).Tasks[0]
		if stored := taskOf(t, uuid, task.Id); stored.Parallel != tt.parallel || stored.ExecutionGroup != tt.group {
			t.Errorf("Enqueue(%+v): task parallel %v group %q, want %v %q", tt.args, stored.Parallel, stored.ExecutionGroup, tt.parallel, tt.group)
		}
	}
	queue, err := st.ReceiverTasks(context.Background(), uuid, "db/0")
	if err != nil || len(queue) != len(tests) || queue[2].ExecutionGroup != "db-ops" || queue[1].Parallel {
		t.Fatalf("the queue carries them too: %v %v", queue, err)
	}
}

func ptr[T any](v T) *T { return &v }

// Bad input changes nothing: every receiver, the action and its params are checked before the
// one transaction; a refused enqueue takes no id.
func TestEnqueueRefusalsWriteNothing(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 2)
	if _, err := st.DestroyUnit(ctx, uuid, "db/1", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args     state.EnqueueArgs
		sentinel error
		want     string
	}{
		{state.EnqueueArgs{Receivers: []string{"db/0", "db/9"}, Action: "backup", ParamsJSON: []byte(`{"target":"x"}`)},
			apierr.NotFound, `unit "db/9" not found (not found)`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "nope"},
			apierr.NotFound, `action "nope" not defined for unit "db/0" (not found)`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "backup"},
			apierr.NotValid, `validation failed for action "backup": missing property 'target'`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "backup", ParamsJSON: []byte(`{"target":1}`)},
			apierr.NotValid, `validation failed for action "backup": at /target: got number, want string`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "backup", ParamsJSON: []byte(`[1]`)},
			apierr.NotValid, `params are not a JSON object`},
		{state.EnqueueArgs{Receivers: []string{"db/0", "db/1"}, Action: "snapshot"},
			apierr.NotAlive, `unit "db/1" is dying`},
		{state.EnqueueArgs{Receivers: []string{"db/leader"}, Action: "snapshot"},
			apierr.NotFound, `could not determine leader for "db"`},
		{state.EnqueueArgs{Receivers: []string{"nope/leader"}, Action: "snapshot"},
			apierr.NotFound, `application "nope" not found (not found)`},
		{state.EnqueueArgs{Receivers: []string{"db/0", "db/0"}, Action: "snapshot"},
			apierr.NotValid, `receiver "db/0" given more than once`},
		{state.EnqueueArgs{Receivers: []string{"db"}, Action: "snapshot"},
			apierr.NotValid, `invalid unit name "db"`},
		{state.EnqueueArgs{Receivers: []string{"0"}, Action: "snapshot"},
			apierr.NotValid, `invalid unit name "0"`},
		{state.EnqueueArgs{Receivers: []string{"42"}, Command: "ls"},
			apierr.NotFound, `machine "42" not found (not found)`},
		{state.EnqueueArgs{Receivers: []string{"nope"}, Command: "ls"},
			apierr.NotFound, `application "nope" not found (not found)`},
		{state.EnqueueArgs{Receivers: []string{"Bad!"}, Command: "ls"},
			apierr.NotValid, `invalid machine, application or unit "Bad!"`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}, Command: "ls", ParamsJSON: []byte(`{"a":1}`)},
			apierr.NotValid, `exec takes no params`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}},
			apierr.NotValid, `no action specified`},
		{state.EnqueueArgs{Action: "snapshot"},
			apierr.NotValid, `no receivers specified`},
		{state.EnqueueArgs{Receivers: []string{"db/0"}, Command: "ls", ExecutionGroup: ptr(strings.Repeat("g", 101))},
			apierr.NotValid, `execution group is longer than 100 bytes`},
	}
	for _, tt := range tests {
		_, err := st.Enqueue(ctx, uuid, tt.args)
		if !errors.Is(err, tt.sentinel) || err.Error() != tt.want {
			t.Errorf("Enqueue(%+v) = %v, want %q", tt.args, err, tt.want)
		}
	}
	ops, _, err := st.ListOperations(ctx, uuid, state.OperationFilter{})
	if err != nil || len(ops) != 0 {
		t.Fatalf("operations after refusals: %v %v", ops, err)
	}
	if got := queueIDs(t, uuid, "db/0"); len(got) != 0 {
		t.Fatalf("queue after refusals: %v", got)
	}
	if op := enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "snapshot"}); op.Operation.Id != "1" {
		t.Fatalf("first operation after refusals is %s", op.Operation.Id)
	}
}

// pending → running → completed, with times, log and results; only the receiver may move
// its tasks, and only forwards. Everything is in the store: a fresh State sees it all.
func TestTaskLifecycle(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 2)
	op := enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0", "db/1"}, Action: "snapshot"})

	if _, err := st.StartTask(ctx, uuid, "db/1", "2"); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("db/1 starting db/0's task: %v", err)
	}
	if _, err := st.StartTask(ctx, uuid, "db/0", "99"); !errors.Is(err, apierr.NotFound) || err.Error() != `action "99" not found` {
		t.Fatalf("starting an unknown task: %v", err)
	}
	running, err := st.StartTask(ctx, uuid, "db/0", "2")
	if err != nil || running.Status != "running" || running.Started == 0 {
		t.Fatalf("start: %v %v", running, err)
	}
	if _, err := st.StartTask(ctx, uuid, "db/0", "2"); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("starting a running task: %v", err)
	}
	if got := queueIDs(t, uuid, "db/0"); !reflect.DeepEqual(got, []string{"2:running"}) {
		t.Fatalf("queue %v", got)
	}
	info, err := st.Operation(ctx, uuid, op.Operation.Id)
	if err != nil || info.Status != "running" || info.Started != running.Started || info.Completed != 0 {
		t.Fatalf("operation while running: %+v %v", info, err)
	}
	for _, msg := range []string{"one", "two"} {
		if err := st.LogTask(ctx, uuid, "db/0", "2", msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishTask(ctx, uuid, "db/0", "2", state.TaskResult{Status: "done"}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("finishing as done: %v", err)
	}
	if err := st.FinishTask(ctx, uuid, "db/0", "2", state.TaskResult{Status: "completed", ResultsJSON: []byte(`[]`)}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("results not an object: %v", err)
	}
	results := []byte(`{"return-code":0,"stdout":"ok\n"}`)
	if err := st.FinishTask(ctx, uuid, "db/1", "2", state.TaskResult{Status: "completed"}); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("db/1 finishing db/0's task: %v", err)
	}
	if err := st.FinishTask(ctx, uuid, "db/0", "2", state.TaskResult{Status: "completed", ResultsJSON: results}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishTask(ctx, uuid, "db/0", "2", state.TaskResult{Status: "failed"}); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("finishing twice: %v", err)
	}
	if err := st.LogTask(ctx, uuid, "db/0", "2", "late"); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("logging to a finished task: %v", err)
	}
	if got := queueIDs(t, uuid, "db/0"); len(got) != 0 {
		t.Fatalf("queue after finishing %v", got)
	}

	fresh := state.New(st.Client()) // as after a controller restart
	done, err := fresh.Task(ctx, uuid, "2")
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != "completed" || done.Completed < done.Started || string(done.ResultsJson) != string(results) ||
		len(done.Log) != 2 || done.Log[0].Message != "one" || done.Log[1].Message != "two" || done.Log[0].Time == 0 {
		t.Fatalf("finished task %v", done)
	}
	info, err = fresh.Operation(ctx, uuid, "1")
	if err != nil || info.Status != "running" || len(info.Tasks) != 2 {
		t.Fatalf("operation with one task left: %+v %v", info, err)
	}
	if _, err := fresh.StartTask(ctx, uuid, "db/1", "3"); err != nil {
		t.Fatal(err)
	}
	if err := fresh.FinishTask(ctx, uuid, "db/1", "3", state.TaskResult{Status: "failed", Message: "boom"}); err != nil {
		t.Fatal(err)
	}
	info, err = fresh.Operation(ctx, uuid, "1")
	if err != nil || info.Status != "failed" || info.Completed != taskOf(t, uuid, "3").Completed {
		t.Fatalf("finished operation: %+v %v", info, err)
	}
	if _, err := fresh.Operation(ctx, uuid, "2"); !errors.Is(err, apierr.NotFound) || err.Error() != "operation 2 not found" {
		t.Fatalf("a task id is no operation: %v", err)
	}
	audit(t, uuid)
}

// cancel-task: pending → cancelled at once; running → aborting, until its agent finishes it
// as aborted; finished tasks stay as they are; an unknown id changes nothing.
func TestCancelTasks(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 1)
	for range 3 {
		enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "snapshot"})
	}
	// Tasks 2, 4, 6: 2 completed, 4 running, 6 pending.
	if _, err := st.StartTask(ctx, uuid, "db/0", "2"); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishTask(ctx, uuid, "db/0", "2", state.TaskResult{Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartTask(ctx, uuid, "db/0", "4"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CancelTasks(ctx, uuid, []string{"6", "77"}); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("cancel with an unknown id: %v", err)
	}
	if taskOf(t, uuid, "6").Status != "pending" {
		t.Fatal("a refused cancel changed a task")
	}
	got, err := st.CancelTasks(ctx, uuid, []string{"2", "4", "6", "6"})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, task := range got {
		statuses = append(statuses, task.Id+":"+task.Status)
	}
	if strings.Join(statuses, " ") != "2:completed 4:aborting 6:cancelled" {
		t.Fatalf("after cancel: %v", statuses)
	}
	cancelled := taskOf(t, uuid, "6")
	if cancelled.Message != "action cancelled via the API" || cancelled.Completed == 0 {
		t.Fatalf("cancelled task %v", cancelled)
	}
	if _, err := st.StartTask(ctx, uuid, "db/0", "6"); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("starting a cancelled task: %v", err)
	}
	if q := queueIDs(t, uuid, "db/0"); !reflect.DeepEqual(q, []string{"4:aborting"}) {
		t.Fatalf("queue %v", q)
	}
	if err := st.FinishTask(ctx, uuid, "db/0", "4", state.TaskResult{Status: "aborted"}); err != nil {
		t.Fatal(err)
	}
	ops, _, err := st.ListOperations(ctx, uuid, state.OperationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := operationIDs(ops); got != "5(6)cancelled 3(4)aborted 1(2)completed" {
		t.Fatalf("operations %s", got)
	}
	audit(t, uuid)
}

// L-U3: the transaction that removes a unit cancels its unfinished tasks, as Juju does ("unit
// removed"); a queue longer than one transaction can take is finished by the cleanup (L-G4).
func TestUnitRemovalCancelsItsTasks_LU3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 2)
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0", "db/1"}, Action: "snapshot"}) // 1: 2, 3
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0"}, Action: "snapshot"})         // 4: 5
	if _, err := st.StartTask(ctx, uuid, "db/0", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DestroyUnit(ctx, uuid, "db/0", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, "db/0")
	for _, id := range []string{"2", "5"} {
		task := taskOf(t, uuid, id)
		if task.Status != "cancelled" || task.Message != "unit removed" || task.Completed == 0 {
			t.Fatalf("task %s after its unit went: %v", id, task)
		}
	}
	if taskOf(t, uuid, "3").Status != "pending" {
		t.Fatal("another unit's task was touched")
	}
	// One transaction: the unit's deletion and the tasks' change share a revision.
	resp, err := st.Client().Get(ctx, state.ModelPrefix(uuid)+"tasks/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	revs := map[string]int64{}
	for _, kv := range resp.Kvs {
		revs[strings.TrimLeft(strings.TrimPrefix(string(kv.Key), state.ModelPrefix(uuid)+"tasks/"), "0")] = kv.ModRevision
	}
	if revs["2"] != revs["5"] {
		t.Fatalf("tasks cancelled in different transactions: %v", revs)
	}
	if q := queueIDs(t, uuid, "db/0"); len(q) != 0 {
		t.Fatalf("removed unit's queue %v", q)
	}

	// db/1 with more queued tasks than one removal transaction takes.
	const n = 40
	for range n {
		enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/1"}, Action: "snapshot"})
	}
	if _, err := st.DestroyUnit(ctx, uuid, "db/1", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, "db/1")
	cleanups, err := st.Cleanups(ctx, uuid)
	if err != nil || len(cleanups) != 1 || cleanups[0].Doc.Kind != state.CleanupReceiverTasks || cleanups[0].Doc.Receiver != "db/1" {
		t.Fatalf("cleanups %v %v", cleanups, err)
	}
	if err := st.RunCleanup(ctx, uuid, cleanups[0]); err != nil {
		t.Fatal(err)
	}
	if q := queueIDs(t, uuid, "db/1"); len(q) != 0 {
		t.Fatalf("queue after the cleanup: %v", q)
	}
	ops, _, err := st.ListOperations(ctx, uuid, state.OperationFilter{Statuses: []string{"pending", "running"}})
	if err != nil || len(ops) != 0 {
		t.Fatalf("unfinished operations after both units went: %s %v", operationIDs(ops), err)
	}
	if _, err := st.Enqueue(ctx, uuid, state.EnqueueArgs{Receivers: []string{"db/1"}, Action: "snapshot"}); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("enqueue on a removed unit: %v", err)
	}
	audit(t, uuid)
}

// juju operations: receiver filters are one union, actions and statuses narrow; newest first,
// with offset, limit and truncation; only matching tasks are listed.
func TestListOperationsFilters(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 2)
	deployDB(t, uuid, "cache", 1)
	u, _ := st.Unit(ctx, uuid, "cache/0")
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/0", "db/1"}, Action: "snapshot"}) // 1: 2, 3
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"cache/0"}, Action: "snapshot"})      // 4: 5
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{"db/1"}, Action: "backup", ParamsJSON: []byte(`{"target":"t"}`)})
	enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{u.MachineId}, Command: "ls"}) // 8: 9
	if _, err := st.StartTask(ctx, uuid, "cache/0", "5"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		f    state.OperationFilter
		want string
	}{
		{state.OperationFilter{}, "8(9)pending 6(7)pending 4(5)running 1(2,3)pending"},
		{state.OperationFilter{Units: []string{"db/1"}}, "6(7)pending 1(3)pending"},
		{state.OperationFilter{Applications: []string{"cache"}, Units: []string{"db/0"}}, "4(5)running 1(2)pending"},
		{state.OperationFilter{Machines: []string{u.MachineId}}, "8(9)pending"},
		{state.OperationFilter{Actions: []string{"backup", "juju-exec"}}, "8(9)pending 6(7)pending"},
		{state.OperationFilter{Statuses: []string{"running"}}, "4(5)running"},
		{state.OperationFilter{Applications: []string{"db"}, Actions: []string{"snapshot"}}, "1(2,3)pending"},
		{state.OperationFilter{Offset: 1, Limit: 2}, "6(7)pending 4(5)running"},
		{state.OperationFilter{Offset: 4}, ""},
	}
	for _, tt := range tests {
		ops, _, err := st.ListOperations(ctx, uuid, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := operationIDs(ops); got != tt.want {
			t.Errorf("ListOperations(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
	_, truncated, _ := st.ListOperations(ctx, uuid, state.OperationFilter{Limit: 3})
	_, whole, _ := st.ListOperations(ctx, uuid, state.OperationFilter{Limit: 4})
	if !truncated || whole {
		t.Fatalf("truncated %v / %v", truncated, whole)
	}
}

// juju actions: the application's charm's actions, sorted, with their JSON schemas.
func TestApplicationActions(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 0)
	acts, err := st.ApplicationActions(ctx, uuid, "db")
	if err != nil || len(acts) != 2 || acts[0].Name != "backup" || acts[1].Name != "snapshot" {
		t.Fatalf("actions %v %v", acts, err)
	}
	schema, _ := json.Marshal(acts[0].Params)
	if !strings.Contains(string(schema), `"required":["target"]`) || acts[0].Description != "Back the database up." {
		t.Fatalf("backup schema %s", schema)
	}
	if !acts[1].Parallel || acts[1].ExecutionGroup != "snaps" {
		t.Fatalf("snapshot %+v", acts[1])
	}
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	if acts, err := st.ApplicationActions(ctx, uuid, "wordpress"); err != nil || len(acts) != 0 {
		t.Fatalf("a charm without actions: %v %v", acts, err)
	}
	if _, err := st.ApplicationActions(ctx, uuid, "nope"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unknown application: %v", err)
	}
}

// Agents watch kind "tasks" with their receiver: machine 0's queue is not its container's, unit
// db/1's not db/12's; events name the receiver. Kind "task" is one task document.
func TestWatchTaskKinds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	p := state.ModelPrefix(uuid)
	hub := st.NewHub(ctx)
	tests := []struct {
		kind, id    string
		other, mine string
	}{
		{state.KindTasks, "0", "taskqueue/machine-0-lxd-1/00000000000000000002", "taskqueue/machine-0/00000000000000000003"},
		{state.KindTasks, "0/lxd/1", "taskqueue/machine-0/00000000000000000002", "taskqueue/machine-0-lxd-1/00000000000000000003"},
		{state.KindTasks, "db/1", "taskqueue/unit-db-12/00000000000000000002", "taskqueue/unit-db-1/00000000000000000003"},
		{state.KindTasks, "my-db/1", "taskqueue/unit-my-db-12/00000000000000000002", "taskqueue/unit-my-db-1/00000000000000000003"},
		{state.KindTask, "2", "tasks/00000000000000000020", "tasks/00000000000000000002"},
	}
	for _, tt := range tests {
		key, err := state.KeyPrefix(uuid, tt.kind, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		events, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: key}})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{tt.other, tt.mine} {
			if _, err := st.Client().Put(ctx, p+k, "x"); err != nil {
				t.Fatal(err)
			}
		}
		ev, ok := firstEvent(events)
		if !ok {
			t.Fatalf("watching %s %q: no event", tt.kind, tt.id)
		}
		if ev.Kind != tt.kind || ev.ID != tt.id {
			t.Errorf("watching %s %q: first event %+v", tt.kind, tt.id, ev)
		}
	}
	// A whole-model watch (status, wait-for) does not wake for tasks.
	whole, err := state.KeyPrefix(uuid, state.KindModel, "")
	if err != nil {
		t.Fatal(err)
	}
	events, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: whole}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tasks/00000000000000000009", "taskqueue/unit-db-1/00000000000000000009", "units/db/1"} {
		if _, err := st.Client().Put(ctx, p+k, "x"); err != nil {
			t.Fatal(err)
		}
	}
	ev, ok := firstEvent(events)
	if !ok {
		t.Fatal("whole-model watch: no event")
	}
	if ev.Kind != state.KindUnit {
		t.Errorf("whole-model watch: first event %+v", ev)
	}
	for _, bad := range []struct{ kind, id string }{
		{state.KindTasks, "db"}, {state.KindTasks, "db/"}, {state.KindTask, "x"}, {state.KindTask, "02"}, {state.KindTask, ""},
	} {
		if _, err := state.KeyPrefix(uuid, bad.kind, bad.id); !errors.Is(err, apierr.NotValid) {
			t.Errorf("KeyPrefix(%s, %q) = %v", bad.kind, bad.id, err)
		}
	}
}

// A removed machine's exec tasks go with it.
func TestMachineRemovalCancelsItsTasks(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	op := enqueue(t, uuid, state.EnqueueArgs{Receivers: []string{id}, Command: "uptime"})
	if _, err := st.DestroyMachine(ctx, uuid, id, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureMachineDead(ctx, uuid, id); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveMachine(ctx, uuid, id); err != nil {
		t.Fatal(err)
	}
	task := taskOf(t, uuid, op.Tasks[0].Id)
	if task.Status != "cancelled" || task.Message != "machine removed" {
		t.Fatalf("task after its machine went: %v", task)
	}
}

// One operation is one transaction: more receivers than it can hold are refused whole.
func TestEnqueueTooManyReceivers_LG3(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 0)
	// Alive units are receivers enough; added in two calls (deploy's own bound).
	for _, n := range []int{state.MaxReceivers, 1} {
		if _, err := st.AddUnits(ctx, uuid, "db", n, nil); err != nil {
			t.Fatal(err)
		}
	}
	var units []string
	for i := range state.MaxReceivers + 1 {
		units = append(units, fmt.Sprintf("db/%d", i))
	}
	want := fmt.Sprintf("cannot run on %d receivers at once: at most %d per operation", state.MaxReceivers+1, state.MaxReceivers)
	for _, args := range []state.EnqueueArgs{
		{Receivers: units, Action: "snapshot"},
		{Receivers: []string{"db"}, Command: "ls"},
	} {
		if _, err := st.Enqueue(ctx, uuid, args); !errors.Is(err, apierr.NotValid) || err.Error() != want {
			t.Errorf("Enqueue(%d receivers) = %v", len(args.Receivers), err)
		}
	}
	op := enqueue(t, uuid, state.EnqueueArgs{Receivers: units[:state.MaxReceivers], Action: "snapshot"})
	if len(op.Tasks) != state.MaxReceivers || op.Operation.Id != "1" {
		t.Fatalf("operation %s with %d tasks", op.Operation.Id, len(op.Tasks))
	}
}
