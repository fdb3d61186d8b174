package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// UploadResource stores a resource's content: pending (for a deploy or refresh that names its
// pending id) or as the application's next revision (attach-resource).
func (c *Client) UploadResource(ctx context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.res.UploadResource, req)
}

// ListResources returns the resources of an application, or of a unit.
func (c *Client) ListResources(ctx context.Context, req *jujupb.ListResourcesRequest) (*jujupb.ListResourcesResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.res.ListResources, req)
}
