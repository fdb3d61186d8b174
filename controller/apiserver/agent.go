package apiserver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
)

// agentServer answers machine and unit agents about their own entities only.
type agentServer struct {
	pb.UnimplementedAgentServiceServer
	*service
}

var errDenied = apierr.Errorf(apierr.PermissionDenied, "permission denied")

// agentModel checks the caller may act in model and returns its UUID.
func (s *agentServer) agentModel(ctx context.Context, model string) (string, Entity, error) {
	e := entityFrom(ctx)
	if e.IsAdmin() {
		m, err := s.model(ctx, model)
		if err != nil {
			return "", e, err
		}
		return m.Uuid, e, nil
	}
	if model != e.Model {
		return "", e, errDenied
	}
	return e.Model, e, nil
}

// canActOnMachine: the admin, or the machine's own agent.
func canActOnMachine(e Entity, id string) bool {
	return e.IsAdmin() || (e.Kind == "machine" && e.ID == id)
}

// ownMachine resolves the model of a call the admin or the machine's own agent makes.
func (s *agentServer) ownMachine(ctx context.Context, model, id string) (string, error) {
	uuid, e, err := s.agentModel(ctx, model)
	if err != nil {
		return "", err
	}
	if !canActOnMachine(e, id) {
		return "", errDenied
	}
	return uuid, nil
}

// unitFor reads a unit the caller may act on: the admin, the unit itself, or its deployer (the
// machine agent it is assigned to; for a subordinate, its principal's agent).
func (s *agentServer) unitFor(ctx context.Context, uuid string, e Entity, name string) (*storepb.Unit, error) {
	u, err := s.st.Unit(ctx, uuid, name)
	if err != nil {
		if e.IsAdmin() {
			return nil, err
		}
		return nil, errDenied
	}
	if !e.IsAdmin() && e.ID != name && !isDeployer(e, u) {
		return nil, errDenied
	}
	return u, nil
}

// isDeployer: the machine agent of a principal's machine, or a subordinate's principal (L-U3).
func isDeployer(e Entity, u *storepb.Unit) bool {
	if u.Principal != "" {
		return e.Kind == "unit" && e.ID == u.Principal
	}
	return e.Kind == "machine" && u.MachineId != "" && e.ID == u.MachineId
}

// ownUnit: only the unit's own agent (or the admin) acts for it in relations and its life.
func (s *agentServer) ownUnit(ctx context.Context, model, name string) (string, error) {
	uuid, e, err := s.agentModel(ctx, model)
	if err != nil {
		return "", err
	}
	if !e.IsAdmin() && !(e.Kind == "unit" && e.ID == name) {
		return "", errDenied
	}
	return uuid, nil
}

func (s *agentServer) GetApplication(ctx context.Context, req *pb.AgentEntity) (*pb.AgentApplication, error) {
	uuid, e, err := s.agentModel(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if !e.IsAdmin() {
		app, _ := names.UnitApplication(e.ID)
		if e.Kind != "unit" || app != req.Id {
			return nil, errDenied
		}
	}
	app, err := s.st.ReadAgentApplication(ctx, uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return agentApplication(app), nil
}

func agentApplication(app *state.AgentApplication) *pb.AgentApplication {
	return &pb.AgentApplication{Name: app.Name, Life: app.Life, Subordinate: app.Subordinate, ConfigJson: app.ConfigJSON,
		Leader: app.Leader, LeaderSettingsRevision: app.LeaderSettingsRevision, CharmUrl: app.CharmUrl,
		ModelName: app.ModelName, UpdateStatusIntervalSeconds: int64(modelconfig.UpdateStatusInterval(app.ModelConfig) / time.Second),
		ModelConfig: modelconfig.Effective(app.ModelConfig), Trust: app.Trust,
		CharmModifiedVersion: app.CharmModifiedVersion, ForceCharm: app.ForceCharm}
}

func (s *agentServer) UnitRelations(ctx context.Context, req *pb.UnitRelationsRequest) (*pb.AgentRelations, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	rels, err := s.st.UnitRelations(ctx, uuid, req.Unit, membersOf(req.AllMembers, req.MemberEndpoints))
	if err != nil {
		return nil, err
	}
	return &pb.AgentRelations{Relations: agentRelations(rels)}, nil
}

// membersOf: whose relations' members a listing of a unit's relations gives.
func membersOf(all bool, endpoints []string) func(endpoint string) bool {
	return func(endpoint string) bool { return all || slices.Contains(endpoints, endpoint) }
}

func agentRelations(rels []state.UnitRelation) []*pb.AgentRelation {
	var out []*pb.AgentRelation
	for _, ur := range rels {
		ar := &pb.AgentRelation{
			Id: ur.Relation.Id, Key: ur.Relation.Key, Life: ur.Relation.Life, Endpoint: ur.Own.Name,
			RemoteApplication: ur.Other.Application, RemoteEndpoint: ur.Other.Name,
			Container: ur.Own.Scope == "container", InScope: ur.InScope, ShouldJoin: ur.ShouldJoin,
			Interface: ur.Own.Interface,
		}
		ar.RemoteAppSettingsRevision = ur.RemoteAppSettingsRevision
		for _, m := range ur.Members {
			ar.Members = append(ar.Members, &pb.RelationMember{Unit: m.Unit, SettingsRevision: m.SettingsRevision})
		}
		out = append(out, ar)
	}
	return out
}

func (s *agentServer) EnterScope(ctx context.Context, req *pb.ScopeRequest) (*pb.ScopeResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if err := s.ownRelation(ctx, uuid, req.Unit, req.RelationId); err != nil {
		return nil, err
	}
	sub, err := s.st.EnterScope(ctx, uuid, req.RelationId, req.Unit, req.Settings)
	if err != nil {
		return nil, err
	}
	return &pb.ScopeResponse{Subordinate: sub, InScope: true}, nil
}

func (s *agentServer) LeaveScope(ctx context.Context, req *pb.ScopeRequest) (*pb.ScopeResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if err := s.ownRelation(ctx, uuid, req.Unit, req.RelationId); err != nil {
		return nil, err
	}
	return &pb.ScopeResponse{}, s.st.LeaveScope(ctx, uuid, req.RelationId, req.Unit)
}

func (s *agentServer) SetUnitDying(ctx context.Context, req *pb.AgentEntity) (*pb.LifeResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	l, err := s.st.SetUnitDying(ctx, uuid, req.Id)
	return &pb.LifeResponse{Life: l}, err
}

func (s *agentServer) EnsureUnitDead(ctx context.Context, req *pb.AgentEntity) (*pb.LifeResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	l, err := s.st.EnsureUnitDead(ctx, uuid, req.Id)
	return &pb.LifeResponse{Life: l}, err
}

func (s *agentServer) RemoveUnit(ctx context.Context, req *pb.AgentEntity) (*pb.LifeResponse, error) {
	uuid, e, err := s.agentModel(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	u, err := s.st.Unit(ctx, uuid, req.Id)
	if errors.Is(err, apierr.NotFound) {
		return &pb.LifeResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	if !e.IsAdmin() && !isDeployer(e, u) {
		return nil, errDenied // L-U3: only the deployer removes a unit
	}
	return &pb.LifeResponse{}, s.st.RemoveUnit(ctx, uuid, req.Id)
}

func (s *agentServer) EnsureMachineDead(ctx context.Context, req *pb.AgentEntity) (*pb.LifeResponse, error) {
	uuid, err := s.ownMachine(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	l, err := s.st.EnsureMachineDead(ctx, uuid, req.Id)
	return &pb.LifeResponse{Life: l}, err
}

func (s *agentServer) GetMachine(ctx context.Context, req *pb.AgentEntity) (*pb.AgentMachine, error) {
	uuid, err := s.ownMachine(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	m, err := s.st.Machine(ctx, uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return agentMachine(m), nil
}

func agentMachine(m *storepb.Machine) *pb.AgentMachine {
	return &pb.AgentMachine{
		Id: m.Id, Life: m.Life, InstanceId: m.InstanceId, Base: pbBase(m.Base), Jobs: m.Jobs, Constraints: m.Constraints,
	}
}

func (s *agentServer) SetMachineStatus(ctx context.Context, req *pb.SetStatusRequest) (*pb.SetStatusResponse, error) {
	uuid, err := s.ownMachine(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	if req.Status == nil || req.Status.Status == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no status given")
	}
	return &pb.SetStatusResponse{}, s.st.SetMachineStatus(ctx, uuid, req.Id, req.Status.Status, req.Status.Message)
}

func (s *agentServer) MachineUnits(ctx context.Context, req *pb.AgentEntity) (*pb.AgentUnits, error) {
	uuid, err := s.ownMachine(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	units, err := s.st.MachineUnits(ctx, uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return &pb.AgentUnits{Units: agentUnits(units)}, nil
}

func agentUnits(units []*storepb.Unit) []*pb.AgentUnit {
	out := make([]*pb.AgentUnit, 0, len(units))
	for _, u := range units {
		out = append(out, agentUnit(u))
	}
	return out
}

func (s *agentServer) GetUnit(ctx context.Context, req *pb.AgentEntity) (*pb.AgentUnit, error) {
	uuid, e, err := s.agentModel(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	u, err := s.unitFor(ctx, uuid, e, req.Id)
	if err != nil {
		return nil, err
	}
	return agentUnit(u), nil
}

func (s *agentServer) SetUnitPassword(ctx context.Context, req *pb.SetPasswordRequest) (*pb.SetPasswordResponse, error) {
	uuid, e, err := s.agentModel(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	u, err := s.unitFor(ctx, uuid, e, req.Id)
	if err != nil {
		return nil, err
	}
	if !e.IsAdmin() && !isDeployer(e, u) {
		return nil, errDenied // only the deployer sets a unit's credential
	}
	if len(req.Password) < 16 {
		return nil, apierr.Errorf(apierr.NotValid, "password too short")
	}
	return &pb.SetPasswordResponse{}, s.st.SetUnitPassword(ctx, uuid, req.Id, state.HashPassword(req.Password))
}

func (s *agentServer) SetUnitStatus(ctx context.Context, req *pb.SetUnitStatusRequest) (*pb.SetStatusResponse, error) {
	uuid, e, err := s.agentModel(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if _, err := s.unitFor(ctx, uuid, e, req.Id); err != nil {
		return nil, err
	}
	st := state.UnitStatus{PublicAddress: req.PublicAddress}
	if req.AgentStatus != nil {
		st.Agent = &storepb.Status{Status: req.AgentStatus.Status, Message: req.AgentStatus.Message}
	}
	if req.WorkloadStatus != nil {
		st.Workload = &storepb.Status{Status: req.WorkloadStatus.Status, Message: req.WorkloadStatus.Message}
	}
	return &pb.SetStatusResponse{}, s.st.SetUnitStatus(ctx, uuid, req.Id, st)
}

func (s *agentServer) GetCharmArchive(ctx context.Context, req *pb.CharmRef) (*pb.CharmArchive, error) {
	uuid, e, err := s.agentModel(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.mayDownloadCharm(ctx, uuid, e, req.Url); err != nil {
		return nil, err
	}
	data, err := s.st.CharmArchive(ctx, uuid, req.Url)
	if err != nil {
		return nil, err
	}
	return &pb.CharmArchive{Url: req.Url, Archive: data}, nil
}

func agentUnit(u *storepb.Unit) *pb.AgentUnit {
	return &pb.AgentUnit{
		Name: u.Name, Application: u.Application, Life: u.Life, CharmUrl: u.CharmUrl, Machine: u.MachineId,
		Principal: u.Principal, AgentStatus: statusInfo(u.AgentStatus), WorkloadStatus: statusInfo(u.WorkloadStatus),
		Subordinates: u.Subordinates, Scopes: u.Scopes, Deployed: u.PasswordHash != "",
		Resolved: u.Resolved, OpenPorts: u.OpenPorts, PublicAddress: u.PublicAddress,
	}
}
