package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// SetCharm switches an application to an uploaded charm (juju refresh).
func (c *Client) SetCharm(ctx context.Context, req *jujupb.SetCharmRequest) (*jujupb.SetCharmResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.app.SetCharm, req)
}

// SetUnitCharm tells the controller the unit's agent now runs charmURL (after juju refresh,
// before its upgrade-charm hook).
func (c *Client) SetUnitCharm(ctx context.Context, model, unit, charmURL string) error {
	_, err := invoke(ctx, c, c.agent.SetUnitCharm, &jujupb.SetUnitCharmRequest{Model: c.model(model), Unit: unit, CharmUrl: charmURL})
	return err
}
