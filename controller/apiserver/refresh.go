package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/names"
)

// SetCharm switches an application to an uploaded charm (juju refresh), with the config values
// and the force-units flag given; state checks the new charm against the old, the
// application's relations and the config, and switches in one transaction.
func (s *applicationServer) SetCharm(ctx context.Context, req *pb.SetCharmRequest) (*pb.SetCharmResponse, error) {
	if !names.IsValidApplication(req.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	if req.CharmUrl == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no charm url given")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	previous, err := s.st.SetApplicationCharm(ctx, m.Uuid, req.Application, state.SetCharmArgs{
		CharmURL: req.CharmUrl, ForceUnits: req.ForceUnits, Config: req.Config, Resources: req.Resources,
	})
	if err != nil {
		return nil, err
	}
	return &pb.SetCharmResponse{PreviousCharmUrl: previous}, nil
}

// SetUnitCharm: a unit's own agent reports the charm it now runs (before its upgrade-charm
// hook); state refuses any charm but the application's current one.
func (s *agentServer) SetUnitCharm(ctx context.Context, req *pb.SetUnitCharmRequest) (*pb.SetStatusResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if req.CharmUrl == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no charm url given")
	}
	return &pb.SetStatusResponse{}, s.st.SetUnitCharm(ctx, uuid, req.Unit, req.CharmUrl)
}
