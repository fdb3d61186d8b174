package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// GetResource is resource-get for a unit agent: the current revision of a resource of the
// unit's application, with its content unless fingerprint (the sha384 of the unit's copy) is
// that revision's. NotFound when nobody uploaded it.
func (c *Client) GetResource(ctx context.Context, model, unit, name, fingerprint string) (*jujupb.AgentResourceResponse, error) {
	return invoke(ctx, c, c.agent.GetResource, &jujupb.AgentResourceRequest{
		Model: c.model(model), Unit: unit, Name: name, Fingerprint: fingerprint})
}
