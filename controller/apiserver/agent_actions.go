package apiserver

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// taskReceiver checks that the caller is the receiver's own agent and returns its model: a
// unit agent for its unit; a machine agent for its machine, never for the units on it. Not
// even the admin acts for an agent on its tasks: a task must run where it was sent.
func taskReceiver(ctx context.Context, model, receiver string) (string, error) {
	e := entityFrom(ctx)
	if (e.Kind != "unit" && e.Kind != "machine") || e.ID != receiver || e.Model != model {
		return "", errDenied
	}
	return e.Model, nil
}

func (s *agentServer) ReceiverTasks(ctx context.Context, req *pb.AgentEntity) (*pb.AgentTasks, error) {
	uuid, err := taskReceiver(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	tasks, err := s.st.ReceiverTasks(ctx, uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return &pb.AgentTasks{Tasks: queuedTasks(tasks)}, nil
}

// queuedTasks are a task queue as agents see it: without the tasks' logs.
func queuedTasks(tasks []*storepb.Task) []*pb.Task {
	out := make([]*pb.Task, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, taskPB(t, false))
	}
	return out
}

func (s *agentServer) StartTask(ctx context.Context, req *pb.AgentTaskRequest) (*pb.Task, error) {
	uuid, err := taskReceiver(ctx, req.Model, req.Receiver)
	if err != nil {
		return nil, err
	}
	t, err := s.st.StartTask(ctx, uuid, req.Receiver, req.Id)
	if err != nil {
		return nil, err
	}
	return taskPB(t, true), nil
}

func (s *agentServer) LogTask(ctx context.Context, req *pb.LogTaskRequest) (*pb.SetStatusResponse, error) {
	uuid, err := taskReceiver(ctx, req.Model, req.Receiver)
	if err != nil {
		return nil, err
	}
	return &pb.SetStatusResponse{}, s.st.LogTask(ctx, uuid, req.Receiver, req.Id, req.Message)
}

func (s *agentServer) FinishTask(ctx context.Context, req *pb.FinishTaskRequest) (*pb.SetStatusResponse, error) {
	uuid, err := taskReceiver(ctx, req.Model, req.Receiver)
	if err != nil {
		return nil, err
	}
	return &pb.SetStatusResponse{}, s.st.FinishTask(ctx, uuid, req.Receiver, req.Id, state.TaskResult{
		Status: req.Status, Message: req.Message, ResultsJSON: req.ResultsJson,
	})
}
