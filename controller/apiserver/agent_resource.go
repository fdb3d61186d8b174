package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/names"
)

// GetResource answers resource-get: only the unit's own agent, and only about its own
// application's resources (the name is looked up in the unit's application).
func (s *agentServer) GetResource(ctx context.Context, req *pb.AgentResourceRequest) (*pb.AgentResourceResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no resource name given")
	}
	res, content, err := s.st.OpenUnitResource(ctx, uuid, req.Unit, req.Name, req.Fingerprint)
	if err != nil {
		return nil, err
	}
	app, _ := names.UnitApplication(req.Unit) // the unit exists: its name is valid
	return &pb.AgentResourceResponse{Resource: resourceProto(app, res), Content: content}, nil
}
