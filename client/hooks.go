package client

import (
	"context"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// The calls a unit agent makes for its running hooks (the hook tools) and for leadership.

// RelationSettings reads a unit's settings in a relation (relation-get); ofUnit "" means the
// caller itself.
func (c *Client) RelationSettings(ctx context.Context, model, unit string, relationID int64, ofUnit string) (map[string]string, error) {
	resp, err := invoke(ctx, c, c.agent.RelationSettings, &jujupb.RelationSettingsRequest{
		Model: c.model(model), Unit: unit, RelationId: relationID, OfUnit: ofUnit})
	if err != nil {
		return nil, err
	}
	return resp.GetSettings(), nil
}

// SetRelationSettings merges values into the unit's own settings (an empty value deletes) and
// reports whether anything changed.
func (c *Client) SetRelationSettings(ctx context.Context, model, unit string, relationID int64, values map[string]string) (bool, error) {
	resp, err := invoke(ctx, c, c.agent.SetRelationSettings, &jujupb.SetRelationSettingsRequest{
		Model: c.model(model), Unit: unit, RelationId: relationID, Settings: values})
	if err != nil {
		return false, err
	}
	return resp.GetChanged(), nil
}

// ClaimLeadership claims or extends the unit's leadership of its application for ttlSeconds.
func (c *Client) ClaimLeadership(ctx context.Context, model, unit string, ttlSeconds int64) (*jujupb.ClaimLeadershipResponse, error) {
	return invoke(ctx, c, c.agent.ClaimLeadership, &jujupb.ClaimLeadershipRequest{
		Model: c.model(model), Unit: unit, TtlSeconds: ttlSeconds})
}

// LeaderSettings reads the leader settings of the unit's application.
func (c *Client) LeaderSettings(ctx context.Context, model, unit string) (*jujupb.LeaderSettingsResponse, error) {
	return invoke(ctx, c, c.agent.LeaderSettings, &jujupb.AgentEntity{Model: c.model(model), Id: unit})
}

// SetLeaderSettings merges values into the leader settings; only the leader may.
func (c *Client) SetLeaderSettings(ctx context.Context, model, unit string, values map[string]string) error {
	_, err := invoke(ctx, c, c.agent.SetLeaderSettings, &jujupb.SetLeaderSettingsRequest{
		Model: c.model(model), Unit: unit, Settings: values})
	return err
}

// SetUnitPorts opens and closes the unit's ports and returns those open afterwards.
func (c *Client) SetUnitPorts(ctx context.Context, model, unit string, open, close []string) ([]string, error) {
	resp, err := invoke(ctx, c, c.agent.SetUnitPorts, &jujupb.SetUnitPortsRequest{
		Model: c.model(model), Unit: unit, Open: open, Close: close})
	if err != nil {
		return nil, err
	}
	return resp.GetOpenPorts(), nil
}

// SetApplicationVersion records the workload version of the unit's application.
func (c *Client) SetApplicationVersion(ctx context.Context, model, unit, version string) error {
	_, err := invoke(ctx, c, c.agent.SetApplicationVersion, &jujupb.SetApplicationVersionRequest{
		Model: c.model(model), Unit: unit, Version: version})
	return err
}

// SetApplicationStatus sets the application's status on behalf of its leader unit.
func (c *Client) SetApplicationStatus(ctx context.Context, model, unit string, st *jujupb.StatusInfo) error {
	_, err := invoke(ctx, c, c.agent.SetApplicationStatus, &jujupb.SetStatusRequest{
		Model: c.model(model), Id: unit, Status: st})
	return err
}

// ClearResolved tells the controller the unit acted on `juju resolved`.
func (c *Client) ClearResolved(ctx context.Context, model, unit string) error {
	_, err := invoke(ctx, c, c.agent.ClearResolved, &jujupb.AgentEntity{Model: c.model(model), Id: unit})
	return err
}

// WriteLogs appends records to the model's log (an agent: records about itself).
func (c *Client) WriteLogs(ctx context.Context, model string, records []*jujupb.LogRecord) error {
	_, err := invoke(ctx, c, c.log.WriteLogs, &jujupb.WriteLogsRequest{Model: c.model(model), Records: records})
	return err
}

// ApplicationRelationSettings reads an application's settings in a relation (relation-get
// --app): the other side's, or the unit's own application's when it leads.
func (c *Client) ApplicationRelationSettings(ctx context.Context, model, unit string, relationID int64, app string) (map[string]string, error) {
	resp, err := invoke(ctx, c, c.agent.RelationSettings, &jujupb.RelationSettingsRequest{
		Model: c.model(model), Unit: unit, RelationId: relationID, OfApplication: app})
	if err != nil {
		return nil, err
	}
	return resp.GetSettings(), nil
}

// SetApplicationRelationSettings merges values into the unit's application's settings in a
// relation (relation-set --app; leader only) and reports whether anything changed.
func (c *Client) SetApplicationRelationSettings(ctx context.Context, model, unit string, relationID int64, values map[string]string) (bool, error) {
	resp, err := invoke(ctx, c, c.agent.SetRelationSettings, &jujupb.SetRelationSettingsRequest{
		Model: c.model(model), Unit: unit, RelationId: relationID, Settings: values, Application: true})
	if err != nil {
		return false, err
	}
	return resp.GetChanged(), nil
}

// ApplicationStatus reads the unit's application's status and its units' (leader only).
func (c *Client) ApplicationStatus(ctx context.Context, model, unit string) (*jujupb.ApplicationStatusResponse, error) {
	return invoke(ctx, c, c.agent.ApplicationStatus, &jujupb.AgentEntity{Model: c.model(model), Id: unit})
}

// CharmState reads the state the unit's charm keeps in the controller.
func (c *Client) CharmState(ctx context.Context, model, unit string) (map[string]string, error) {
	resp, err := invoke(ctx, c, c.agent.CharmState, &jujupb.AgentEntity{Model: c.model(model), Id: unit})
	if err != nil {
		return nil, err
	}
	return resp.GetState(), nil
}

// SetCharmState merges values into the unit's charm state (an empty value deletes).
func (c *Client) SetCharmState(ctx context.Context, model, unit string, values map[string]string) error {
	_, err := invoke(ctx, c, c.agent.SetCharmState, &jujupb.SetCharmStateRequest{Model: c.model(model), Unit: unit, State: values})
	return err
}

// GoalState reads the goal state of the unit's application and relations.
func (c *Client) GoalState(ctx context.Context, model, unit string) (*jujupb.GoalStateResponse, error) {
	return invoke(ctx, c, c.agent.GoalState, &jujupb.AgentEntity{Model: c.model(model), Id: unit})
}

// CloudSpec reads the cloud of the unit's model with its credential (credential-get); a unit
// of an untrusted application gets apierr.PermissionDenied.
func (c *Client) CloudSpec(ctx context.Context, model, unit string) (*jujupb.CloudSpec, error) {
	return invoke(ctx, c, c.agent.GetCloudSpec, &jujupb.AgentEntity{Model: c.model(model), Id: unit})
}
