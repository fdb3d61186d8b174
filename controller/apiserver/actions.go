package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// actionServer is juju run, juju exec and the commands that follow their operations. Users
// only (auth.go): agents reach their tasks through AgentService.
type actionServer struct {
	pb.UnimplementedActionServiceServer
	*service
}

func (s *actionServer) ApplicationActions(ctx context.Context, req *pb.ApplicationActionsRequest) (*pb.ApplicationActionsResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	acts, err := s.st.ApplicationActions(ctx, m.Uuid, req.Application)
	if err != nil {
		return nil, err
	}
	resp := &pb.ApplicationActionsResponse{}
	for _, a := range acts {
		schema, err := json.Marshal(a.Params)
		if err != nil {
			return nil, fmt.Errorf("action %q: encoding its schema: %w", a.Name, err)
		}
		resp.Actions = append(resp.Actions, &pb.ActionSpec{
			Name: a.Name, Description: a.Description, SchemaJson: schema, Parallel: a.Parallel, ExecutionGroup: a.ExecutionGroup,
		})
	}
	return resp, nil
}

func (s *actionServer) Enqueue(ctx context.Context, req *pb.EnqueueRequest) (*pb.Operation, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	info, err := s.st.Enqueue(ctx, m.Uuid, state.EnqueueArgs{
		Receivers: req.Receivers, Action: req.Action, Command: req.Command, ParamsJSON: req.ParamsJson,
		ExecTimeout: time.Duration(req.ExecTimeoutSeconds) * time.Second,
		Parallel:    req.Parallel, ExecutionGroup: req.ExecutionGroup,
	})
	if err != nil {
		return nil, err
	}
	return operationPB(info, true), nil
}

func (s *actionServer) GetTask(ctx context.Context, req *pb.TaskRef) (*pb.Task, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	t, err := s.st.Task(ctx, m.Uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return taskPB(t, true), nil
}

func (s *actionServer) GetOperation(ctx context.Context, req *pb.OperationRef) (*pb.Operation, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	info, err := s.st.Operation(ctx, m.Uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return operationPB(info, true), nil
}

func (s *actionServer) ListOperations(ctx context.Context, req *pb.ListOperationsRequest) (*pb.ListOperationsResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	ops, truncated, err := s.st.ListOperations(ctx, m.Uuid, state.OperationFilter{
		Applications: req.Applications, Units: req.Units, Machines: req.Machines, Actions: req.Actions,
		Statuses: req.Statuses, Offset: int(req.Offset), Limit: int(req.Limit),
	})
	if err != nil {
		return nil, err
	}
	resp := &pb.ListOperationsResponse{Truncated: truncated}
	for _, op := range ops {
		// As in Juju, a listing leaves out results and logs, which can be large: show-task
		// and show-operation have them.
		resp.Operations = append(resp.Operations, operationPB(op, false))
	}
	return resp, nil
}

func (s *actionServer) CancelTasks(ctx context.Context, req *pb.CancelTasksRequest) (*pb.CancelTasksResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	tasks, err := s.st.CancelTasks(ctx, m.Uuid, req.Ids)
	if err != nil {
		return nil, err
	}
	resp := &pb.CancelTasksResponse{}
	for _, t := range tasks {
		resp.Tasks = append(resp.Tasks, taskPB(t, true))
	}
	return resp, nil
}

// rewatchDelay spaces out re-subscriptions when the model's watch keeps ending.
const rewatchDelay = 100 * time.Millisecond

// WatchTasks sends each task as it is, then again whenever it changes, until all have
// finished or the caller goes. It subscribes before reading, so no change is missed; when the
// subscription ends (the store watch failed, or this stream fell behind) it subscribes again
// and re-reads. Nothing is kept between calls: a restarted controller serves the same stream.
func (s *actionServer) WatchTasks(req *pb.WatchTasksRequest, stream pb.ActionService_WatchTasksServer) error {
	ctx := stream.Context()
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return err
	}
	var ids []string
	for _, id := range req.Ids {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return apierr.Errorf(apierr.NotValid, "no task ids specified")
	}
	var keys []state.WatchKey
	for _, id := range ids {
		if _, err := s.st.Task(ctx, m.Uuid, id); err != nil {
			return err
		}
		key, err := state.KeyPrefix(m.Uuid, state.KindTask, id)
		if err != nil {
			return err
		}
		keys = append(keys, state.WatchKey{Key: key})
	}
	sent := map[string]*pb.Task{}
	finished := map[string]bool{}
	// send reads a task and sends it when it differs from what was last sent; it reports
	// whether every task has finished.
	send := func(id string) (bool, error) {
		t, err := s.st.Task(ctx, m.Uuid, id)
		if err != nil {
			return false, err
		}
		out := taskPB(t, true)
		if !proto.Equal(out, sent[id]) {
			if err := stream.Send(out); err != nil {
				return false, err
			}
			sent[id] = out
		}
		if state.TaskFinished(t.Status) {
			finished[id] = true
		}
		return len(finished) == len(ids), nil
	}
	for {
		events, err := s.hub.Subscribe(ctx, m.Uuid, keys)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if finished[id] {
				continue
			}
			if done, err := send(id); err != nil || done {
				return err
			}
		}
		for ev := range events.Events() {
			if finished[ev.ID] || !slices.Contains(ids, ev.ID) {
				continue
			}
			if done, err := send(ev.ID); err != nil || done {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rewatchDelay):
		}
	}
}

func operationPB(info *state.OperationInfo, full bool) *pb.Operation {
	op := &pb.Operation{
		Id: info.Operation.Id, Summary: info.Operation.Summary, Status: info.Status,
		Enqueued: info.Operation.Enqueued, Started: info.Started, Completed: info.Completed,
	}
	for _, t := range info.Tasks {
		op.Tasks = append(op.Tasks, taskPB(t, full))
	}
	return op
}

// taskPB converts a task; without full, its results and log are left out.
func taskPB(t *storepb.Task, full bool) *pb.Task {
	out := &pb.Task{
		Id: t.Id, OperationId: t.OperationId, Receiver: t.Receiver, Action: t.Action, ParamsJson: t.ParamsJson,
		Status: t.Status, Message: t.Message, Enqueued: t.Enqueued, Started: t.Started, Completed: t.Completed,
		Parallel: t.Parallel, ExecutionGroup: t.ExecutionGroup,
	}
	if full {
		out.ResultsJson = t.ResultsJson
		for _, l := range t.Log {
			out.Log = append(out.Log, &pb.TaskLog{Time: l.Time, Message: l.Message})
		}
	}
	return out
}
