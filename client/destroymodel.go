package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// DestroyModel makes a model dying; the controller then removes everything in it and the
// model itself. With req.DryRun it only reports what would go. The response lists the model's
// applications, units and machines, and its UUID to watch it go. The controller model is
// refused; a model already dying is not an error.
func (c *Client) DestroyModel(ctx context.Context, req *jujupb.DestroyModelRequest) (*jujupb.DestroyModelResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.ctrl.DestroyModel, req)
}
