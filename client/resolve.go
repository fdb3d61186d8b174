package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// The calls behind juju resolved, juju retry-provisioning and juju config.

// ResolveUnitErrors marks units in error as resolved (req.Retry re-runs the failed hook); each
// result carries its own error text and what the agent will do next.
func (c *Client) ResolveUnitErrors(ctx context.Context, req *jujupb.ResolveUnitErrorsRequest) ([]*jujupb.ResolveResult, error) {
	req.Model = c.model(req.GetModel())
	resp, err := invoke(ctx, c, c.app.ResolveUnitErrors, req)
	return resp.GetResults(), err
}

// RetryProvisioning makes machines with a provisioning error eligible for provisioning again,
// optionally replacing their constraints; each result carries its own error text.
func (c *Client) RetryProvisioning(ctx context.Context, req *jujupb.RetryProvisioningRequest) ([]*jujupb.RemoveResult, error) {
	req.Model = c.model(req.GetModel())
	resp, err := invoke(ctx, c, c.machine.RetryProvisioning, req)
	return resp.GetResults(), err
}

// GetConfig returns an application's config with its charm's options.
func (c *Client) GetConfig(ctx context.Context, model, app string) (*jujupb.ApplicationConfig, error) {
	return invoke(ctx, c, c.app.GetConfig, &jujupb.ApplicationRef{Model: c.model(model), Application: app})
}

// SetConfig sets (values, as typed) and resets (to the charm's defaults) config options.
func (c *Client) SetConfig(ctx context.Context, req *jujupb.SetConfigRequest) error {
	req.Model = c.model(req.GetModel())
	_, err := invoke(ctx, c, c.app.SetConfig, req)
	return err
}
