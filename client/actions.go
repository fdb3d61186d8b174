package client

import (
	"context"
	"errors"
	"io"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// ApplicationActions lists the actions of an application's charm, sorted by name.
func (c *Client) ApplicationActions(ctx context.Context, model, app string) ([]*jujupb.ActionSpec, error) {
	resp, err := invoke(ctx, c, c.action.ApplicationActions, &jujupb.ApplicationActionsRequest{Model: c.model(model), Application: app})
	if err != nil {
		return nil, err
	}
	return resp.GetActions(), nil
}

// Enqueue queues one operation (an action or an exec command) with a task per receiver.
func (c *Client) Enqueue(ctx context.Context, req *jujupb.EnqueueRequest) (*jujupb.Operation, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.action.Enqueue, req)
}

// GetTask returns one task.
func (c *Client) GetTask(ctx context.Context, model, id string) (*jujupb.Task, error) {
	return invoke(ctx, c, c.action.GetTask, &jujupb.TaskRef{Model: c.model(model), Id: id})
}

// GetOperation returns one operation with its tasks.
func (c *Client) GetOperation(ctx context.Context, model, id string) (*jujupb.Operation, error) {
	return invoke(ctx, c, c.action.GetOperation, &jujupb.OperationRef{Model: c.model(model), Id: id})
}

// ListOperations lists the model's operations, newest first.
func (c *Client) ListOperations(ctx context.Context, req *jujupb.ListOperationsRequest) (*jujupb.ListOperationsResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.action.ListOperations, req)
}

// CancelTasks cancels the pending tasks among ids and reports each task's status after.
func (c *Client) CancelTasks(ctx context.Context, model string, ids []string) ([]*jujupb.Task, error) {
	resp, err := invoke(ctx, c, c.action.CancelTasks, &jujupb.CancelTasksRequest{Model: c.model(model), Ids: ids})
	if err != nil {
		return nil, err
	}
	return resp.GetTasks(), nil
}

// WatchTasks calls fn with the current state of each task, then with each change, until every
// task has finished (it returns nil), fn returns an error, or ctx ends (ctx's error). Like
// DebugLog it is bounded by ctx only, not by the per-call timeout: the caller sets --wait.
func (c *Client) WatchTasks(ctx context.Context, model string, ids []string, fn func(*jujupb.Task) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.action.WatchTasks(ctx, &jujupb.WatchTasksRequest{Model: c.model(model), Ids: ids}, c.callOpts...)
	if err != nil {
		return c.mapErr(err)
	}
	for {
		t, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return c.mapErr(err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
}
