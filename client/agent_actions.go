package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// The calls an agent makes to run its receiver's tasks (actions and exec commands). receiver
// is the agent's unit name or machine id.

// ReceiverTasks lists the receiver's pending and running tasks, oldest first.
func (c *Client) ReceiverTasks(ctx context.Context, model, receiver string) ([]*jujupb.Task, error) {
	resp, err := invoke(ctx, c, c.agent.ReceiverTasks, &jujupb.AgentEntity{Model: c.model(model), Id: receiver})
	if err != nil {
		return nil, err
	}
	return resp.GetTasks(), nil
}

// StartTask moves a pending task to running and returns it; FailedPrecondition when it is no
// longer pending (cancelled meanwhile).
func (c *Client) StartTask(ctx context.Context, model, receiver, id string) (*jujupb.Task, error) {
	return invoke(ctx, c, c.agent.StartTask, &jujupb.AgentTaskRequest{Model: c.model(model), Receiver: receiver, Id: id})
}

// LogTask appends a message to a running task's log (action-log).
func (c *Client) LogTask(ctx context.Context, model, receiver, id, message string) error {
	_, err := invoke(ctx, c, c.agent.LogTask, &jujupb.LogTaskRequest{Model: c.model(model), Receiver: receiver, Id: id, Message: message})
	return err
}

// FinishTask ends a running task with its status (completed, failed or aborted), message and
// results (a JSON object).
func (c *Client) FinishTask(ctx context.Context, model, receiver, id, status, message string, resultsJSON []byte) error {
	_, err := invoke(ctx, c, c.agent.FinishTask, &jujupb.FinishTaskRequest{
		Model: c.model(model), Receiver: receiver, Id: id, Status: status, Message: message, ResultsJson: resultsJSON})
	return err
}
