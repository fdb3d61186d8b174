package state

import (
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/storepb"
)

// PruneResult says what PruneOperations removed.
type PruneResult struct {
	Operations, Tasks int
	Bytes             int64
}

// pruneCandidate is a finished operation with its tasks, as PruneOperations weighs it.
type pruneCandidate struct {
	id       int64
	tasks    []int64
	finished time.Time // when its last task finished
	bytes    int64
}

// PruneOperations removes finished operations with their tasks, as Juju's action pruner does
// with max-action-results-age and -size: first every operation whose last task finished more
// than maxAge ago, then the oldest finished ones while the model's operations and tasks take
// more than maxBytes. Unfinished operations are never removed; 0 turns a limit off. Each
// operation goes whole, in a transaction that checks it is still what was read.
func (s *State) PruneOperations(ctx context.Context, uuid string, maxAge time.Duration, maxBytes int64) (PruneResult, error) {
	var res PruneResult
	if maxAge <= 0 && maxBytes <= 0 {
		return res, nil
	}
	resp, err := s.kv.Txn(ctx).Then(
		clientv3.OpGet(operationsPrefix(uuid), clientv3.WithPrefix()),
		clientv3.OpGet(tasksPrefix(uuid), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return res, fmt.Errorf("reading operations: %w", err)
	}
	tasksOf := map[string][]*storepb.Task{}
	var total int64
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		t := &storepb.Task{}
		if err := unmarshal(kv, t); err != nil {
			return res, err
		}
		tasksOf[t.OperationId] = append(tasksOf[t.OperationId], t)
		total += int64(len(kv.Value))
	}
	var candidates []pruneCandidate // oldest first: keys are in id order
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		total += int64(len(kv.Value))
		op := &storepb.Operation{}
		if err := unmarshal(kv, op); err != nil {
			return res, err
		}
		c, ok := pruneCandidateOf(op, tasksOf[op.Id], int64(len(kv.Value)))
		if ok {
			candidates = append(candidates, c)
		}
	}
	cutoff := s.now().Add(-maxAge)
	for _, c := range candidates {
		old := maxAge > 0 && c.finished.Before(cutoff)
		if !old && (maxBytes <= 0 || total <= maxBytes) {
			continue
		}
		if err := s.deleteOperation(ctx, uuid, c); err != nil {
			return res, err
		}
		res.Operations++
		res.Tasks += len(c.tasks)
		res.Bytes += c.bytes
		total -= c.bytes
	}
	return res, nil
}

// pruneCandidateOf weighs an operation; ok is false while any of its tasks is unfinished.
func pruneCandidateOf(op *storepb.Operation, tasks []*storepb.Task, opBytes int64) (pruneCandidate, bool) {
	id, err := strconv.ParseInt(op.Id, 10, 64)
	if err != nil {
		return pruneCandidate{}, false
	}
	c := pruneCandidate{id: id, bytes: opBytes, finished: time.Unix(0, op.Enqueued)}
	for _, t := range tasks {
		if !TaskFinished(t.Status) {
			return pruneCandidate{}, false
		}
		n, err := strconv.ParseInt(t.Id, 10, 64)
		if err != nil {
			return pruneCandidate{}, false
		}
		c.tasks = append(c.tasks, n)
		c.bytes += int64(proto.Size(t))
		if done := time.Unix(0, t.Completed); done.After(c.finished) {
			c.finished = done
		}
	}
	return c, true
}

// deleteOperation deletes an operation and its tasks, if its tasks are still finished (a
// finished task never changes again, so this only guards against a concurrent prune).
func (s *State) deleteOperation(ctx context.Context, uuid string, c pruneCandidate) error {
	return s.run(ctx, "pruning operation "+strconv.FormatInt(c.id, 10), func(ctx context.Context, r *reader) (*writes, error) {
		w := &writes{}
		found, err := r.get(ctx, operationKey(uuid, c.id), nil)
		if err != nil || !found {
			return w, err
		}
		w.del(operationKey(uuid, c.id))
		for _, n := range c.tasks {
			t := &storepb.Task{}
			found, err := r.get(ctx, taskKey(uuid, n), t)
			if err != nil {
				return nil, err
			}
			if found && !TaskFinished(t.Status) {
				return nil, fmt.Errorf("task %d of operation %d is %s", n, c.id, t.Status)
			}
			w.del(taskKey(uuid, n))
		}
		return w, nil
	})
}
