package client

import (
	"context"

	"google.golang.org/grpc"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Every method takes ctx first, applies the client's per-call timeout when ctx has no deadline,
// and returns errors that wrap the apierr sentinels. A model argument names a model by name or
// UUID; an empty one means the client's own model (Config.Model).

// Version returns the controller's version, clock and UUID.
func (c *Client) Version(ctx context.Context) (*jujupb.VersionResponse, error) {
	return invoke(ctx, c, c.ctrl.Version, &jujupb.VersionRequest{})
}

// ListModels lists the controller's models with their machine and unit counts.
func (c *Client) ListModels(ctx context.Context) ([]*jujupb.Model, error) {
	resp, err := invoke(ctx, c, c.ctrl.ListModels, &jujupb.ListModelsRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetModels(), nil
}

// AddModel creates a model with the given constraints and configuration; AlreadyExists if the
// name is taken.
func (c *Client) AddModel(ctx context.Context, name, cons string, config map[string]string) (*jujupb.Model, error) {
	return invoke(ctx, c, c.ctrl.AddModel, &jujupb.AddModelRequest{Name: name, Constraints: cons, Config: config})
}

// GetModel resolves a model by name or UUID; NotFound if there is none.
func (c *Client) GetModel(ctx context.Context, ref string) (*jujupb.Model, error) {
	return invoke(ctx, c, c.ctrl.GetModel, &jujupb.ModelRef{Model: c.model(ref)})
}

// GetModelConstraints returns the model's constraints in canonical form.
func (c *Client) GetModelConstraints(ctx context.Context, model string) (string, error) {
	resp, err := invoke(ctx, c, c.ctrl.GetModelConstraints, &jujupb.ModelRef{Model: c.model(model)})
	if err != nil {
		return "", err
	}
	return resp.GetValue(), nil
}

// SetModelConstraints replaces the model's constraints.
func (c *Client) SetModelConstraints(ctx context.Context, model, cons string) error {
	_, err := invoke(ctx, c, c.ctrl.SetModelConstraints,
		&jujupb.SetModelConstraintsRequest{Model: c.model(model), Constraints: cons})
	return err
}

// UploadCharm stores a charm archive (a zip of the charm directory) and returns its URL,
// local:<name>-<revision>, and revision.
func (c *Client) UploadCharm(ctx context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error) {
	return invoke(ctx, c, c.app.UploadCharm, &jujupb.UploadCharmRequest{Model: c.model(model), Archive: archive})
}

// Deploy creates an application and its units; AlreadyExists if the name is taken.
func (c *Client) Deploy(ctx context.Context, req *jujupb.DeployRequest) (*jujupb.DeployResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.app.Deploy, req)
}

// AddUnits adds units to a principal application.
func (c *Client) AddUnits(ctx context.Context, req *jujupb.AddUnitsRequest) (*jujupb.AddUnitsResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.app.AddUnits, req)
}

// GetConstraints returns an application's constraints in canonical form.
func (c *Client) GetConstraints(ctx context.Context, model, app string) (string, error) {
	resp, err := invoke(ctx, c, c.app.GetConstraints, &jujupb.ApplicationRef{Model: c.model(model), Application: app})
	if err != nil {
		return "", err
	}
	return resp.GetValue(), nil
}

// SetConstraints replaces an application's constraints.
func (c *Client) SetConstraints(ctx context.Context, model, app, cons string) error {
	_, err := invoke(ctx, c, c.app.SetConstraints,
		&jujupb.SetConstraintsRequest{Model: c.model(model), Application: app, Constraints: cons})
	return err
}

// Integrate relates two applications; endpoints are "app" or "app:endpoint".
func (c *Client) Integrate(ctx context.Context, model string, endpoints []string) (*jujupb.IntegrateResponse, error) {
	return invoke(ctx, c, c.app.Integrate, &jujupb.IntegrateRequest{Model: c.model(model), Endpoints: endpoints})
}

// RemoveRelation destroys a relation named by two endpoints or by id.
func (c *Client) RemoveRelation(ctx context.Context, req *jujupb.RemoveRelationRequest) (*jujupb.RemoveRelationResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.app.RemoveRelation, req)
}

// RemoveUnits destroys principal units (or, with DryRun, says what would go); each result
// carries its own error text.
func (c *Client) RemoveUnits(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	req.Model = c.model(req.GetModel())
	resp, err := invoke(ctx, c, c.app.RemoveUnits, req)
	return resp.GetResults(), err
}

// RemoveApplications destroys applications; each result carries its own error text.
func (c *Client) RemoveApplications(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	req.Model = c.model(req.GetModel())
	resp, err := invoke(ctx, c, c.app.RemoveApplications, req)
	return resp.GetResults(), err
}

// RemoveMachines destroys machines; each result carries its own error text.
func (c *Client) RemoveMachines(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	req.Model = c.model(req.GetModel())
	resp, err := invoke(ctx, c, c.machine.RemoveMachines, req)
	return resp.GetResults(), err
}

// ShowUnit returns a unit with its relations and their settings.
func (c *Client) ShowUnit(ctx context.Context, model, unit string) (*jujupb.UnitDetail, error) {
	return invoke(ctx, c, c.app.ShowUnit, &jujupb.ShowUnitRequest{Model: c.model(model), Unit: unit})
}

// AddMachines adds one machine per params entry; each result carries its own error text.
func (c *Client) AddMachines(ctx context.Context, req *jujupb.AddMachinesRequest) ([]*jujupb.AddMachineResult, error) {
	req.Model = c.model(req.GetModel())
	resp, err := invoke(ctx, c, c.machine.AddMachines, req)
	if err != nil {
		return nil, err
	}
	return resp.GetResults(), nil
}

// FullStatus returns the model as of one store revision, filtered by patterns (application
// names, unit names, machine ids, "*" wildcards).
func (c *Client) FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error) {
	return invoke(ctx, c, c.status.FullStatus, &jujupb.FullStatusRequest{Model: c.model(model), Patterns: patterns})
}

// Watcher is a receive-only stream of change events, from Watch.
type Watcher struct {
	c      *Client
	stream interface {
		Recv() (*jujupb.WatchEvent, error)
	}
	cancel context.CancelFunc
}

// Watch streams changes to req's targets until ctx is cancelled or Close is called. It is not
// bounded by the per-call timeout. Read events with Next.
func (c *Client) Watch(ctx context.Context, req *jujupb.WatchRequest) (*Watcher, error) {
	req.Model = c.model(req.GetModel())
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.status.Watch(ctx, req, c.callOpts...)
	if err != nil {
		cancel()
		return nil, c.mapErr(err)
	}
	// The server sends its header once the watch is established; waiting for it means every
	// change made after Watch returns is delivered.
	if _, err := stream.Header(); err != nil {
		cancel()
		return nil, c.mapErr(err)
	}
	return &Watcher{c: c, stream: stream, cancel: cancel}, nil
}

// Next blocks until the next event. When the stream ends it returns an error: the context's
// error (context.Canceled after Close), or the server's, mapped to the apierr sentinels.
func (w *Watcher) Next() (*jujupb.WatchEvent, error) {
	ev, err := w.stream.Recv()
	if err != nil {
		return nil, w.c.streamErr(err)
	}
	return ev, nil
}

// Close ends the stream.
func (w *Watcher) Close() { w.cancel() }

// Agent methods: machine and unit agents, about their own entities only.

// GetMachine returns a machine as its agent sees it.
func (c *Client) GetMachine(ctx context.Context, model, id string) (*jujupb.AgentMachine, error) {
	return invoke(ctx, c, c.agent.GetMachine, &jujupb.AgentEntity{Model: c.model(model), Id: id})
}

// SetMachineStatus sets a machine's agent status.
func (c *Client) SetMachineStatus(ctx context.Context, model, id string, st *jujupb.StatusInfo) error {
	_, err := invoke(ctx, c, c.agent.SetMachineStatus, &jujupb.SetStatusRequest{Model: c.model(model), Id: id, Status: st})
	return err
}

// MachineUnits lists the principal units assigned to a machine.
func (c *Client) MachineUnits(ctx context.Context, model, id string) ([]*jujupb.AgentUnit, error) {
	resp, err := invoke(ctx, c, c.agent.MachineUnits, &jujupb.AgentEntity{Model: c.model(model), Id: id})
	if err != nil {
		return nil, err
	}
	return resp.GetUnits(), nil
}

// GetUnit returns a unit as its agent sees it.
func (c *Client) GetUnit(ctx context.Context, model, name string) (*jujupb.AgentUnit, error) {
	return invoke(ctx, c, c.agent.GetUnit, &jujupb.AgentEntity{Model: c.model(model), Id: name})
}

// SetUnitPassword sets a unit agent's credential; only the machine agent deploying it may.
func (c *Client) SetUnitPassword(ctx context.Context, model, name, password string) error {
	_, err := invoke(ctx, c, c.agent.SetUnitPassword,
		&jujupb.SetPasswordRequest{Model: c.model(model), Id: name, Password: password})
	return err
}

// SetUnitStatus sets a unit's agent and/or workload status; unset fields are left alone.
func (c *Client) SetUnitStatus(ctx context.Context, req *jujupb.SetUnitStatusRequest) error {
	req.Model = c.model(req.GetModel())
	_, err := invoke(ctx, c, c.agent.SetUnitStatus, req)
	return err
}

// GetCharmArchive returns the archive of the charm at url.
func (c *Client) GetCharmArchive(ctx context.Context, model, url string) ([]byte, error) {
	resp, err := invoke(ctx, c, c.agent.GetCharmArchive, &jujupb.CharmRef{Model: c.model(model), Url: url})
	if err != nil {
		return nil, err
	}
	return resp.GetArchive(), nil
}

// GetApplication returns the application of the calling unit (or of its subordinate).
func (c *Client) GetApplication(ctx context.Context, model, name string) (*jujupb.AgentApplication, error) {
	return invoke(ctx, c, c.agent.GetApplication, &jujupb.AgentEntity{Model: c.model(model), Id: name})
}

// UnitRelations lists the relations that concern a unit, with its scope membership and the
// members of every relation it is in scope of.
func (c *Client) UnitRelations(ctx context.Context, model, unit string) ([]*jujupb.AgentRelation, error) {
	return c.unitRelations(ctx, &jujupb.UnitRelationsRequest{Model: c.model(model), Unit: unit, AllMembers: true})
}

// UnitRelationsObserving is UnitRelations listing members only for relations of these
// endpoints (an agent: those its charm has hooks for).
func (c *Client) UnitRelationsObserving(ctx context.Context, model, unit string, endpoints []string) ([]*jujupb.AgentRelation, error) {
	return c.unitRelations(ctx, &jujupb.UnitRelationsRequest{Model: c.model(model), Unit: unit, MemberEndpoints: endpoints})
}

func (c *Client) unitRelations(ctx context.Context, req *jujupb.UnitRelationsRequest) ([]*jujupb.AgentRelation, error) {
	resp, err := invoke(ctx, c, c.agent.UnitRelations, req)
	if err != nil {
		return nil, err
	}
	return resp.GetRelations(), nil
}

// UnitWorld is a unit agent's read of its world in one call: its unit, application (nil once
// gone), relations (members listed for endpoints, or for all) and, with tasks, its task queue.
func (c *Client) UnitWorld(ctx context.Context, req *jujupb.UnitWorldRequest) (*jujupb.UnitWorldResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.agent.UnitWorld, req)
}

// MachineWorld is a machine agent's read in one call: its machine (when asked), its principal
// units and, with tasks, its task queue.
func (c *Client) MachineWorld(ctx context.Context, req *jujupb.MachineWorldRequest) (*jujupb.MachineWorldResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.agent.MachineWorld, req)
}

// EnterScope writes a unit's settings and enters a relation's scope.
func (c *Client) EnterScope(ctx context.Context, req *jujupb.ScopeRequest) (*jujupb.ScopeResponse, error) {
	req.Model = c.model(req.GetModel())
	return invoke(ctx, c, c.agent.EnterScope, req)
}

// LeaveScope leaves a relation's scope.
func (c *Client) LeaveScope(ctx context.Context, model, unit string, relationID int64) error {
	_, err := invoke(ctx, c, c.agent.LeaveScope, &jujupb.ScopeRequest{Model: c.model(model), Unit: unit, RelationId: relationID})
	return err
}

// SetUnitDying sets a unit dying (no-op if it is not alive) and returns its life.
func (c *Client) SetUnitDying(ctx context.Context, model, unit string) (string, error) {
	return c.lifeCall(ctx, c.agent.SetUnitDying, model, unit)
}

// EnsureUnitDead sets a dying unit dead once nothing holds it, and returns its life.
func (c *Client) EnsureUnitDead(ctx context.Context, model, unit string) (string, error) {
	return c.lifeCall(ctx, c.agent.EnsureUnitDead, model, unit)
}

// RemoveUnit removes a dead (or never deployed) unit; only its deployer may.
func (c *Client) RemoveUnit(ctx context.Context, model, unit string) error {
	_, err := c.lifeCall(ctx, c.agent.RemoveUnit, model, unit)
	return err
}

// EnsureMachineDead sets a dying machine dead once nothing holds it, and returns its life.
func (c *Client) EnsureMachineDead(ctx context.Context, model, id string) (string, error) {
	return c.lifeCall(ctx, c.agent.EnsureMachineDead, model, id)
}

func (c *Client) lifeCall(ctx context.Context,
	call func(context.Context, *jujupb.AgentEntity, ...grpc.CallOption) (*jujupb.LifeResponse, error),
	model, id string) (string, error) {
	resp, err := invoke(ctx, c, call, &jujupb.AgentEntity{Model: c.model(model), Id: id})
	if err != nil {
		return "", err
	}
	return resp.GetLife(), nil
}
