package state_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

// max-action-results-age and -size: finished operations older than the age go, then the
// oldest finished ones while the rest take more than the size; an unfinished operation stays
// however old, and a pruned one is gone whole (operation and tasks).
func TestPruneOperations(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployDB(t, uuid, "db", 2)
	now := time.Now()
	clocked := state.New(st.Client())
	clocked.SetClock(func() time.Time { return now })
	finish := func(receiver, id string) {
		t.Helper()
		if _, err := clocked.StartTask(ctx, uuid, receiver, id); err != nil {
			t.Fatal(err)
		}
		if err := clocked.FinishTask(ctx, uuid, receiver, id, state.TaskResult{Status: "completed", ResultsJSON: []byte(`{"stdout":"ok"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var ops []*state.OperationInfo
	for range 4 {
		op, err := clocked.Enqueue(ctx, uuid, state.EnqueueArgs{Receivers: []string{"db/0", "db/1"}, Action: "snapshot"})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
		now = now.Add(time.Hour)
	}
	// The first three finish an hour apart; the fourth's db/1 task stays pending.
	for i, op := range ops {
		finish("db/0", op.Tasks[0].Id)
		if i < 3 {
			finish("db/1", op.Tasks[1].Id)
		}
		now = now.Add(time.Hour)
	}
	exists := func(op *state.OperationInfo) bool {
		_, err := st.Operation(ctx, uuid, op.Operation.Id)
		if err != nil && !errors.Is(err, apierr.NotFound) {
			t.Fatal(err)
		}
		return err == nil
	}

	// No limits: nothing goes.
	if res, err := clocked.PruneOperations(ctx, uuid, 0, 0); err != nil || res.Operations != 0 {
		t.Fatalf("no limits: %+v %v", res, err)
	}
	// Finished 4h, 3h and 2h ago (and the unfinished one enqueued 5h ago): 150m takes the
	// first two.
	res, err := clocked.PruneOperations(ctx, uuid, 150*time.Minute, 0)
	if err != nil || res.Operations != 2 || res.Tasks != 4 || res.Bytes <= 0 {
		t.Fatalf("by age: %+v %v", res, err)
	}
	if exists(ops[0]) || exists(ops[1]) || !exists(ops[2]) || !exists(ops[3]) {
		t.Fatalf("after pruning by age: %v %v %v %v", exists(ops[0]), exists(ops[1]), exists(ops[2]), exists(ops[3]))
	}
	if _, err := st.Task(ctx, uuid, ops[0].Tasks[0].Id); !errors.Is(err, apierr.NotFound) {
		t.Errorf("a pruned operation's task: %v", err)
	}
	// One byte: every finished operation goes, the unfinished one stays.
	res, err = clocked.PruneOperations(ctx, uuid, 0, 1)
	if err != nil || res.Operations != 1 || exists(ops[2]) || !exists(ops[3]) {
		t.Fatalf("by size: %+v %v", res, err)
	}
	if task, err := st.Task(ctx, uuid, ops[3].Tasks[1].Id); err != nil || task.Status != "pending" {
		t.Errorf("the pending task: %v %v", task, err)
	}
}
