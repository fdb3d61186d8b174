package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// DescribeModel returns the model as a bundle sees it (bundle deploy, export-bundle).
func (c *Client) DescribeModel(ctx context.Context, model string) (*jujupb.ModelDescription, error) {
	return invoke(ctx, c, c.bundle.DescribeModel, &jujupb.DescribeModelRequest{Model: c.model(model)})
}

// SetAnnotations sets annotations of an application or a machine ("" removes a key).
func (c *Client) SetAnnotations(ctx context.Context, req *jujupb.SetAnnotationsRequest) error {
	req.Model = c.model(req.GetModel())
	_, err := invoke(ctx, c, c.bundle.SetAnnotations, req)
	return err
}
