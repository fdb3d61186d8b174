package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/names"
)

type applicationServer struct {
	pb.UnimplementedApplicationServiceServer
	*service
}

// maxMessageSize lets a charm archive of state.MaxCharmArchive bytes through gRPC in either
// direction (UploadCharm, GetCharmArchive), with room for the rest of the message.
const maxMessageSize = state.MaxCharmArchive + 1<<20

// UploadCharm stores a charm archive after state.AddCharm has checked it again (metadata,
// dispatch, entry names and links, size limits): the controller trusts no client.
func (s *applicationServer) UploadCharm(ctx context.Context, req *pb.UploadCharmRequest) (*pb.UploadCharmResponse, error) {
	if len(req.Archive) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "invalid charm archive: empty")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	ch, err := s.st.AddCharm(ctx, m.Uuid, req.Archive)
	if err != nil {
		return nil, err
	}
	return &pb.UploadCharmResponse{Url: ch.Url, Revision: ch.Revision}, nil
}

// Deploy creates the application with its units and their machines in one transaction
// (state.AddApplication): a refused deploy leaves nothing behind.
func (s *applicationServer) Deploy(ctx context.Context, req *pb.DeployRequest) (*pb.DeployResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	b := ""
	if req.Base != nil {
		b = req.Base.Name + "@" + req.Base.Channel
	}
	// As in Juju, --config may set the application config option trust as well as the charm's.
	values, trust, _, err := state.SplitTrust(req.Config)
	if err != nil {
		return nil, err
	}
	// Typed against the charm's config.yaml and stored in their JSON form (state/config.go).
	config, err := s.st.DeployConfig(ctx, m.Uuid, req.CharmUrl, values)
	if err != nil {
		return nil, err
	}
	if req.NumUnits > 0 {
		if err := s.checkCapacity(ctx, "units"); err != nil {
			return nil, err
		}
	}
	_, units, err := s.st.AddApplication(ctx, m.Uuid, state.DeployArgs{
		Name: req.Application, CharmURL: req.CharmUrl, Base: b, Constraints: req.Constraints,
		Config: config, Trust: req.Trust || trust, NumUnits: int(req.NumUnits), Placements: placements(req.Placement),
		Resources: req.Resources,
	})
	if err != nil {
		return nil, err
	}
	return &pb.DeployResponse{Units: units}, nil
}

func (s *applicationServer) AddUnits(ctx context.Context, req *pb.AddUnitsRequest) (*pb.AddUnitsResponse, error) {
	if err := names.ValidateApplicationName(req.Application); err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	if req.NumUnits < 1 {
		return nil, apierr.Errorf(apierr.NotValid, "--num-units must be a positive integer")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.checkCapacity(ctx, "units"); err != nil {
		return nil, err
	}
	units, err := s.st.AddUnits(ctx, m.Uuid, req.Application, int(req.NumUnits), placements(req.Placement))
	if err != nil {
		return nil, err
	}
	return &pb.AddUnitsResponse{Units: units}, nil
}

func (s *applicationServer) GetConstraints(ctx context.Context, req *pb.ApplicationRef) (*pb.Constraints, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	app, err := s.st.Application(ctx, m.Uuid, req.Application)
	if err != nil {
		return nil, err
	}
	return &pb.Constraints{Value: app.Constraints}, nil
}

func (s *applicationServer) SetConstraints(ctx context.Context, req *pb.SetConstraintsRequest) (*pb.SetConstraintsResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.SetApplicationConstraints(ctx, m.Uuid, req.Application, req.Constraints); err != nil {
		return nil, err
	}
	return &pb.SetConstraintsResponse{}, nil
}

func placements(ps []*pb.Placement) []state.Placement {
	out := make([]state.Placement, 0, len(ps))
	for _, p := range ps {
		out = append(out, state.Placement{Scope: p.Scope, Directive: p.Directive})
	}
	return out
}
