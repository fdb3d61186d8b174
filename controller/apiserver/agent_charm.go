package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/names"
)

// What a unit's charm reads of the model beyond its relations (status-get --application,
// goal-state, credential-get) and the state it keeps in the controller (state-get, state-set).

func (s *agentServer) ApplicationStatus(ctx context.Context, req *pb.AgentEntity) (*pb.ApplicationStatusResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	app, _ := names.UnitApplication(req.Id)
	leader, err := s.st.Leader(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	if leader != req.Id {
		return nil, apierr.Errorf(apierr.PermissionDenied, "finding application status: this unit is not the leader")
	}
	a, err := s.st.Application(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	units, err := s.st.ApplicationUnits(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	resp := &pb.ApplicationStatusResponse{Application: statusInfo(a.Status), Units: map[string]*pb.StatusInfo{}}
	if resp.Application == nil || resp.Application.Status == "" {
		resp.Application = &pb.StatusInfo{Status: "unknown"}
	}
	for _, u := range units {
		resp.Units[u.Name] = statusInfo(u.WorkloadStatus)
	}
	return resp, nil
}

func (s *agentServer) CharmState(ctx context.Context, req *pb.AgentEntity) (*pb.CharmStateResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	st, err := s.st.CharmState(ctx, uuid, req.Id)
	if err != nil {
		return nil, err
	}
	return &pb.CharmStateResponse{State: st}, nil
}

func (s *agentServer) SetCharmState(ctx context.Context, req *pb.SetCharmStateRequest) (*pb.SetStatusResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	return &pb.SetStatusResponse{}, s.st.SetCharmState(ctx, uuid, req.Unit, req.State)
}

func (s *agentServer) GoalState(ctx context.Context, req *pb.AgentEntity) (*pb.GoalStateResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	app, _ := names.UnitApplication(req.Id) // ownUnit checked the name
	gs, err := s.st.GoalState(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	resp := &pb.GoalStateResponse{Units: map[string]*pb.GoalStatus{}, Relations: map[string]*pb.GoalRelation{}}
	for name, g := range gs.Units {
		resp.Units[name] = &pb.GoalStatus{Status: g.Status, Since: g.Since}
	}
	for ep, members := range gs.Relations {
		r := &pb.GoalRelation{Members: map[string]*pb.GoalStatus{}}
		for name, g := range members {
			r.Members[name] = &pb.GoalStatus{Status: g.Status, Since: g.Since}
		}
		resp.Relations[ep] = r
	}
	return resp, nil
}

// GetCloudSpec answers credential-get: the model's cloud, for a unit of a trusted application.
func (s *agentServer) GetCloudSpec(ctx context.Context, req *pb.AgentEntity) (*pb.CloudSpec, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	app, _ := names.UnitApplication(req.Id) // ownUnit checked the name
	spec, err := s.st.TrustedCloudSpec(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	return &pb.CloudSpec{Type: spec.Type, Name: spec.Name, Region: spec.Region, Endpoint: spec.Endpoint,
		Credential:        &pb.CloudCredential{AuthType: spec.AuthType, Attrs: spec.Attributes},
		IsControllerCloud: spec.Name == s.cfg.Cloud}, nil
}
