package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Expose marks an application's endpoints exposed (juju expose).
func (c *Client) Expose(ctx context.Context, req *jujupb.ExposeRequest) error {
	req.Model = c.model(req.GetModel())
	_, err := invoke(ctx, c, c.app.Expose, req)
	return err
}

// Unexpose removes an application's exposure, whole or of the endpoints named.
func (c *Client) Unexpose(ctx context.Context, req *jujupb.UnexposeRequest) error {
	req.Model = c.model(req.GetModel())
	_, err := invoke(ctx, c, c.app.Unexpose, req)
	return err
}
