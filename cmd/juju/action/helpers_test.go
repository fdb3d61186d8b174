package action

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// fakeAPI is a hand-written stand-in for the controller's ActionService (and the status call
// exec --all makes): it answers from its fields and records what it was asked.
type fakeAPI struct {
	mu sync.Mutex

	specs    map[string][]*jujupb.ActionSpec // by application
	specsErr error

	// op answers Enqueue (its tasks are the queued ones); enqueueErr refuses it.
	op         *jujupb.Operation
	enqueueErr error
	enqueued   []*jujupb.EnqueueRequest

	// updates are what WatchTasks sends, in order (those of the watched ids); after them the
	// watch blocks until its context ends, calling idle first (to interrupt it, say).
	updates []*jujupb.Task
	idle    func()
	watched [][]string

	machines []string // FullStatus's machines

	tasks map[string]*jujupb.Task // GetTask
	// ops answers GetOperation: each id's operations in turn, the last one again.
	ops      map[string][]*jujupb.Operation
	opsAsked int

	list    *jujupb.ListOperationsResponse
	listReq *jujupb.ListOperationsRequest

	cancelled []*jujupb.Task
	cancelReq []string

	calls []string
}

func (f *fakeAPI) call(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
}

func (f *fakeAPI) ApplicationActions(_ context.Context, model, app string) ([]*jujupb.ActionSpec, error) {
	f.call("ApplicationActions " + model + " " + app)
	if f.specsErr != nil {
		return nil, f.specsErr
	}
	specs, ok := f.specs[app]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", app)
	}
	return specs, nil
}

func (f *fakeAPI) Enqueue(_ context.Context, req *jujupb.EnqueueRequest) (*jujupb.Operation, error) {
	f.call("Enqueue")
	if f.enqueueErr != nil {
		return nil, f.enqueueErr
	}
	f.enqueued = append(f.enqueued, req)
	return f.op, nil
}

func (f *fakeAPI) WatchTasks(ctx context.Context, model string, ids []string, fn func(*jujupb.Task) error) error {
	f.call("WatchTasks " + model)
	f.watched = append(f.watched, ids)
	for _, t := range f.updates {
		if !slices.Contains(ids, t.GetId()) {
			continue
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	if f.idle != nil {
		f.idle()
	}
	<-ctx.Done()
	return ctx.Err()
}

func (f *fakeAPI) FullStatus(_ context.Context, model string, _ []string) (*jujupb.FullStatusResponse, error) {
	f.call("FullStatus " + model)
	st := &jujupb.FullStatusResponse{}
	for _, m := range f.machines {
		st.Machines = append(st.Machines, &jujupb.MachineStatus{Id: m})
	}
	return st, nil
}

func (f *fakeAPI) GetTask(_ context.Context, model, id string) (*jujupb.Task, error) {
	f.call("GetTask " + model + " " + id)
	t, ok := f.tasks[id]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "task %q not found", id)
	}
	return t, nil
}

func (f *fakeAPI) GetOperation(_ context.Context, model, id string) (*jujupb.Operation, error) {
	f.call("GetOperation " + model + " " + id)
	seq, ok := f.ops[id]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "operation %q not found", id)
	}
	op := seq[min(f.opsAsked, len(seq)-1)]
	f.opsAsked++
	return op, nil
}

func (f *fakeAPI) ListOperations(_ context.Context, req *jujupb.ListOperationsRequest) (*jujupb.ListOperationsResponse, error) {
	f.call("ListOperations")
	f.listReq = req
	return f.list, nil
}

func (f *fakeAPI) CancelTasks(_ context.Context, model string, ids []string) ([]*jujupb.Task, error) {
	f.call("CancelTasks " + model)
	f.cancelReq = ids
	return f.cancelled, nil
}

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

// t0 is when the fixtures' operations were queued.
var t0 = time.Date(2026, 11, 21, 19, 30, 15, 0, time.UTC)

// at is t0 plus d, in Unix nanoseconds.
func at(d time.Duration) int64 { return t0.Add(d).UnixNano() }

const backupSchema = `{"type":"object","title":"backup","description":"Back up the database",` +
	`"properties":{"out":{"type":"string","description":"Where to write the backup","default":"backup.tar"},` +
	`"file":{"type":"object","description":"Compression","properties":{"kind":{"type":"string"},"quality":{"type":"string"}}},` +
	`"level":{"type":"integer","minimum":1}},"additionalProperties":false}`

func mysqlSpecs() map[string][]*jujupb.ActionSpec {
	return map[string][]*jujupb.ActionSpec{
		"mysql": {
			{Name: "backup", Description: "Back up the database", SchemaJson: []byte(backupSchema)},
			{Name: "get-password", Description: "Show the admin password.\nRotate it with set-password.",
				SchemaJson: []byte(`{"type":"object","title":"get-password","properties":{},"additionalProperties":false}`)},
			{Name: "restart", SchemaJson: []byte(`{"type":"object","title":"restart","properties":{},"additionalProperties":false}`)},
		},
		"empty": {},
	}
}

// queued is a task just queued on receiver.
func queued(id, receiver, action string) *jujupb.Task {
	return &jujupb.Task{Id: id, OperationId: "1", Receiver: receiver, Action: action, Status: "pending", Enqueued: at(0)}
}

// running is the task started, with the log lines given.
func running(id, receiver, action string, log ...string) *jujupb.Task {
	t := queued(id, receiver, action)
	t.Status, t.Started = "running", at(time.Second)
	for i, l := range log {
		t.Log = append(t.Log, &jujupb.TaskLog{Time: at(time.Second + time.Duration(i+1)*100*time.Millisecond), Message: l})
	}
	return t
}

// done is the task finished with status and results (JSON), with the log lines given.
func done(id, receiver, action, status, results string, log ...string) *jujupb.Task {
	t := running(id, receiver, action, log...)
	t.Status, t.Completed, t.ResultsJson = status, at(2*time.Second), []byte(results)
	return t
}

func operation(id string, tasks ...*jujupb.Task) *jujupb.Operation {
	return &jujupb.Operation{Id: id, Status: "pending", Enqueued: at(0), Tasks: tasks}
}
