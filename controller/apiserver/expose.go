package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/names"
)

// Expose merges the endpoints' exposure into the application's (juju expose); no endpoint
// exposes every one from every network. State checks spaces, endpoints and CIDRs before the
// one write.
func (s *applicationServer) Expose(ctx context.Context, req *pb.ExposeRequest) (*pb.ExposeResponse, error) {
	if !names.IsValidApplication(req.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	entries := make([]*storepb.ExposedEndpointDoc, 0, len(req.Endpoints))
	for _, e := range req.Endpoints {
		entries = append(entries, &storepb.ExposedEndpointDoc{Endpoint: e.Endpoint, ToSpaces: e.ToSpaces, ToCidrs: e.ToCidrs})
	}
	if err := s.st.ExposeApplication(ctx, m.Uuid, req.Application, entries); err != nil {
		return nil, err
	}
	return &pb.ExposeResponse{}, nil
}

// Unexpose removes the named endpoints' exposure, or all of it (juju unexpose).
func (s *applicationServer) Unexpose(ctx context.Context, req *pb.UnexposeRequest) (*pb.UnexposeResponse, error) {
	if !names.IsValidApplication(req.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.UnexposeApplication(ctx, m.Uuid, req.Application, req.Endpoints); err != nil {
		return nil, err
	}
	return &pb.UnexposeResponse{}, nil
}

// exposedEndpoints is an application's exposure as status shows it.
func exposedEndpoints(docs []*storepb.ExposedEndpointDoc) []*pb.ExposedEndpoint {
	if len(docs) == 0 {
		return nil
	}
	out := make([]*pb.ExposedEndpoint, 0, len(docs))
	for _, d := range docs {
		out = append(out, &pb.ExposedEndpoint{Endpoint: d.Endpoint, ToSpaces: d.ToSpaces, ToCidrs: d.ToCidrs})
	}
	return out
}
