package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// AddModelIn creates a model as AddModel does, in a named cloud and region ("" for the
// controller's; NotFound for any other).
func (c *Client) AddModelIn(ctx context.Context, req *jujupb.AddModelRequest) (*jujupb.Model, error) {
	return invoke(ctx, c, c.ctrl.AddModel, req)
}

// GetModelConfig returns every model configuration key with its value in effect and its
// source ("default" or "model"), sorted by key.
func (c *Client) GetModelConfig(ctx context.Context, model string) ([]*jujupb.ModelConfigValue, error) {
	resp, err := invoke(ctx, c, c.ctrl.GetModelConfig, &jujupb.ModelRef{Model: c.model(model)})
	if err != nil {
		return nil, err
	}
	return resp.GetValues(), nil
}

// SetModelConfig sets and resets model configuration keys in one change; NotValid (and
// nothing changed) when any key or value is refused.
func (c *Client) SetModelConfig(ctx context.Context, model string, set map[string]string, reset []string) error {
	_, err := invoke(ctx, c, c.ctrl.SetModelConfig, &jujupb.SetModelConfigRequest{Model: c.model(model), Set: set, Reset_: reset})
	return err
}

// GetModelDefaults returns every model configuration key with Juju's default and the
// controller's model default where it has one, sorted by key.
func (c *Client) GetModelDefaults(ctx context.Context) ([]*jujupb.ModelDefault, error) {
	resp, err := invoke(ctx, c, c.ctrl.GetModelDefaults, &jujupb.GetModelDefaultsRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetValues(), nil
}

// SetModelDefaults sets and resets the controller's model defaults in one change; NotValid
// (and nothing changed) when any key or value is refused.
func (c *Client) SetModelDefaults(ctx context.Context, set map[string]string, reset []string) error {
	_, err := invoke(ctx, c, c.ctrl.SetModelDefaults, &jujupb.SetModelDefaultsRequest{Set: set, Reset_: reset})
	return err
}
