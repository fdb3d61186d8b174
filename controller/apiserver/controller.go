package apiserver

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/status"
	"github.com/jujuclone/juju/core/version"
)

type controllerServer struct {
	pb.UnimplementedControllerServiceServer
	*service
}

func (s *controllerServer) Version(ctx context.Context, _ *pb.VersionRequest) (*pb.VersionResponse, error) {
	ctrl, err := s.st.Controller(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.VersionResponse{Version: version.Current, Time: s.cfg.Now().UnixNano(), ControllerUuid: ctrl.Uuid}, nil
}

func (s *controllerServer) ListModels(ctx context.Context, _ *pb.ListModelsRequest) (*pb.ListModelsResponse, error) {
	models, err := s.st.ListModels(ctx)
	if err != nil {
		return nil, err
	}
	resp := &pb.ListModelsResponse{}
	for _, m := range models {
		v := modelView(m.Model)
		v.MachineCount, v.UnitCount = int32(m.Machines), int32(m.Units)
		resp.Models = append(resp.Models, v)
	}
	return resp, nil
}

func (s *controllerServer) AddModel(ctx context.Context, req *pb.AddModelRequest) (*pb.Model, error) {
	m, err := s.st.AddModelWithConfig(ctx, req.Name, "admin", req.Constraints, s.cfg.Cloud, s.cfg.Region, req.Config)
	if err != nil {
		return nil, err
	}
	return modelView(m), nil
}

func (s *controllerServer) GetModel(ctx context.Context, req *pb.ModelRef) (*pb.Model, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	return modelView(m), nil
}

func (s *controllerServer) GetModelConstraints(ctx context.Context, req *pb.ModelRef) (*pb.Constraints, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	return &pb.Constraints{Value: m.Constraints}, nil
}

func (s *controllerServer) SetModelConstraints(ctx context.Context, req *pb.SetModelConstraintsRequest) (*pb.SetModelConstraintsResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.SetModelConstraints(ctx, m.Uuid, req.Constraints); err != nil {
		return nil, err
	}
	return &pb.SetModelConstraintsResponse{}, nil
}

func modelView(m *storepb.Model) *pb.Model {
	st := status.Available
	if m.Life != "alive" {
		st = status.Destroying
	}
	return &pb.Model{
		Name: m.Name, Uuid: m.Uuid, Owner: m.Owner, Life: m.Life, Cloud: m.Cloud, Region: m.Region,
		Type: "iaas", Constraints: m.Constraints, DefaultBase: m.DefaultBase, Created: m.Created,
		Status: &pb.StatusInfo{Status: string(st)}, Config: m.Config,
	}
}
