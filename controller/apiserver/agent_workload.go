package apiserver

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// The calls a unit agent makes for its workload: its ports (open-port, close-port), its
// application's workload version (application-version-set), and acting on `juju resolved`.
// Only the unit's own agent (or the admin) makes them.

func (s *agentServer) SetUnitPorts(ctx context.Context, req *pb.SetUnitPortsRequest) (*pb.SetUnitPortsResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	open, err := s.st.SetUnitPorts(ctx, uuid, req.Unit, req.Open, req.Close)
	if err != nil {
		return nil, err
	}
	return &pb.SetUnitPortsResponse{OpenPorts: open}, nil
}

func (s *agentServer) SetApplicationVersion(ctx context.Context, req *pb.SetApplicationVersionRequest) (*pb.SetStatusResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if err := s.st.SetApplicationVersion(ctx, uuid, req.Unit, req.Version); err != nil {
		return nil, err
	}
	return &pb.SetStatusResponse{}, nil
}

func (s *agentServer) ClearResolved(ctx context.Context, req *pb.AgentEntity) (*pb.SetStatusResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	if err := s.st.ClearResolved(ctx, uuid, req.Id); err != nil {
		return nil, err
	}
	return &pb.SetStatusResponse{}, nil
}
