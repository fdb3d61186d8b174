package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// EnableHA makes the controller have n members (juju enable-ha); 0 asks for the default.
func (c *Client) EnableHA(ctx context.Context, n int) (*jujupb.EnableHAResponse, error) {
	return invoke(ctx, c, c.ctrl.EnableHA, &jujupb.EnableHARequest{NumMembers: int32(n)})
}

// RemoveControllerMember removes one member of the controller.
func (c *Client) RemoveControllerMember(ctx context.Context, id string) error {
	_, err := invoke(ctx, c, c.ctrl.RemoveControllerMember, &jujupb.RemoveControllerMemberRequest{Id: id})
	return err
}

// ControllerMembers lists the controller's members; degraded says why it takes no writes.
func (c *Client) ControllerMembers(ctx context.Context) (members []*jujupb.ControllerMember, degraded string, err error) {
	resp, err := invoke(ctx, c, c.ctrl.ControllerMembers, &jujupb.ControllerMembersRequest{})
	if err != nil {
		return nil, "", err
	}
	return resp.GetMembers(), resp.GetDegraded(), nil
}
