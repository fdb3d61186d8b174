package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
)

const workerMeta = "name: worker\nsummary: worker\nbases: [ubuntu@22.04]\n"

const workerActions = `work:
  description: Do some work.
  params:
    steps:
      type: integer
      minimum: 1
  required: [steps]
`

// deployWorker deploys a charm with actions and n units, and returns a client acting as each
// unit's agent.
func deployWorker(t *testing.T, env *workloadEnv, n int32) []*client.Client {
	t.Helper()
	ctx := context.Background()
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": workerMeta, "actions.yaml": workerActions}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := env.admin.Deploy(ctx, &pb.DeployRequest{
		Model: "default", Application: "worker", CharmUrl: up.Url, Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, NumUnits: n,
	})
	if err != nil {
		t.Fatal(err)
	}
	var agents []*client.Client
	for _, u := range resp.Units {
		agents = append(agents, env.unitAgent(t, u))
	}
	return agents
}

// machineAgent gives a machine a credential and returns a client acting as its agent.
func (e *workloadEnv) machineAgent(t *testing.T, id string) *client.Client {
	t.Helper()
	password := "password-of-machine-" + id
	if err := e.st.SetProvisioned(context.Background(), e.model, id, state.Instance{ID: "i-" + id}, state.HashPassword(password)); err != nil {
		t.Fatal(err)
	}
	return e.dial(t, "machine-"+id, password, e.model)
}

// A run from the user's side and the agent's: the watch streams each change until the task
// finishes, and the operation follows its task.
func TestRunThroughTheAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := startWorkloadEnv(t, false)
	agents := deployWorker(t, env, 1)
	agent := agents[0]

	specs, err := env.admin.ApplicationActions(ctx, "default", "worker")
	if err != nil || len(specs) != 1 || specs[0].Name != "work" || !strings.Contains(string(specs[0].SchemaJson), `"minimum":1`) {
		t.Fatalf("actions %v %v", specs, err)
	}
	op, err := env.admin.Enqueue(ctx, &pb.EnqueueRequest{Model: "default", Receivers: []string{"worker/0"}, Action: "work", ParamsJson: []byte(`{"steps":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if op.Id != "1" || op.Status != "pending" || len(op.Tasks) != 1 || op.Tasks[0].Id != "2" || op.Summary != "work run on unit-worker-0" {
		t.Fatalf("operation %v", op)
	}

	seen := make(chan *pb.Task, 16)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- env.admin.WatchTasks(ctx, "default", []string{"2"}, func(task *pb.Task) error {
			seen <- task
			return nil
		})
	}()
	next := func(want string) *pb.Task {
		t.Helper()
		select {
		case task := <-seen:
			if task.Status != want {
				t.Fatalf("watch: task %s is %s, want %s", task.Id, task.Status, want)
			}
			return task
		case <-ctx.Done():
			t.Fatalf("watch: no %s task", want)
		}
		return nil
	}
	next("pending")

	queue, err := agent.ReceiverTasks(ctx, env.model, "worker/0")
	if err != nil || len(queue) != 1 || queue[0].Id != "2" || string(queue[0].ParamsJson) != `{"steps":2}` {
		t.Fatalf("queue %v %v", queue, err)
	}
	if _, err := agent.StartTask(ctx, env.model, "worker/0", "2"); err != nil {
		t.Fatal(err)
	}
	next("running")
	if err := agent.LogTask(ctx, env.model, "worker/0", "2", "step 1"); err != nil {
		t.Fatal(err)
	}
	if logged := next("running"); len(logged.Log) != 1 || logged.Log[0].Message != "step 1" {
		t.Fatalf("logged task %v", logged)
	}
	if err := agent.FinishTask(ctx, env.model, "worker/0", "2", "completed", "", []byte(`{"return-code":0,"done":"yes"}`)); err != nil {
		t.Fatal(err)
	}
	if done := next("completed"); string(done.ResultsJson) != `{"return-code":0,"done":"yes"}` {
		t.Fatalf("finished task %v", done)
	}
	if err := <-watchDone; err != nil {
		t.Fatalf("watch ended with %v", err)
	}
	// A watch of finished tasks sends them once and ends.
	var again []string
	if err := env.admin.WatchTasks(ctx, "default", []string{"2", "2"}, func(task *pb.Task) error {
		again = append(again, task.Id+":"+task.Status)
		return nil
	}); err != nil || strings.Join(again, " ") != "2:completed" {
		t.Fatalf("watching a finished task: %v %v", again, err)
	}

	got, err := env.admin.GetOperation(ctx, "default", "1")
	if err != nil || got.Status != "completed" || got.Completed == 0 || got.Started == 0 || len(got.Tasks[0].Log) != 1 {
		t.Fatalf("operation %v %v", got, err)
	}
	list, err := env.admin.ListOperations(ctx, &pb.ListOperationsRequest{Model: "default", Units: []string{"worker/0"}})
	if err != nil || len(list.Operations) != 1 || list.Operations[0].Tasks[0].ResultsJson != nil {
		t.Fatalf("operations %v %v", list, err)
	}
	task, err := env.admin.GetTask(ctx, "default", "2")
	if err != nil || task.Status != "completed" {
		t.Fatalf("task %v %v", task, err)
	}
}

// What the CLI prints after "ERROR " for a receiver or an action that does not exist keeps
// Juju's "(not found)", which scripts (jubilant) look for; nothing is queued.
func TestEnqueueErrorsThroughTheAPI(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	deployWorker(t, env, 1)
	tests := []struct {
		req      *pb.EnqueueRequest
		sentinel error
		want     string
	}{
		{&pb.EnqueueRequest{Receivers: []string{"worker/9"}, Action: "work", ParamsJson: []byte(`{"steps":1}`)},
			apierr.NotFound, `unit "worker/9" not found (not found)`},
		{&pb.EnqueueRequest{Receivers: []string{"worker/0"}, Action: "play"},
			apierr.NotFound, `action "play" not defined for unit "worker/0" (not found)`},
		{&pb.EnqueueRequest{Receivers: []string{"worker/0"}, Action: "work", ParamsJson: []byte(`{"steps":0}`)},
			apierr.NotValid, `validation failed for action "work": at /steps: minimum: got 0, want 1`},
		{&pb.EnqueueRequest{Receivers: []string{"worker/0"}, Command: "ls", ExecTimeoutSeconds: -1},
			apierr.NotValid, `exec timeout -1s is negative`},
	}
	for _, tt := range tests {
		tt.req.Model = "default"
		_, err := env.admin.Enqueue(ctx, tt.req)
		if !errors.Is(err, tt.sentinel) || err.Error() != tt.want {
			t.Errorf("Enqueue(%v) = %v, want %q", tt.req, err, tt.want)
		}
	}
	list, err := env.admin.ListOperations(ctx, &pb.ListOperationsRequest{Model: "default"})
	if err != nil || len(list.Operations) != 0 {
		t.Fatalf("operations after refusals: %v %v", list, err)
	}
	if _, err := env.admin.GetTask(ctx, "default", "2"); !errors.Is(err, apierr.NotFound) || err.Error() != `action "2" not found` {
		t.Fatalf("unknown task: %v", err)
	}
}

// Only a receiver's own agent moves its tasks: not another unit's agent, not the machine
// agent hosting the unit, not the admin; and agents cannot use the user's ActionService.
func TestTaskAuthorization(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := startWorkloadEnv(t, false)
	agents := deployWorker(t, env, 2)
	mine, other := agents[0], agents[1]
	u0, err := env.st.Unit(ctx, env.model, "worker/0")
	if err != nil {
		t.Fatal(err)
	}
	machine := env.machineAgent(t, u0.MachineId)
	if _, err := env.admin.Enqueue(ctx, &pb.EnqueueRequest{Model: "default", Receivers: []string{"worker/0"}, Action: "work", ParamsJson: []byte(`{"steps":1}`)}); err != nil {
		t.Fatal(err)
	}
	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, apierr.PermissionDenied) {
			t.Errorf("%s: %v, want permission denied", what, err)
		}
	}
	// Another unit's agent, naming my unit or itself.
	_, err = other.ReceiverTasks(ctx, env.model, "worker/0")
	denied("other unit lists my queue", err)
	_, err = other.StartTask(ctx, env.model, "worker/0", "2")
	denied("other unit starts my task as me", err)
	_, err = other.StartTask(ctx, env.model, "worker/1", "2")
	denied("other unit starts my task as itself", err)
	denied("other unit logs to my task", other.LogTask(ctx, env.model, "worker/1", "2", "x"))
	denied("other unit finishes my task", other.FinishTask(ctx, env.model, "worker/1", "2", "completed", "", nil))
	// The machine agent hosting my unit.
	_, err = machine.ReceiverTasks(ctx, env.model, "worker/0")
	denied("machine agent lists my unit's queue", err)
	_, err = machine.StartTask(ctx, env.model, "worker/0", "2")
	denied("machine agent starts my unit's task", err)
	// The admin user.
	_, err = env.admin.ReceiverTasks(ctx, env.model, "worker/0")
	denied("admin lists a queue", err)
	_, err = env.admin.StartTask(ctx, env.model, "worker/0", "2")
	denied("admin starts a task", err)
	// Agents and the user API.
	_, err = mine.Enqueue(ctx, &pb.EnqueueRequest{Model: env.model, Receivers: []string{"worker/0"}, Action: "work"})
	denied("unit agent enqueues", err)
	_, err = mine.GetTask(ctx, env.model, "2")
	denied("unit agent reads a task through ActionService", err)
	// Watching queues: only one's own.
	for name, c := range map[string]*client.Client{"other unit": other, "machine agent": machine} {
		w, err := c.Watch(ctx, &pb.WatchRequest{Model: env.model, Targets: []*pb.WatchTarget{{Kind: state.KindTasks, Id: "worker/0"}}})
		if err == nil {
			_, err = w.Next()
			w.Close()
		}
		denied(name+" watches my queue", err)
	}

	// My own agent does: it learns of cancel-task through its queue watch.
	w, err := mine.Watch(ctx, &pb.WatchRequest{Model: env.model, Targets: []*pb.WatchTarget{{Kind: state.KindTasks, Id: "worker/0"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := mine.StartTask(ctx, env.model, "worker/0", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.StartTask(ctx, env.model, "worker/0", "2"); !errors.Is(err, apierr.NotAlive) {
		t.Fatalf("starting a running task: %v", err)
	}
	cancelled, err := env.admin.CancelTasks(ctx, "default", []string{"2"})
	if err != nil || len(cancelled) != 1 || cancelled[0].Status != "aborting" {
		t.Fatalf("cancel a running task: %v %v", cancelled, err)
	}
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != state.KindTasks || ev.Id != "worker/0" {
			t.Fatalf("event %v", ev)
		}
		queue, err := mine.ReceiverTasks(ctx, env.model, "worker/0")
		if err != nil {
			t.Fatal(err)
		}
		if len(queue) == 1 && queue[0].Status == "aborting" {
			break
		}
	}
	if err := mine.FinishTask(ctx, env.model, "worker/0", "2", "aborted", "", nil); err != nil {
		t.Fatal(err)
	}
	op, err := env.admin.GetOperation(ctx, "default", "1")
	if err != nil || op.Status != "aborted" {
		t.Fatalf("operation %v %v", op, err)
	}

	// exec on a machine is its machine agent's.
	// Its parallel and execution group reach the agent, which takes the lock they name.
	ex, err := env.admin.Enqueue(ctx, &pb.EnqueueRequest{Model: "default", Receivers: []string{u0.MachineId}, Command: "hostname",
		ExecTimeoutSeconds: 10, Parallel: proto.Bool(false), ExecutionGroup: proto.String("db-ops")})
	if err != nil {
		t.Fatal(err)
	}
	if string(ex.Tasks[0].ParamsJson) != `{"command":"hostname","timeout":10000000000}` || ex.Tasks[0].Parallel || ex.Tasks[0].ExecutionGroup != "db-ops" {
		t.Fatalf("exec task %v", ex.Tasks[0])
	}
	if queue, err := machine.ReceiverTasks(ctx, env.model, u0.MachineId); err != nil || len(queue) != 1 || queue[0].Parallel || queue[0].ExecutionGroup != "db-ops" {
		t.Fatalf("machine queue %v %v", queue, err)
	}
	_, err = mine.StartTask(ctx, env.model, u0.MachineId, ex.Tasks[0].Id)
	denied("unit agent starts its machine's task", err)
	if _, err := machine.StartTask(ctx, env.model, u0.MachineId, ex.Tasks[0].Id); err != nil {
		t.Fatal(err)
	}
}
