package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/modelconfig"
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
	// The Juju version the controller implements, as Juju's controllers report theirs (the
	// client records it as the controller's agent-version).
	return &pb.VersionResponse{Version: version.Juju, Time: s.cfg.Now().UnixNano(), ControllerUuid: ctrl.Uuid,
		ApiAddresses: s.apiAddresses(ctx)}, nil
}

func (s *controllerServer) ListModels(ctx context.Context, _ *pb.ListModelsRequest) (*pb.ListModelsResponse, error) {
	models, err := s.st.ListModels(ctx)
	if err != nil {
		return nil, err
	}
	defaults, err := s.st.ModelDefaults(ctx)
	if err != nil {
		return nil, err
	}
	resp := &pb.ListModelsResponse{}
	for _, m := range models {
		v := modelView(m.Model, defaults)
		v.MachineCount, v.UnitCount, v.ApplicationCount = int32(m.Machines), int32(m.Units), int32(m.Applications)
		resp.Models = append(resp.Models, v)
	}
	return resp, nil
}

func (s *controllerServer) AddModel(ctx context.Context, req *pb.AddModelRequest) (*pb.Model, error) {
	// One cloud with one region: anything else names a cloud or region this controller lacks.
	if req.Cloud != "" && req.Cloud != s.cfg.Cloud {
		return nil, apierr.Errorf(apierr.NotFound, "cloud %q not found", req.Cloud)
	}
	if req.Region != "" && req.Region != s.cfg.Region {
		return nil, apierr.Errorf(apierr.NotFound, "region %q not found (expected one of [%q])", req.Region, s.cfg.Region)
	}
	m, err := s.st.AddModelWithConfig(ctx, req.Name, "admin", req.Constraints, s.cfg.Cloud, s.cfg.Region, req.Config)
	if err != nil {
		return nil, err
	}
	return s.modelView(ctx, m)
}

func (s *controllerServer) GetModel(ctx context.Context, req *pb.ModelRef) (*pb.Model, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	return s.modelView(ctx, m)
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

func (s *controllerServer) GetModelConfig(ctx context.Context, req *pb.ModelRef) (*pb.ModelConfig, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	defaults, err := s.st.ModelDefaults(ctx)
	if err != nil {
		return nil, err
	}
	out := &pb.ModelConfig{}
	for _, v := range modelconfig.Values(defaults, m.Config) {
		out.Values = append(out.Values, &pb.ModelConfigValue{Key: v.Key.Name, Value: v.Value, Source: v.Source})
	}
	return out, nil
}

func (s *controllerServer) SetModelConfig(ctx context.Context, req *pb.SetModelConfigRequest) (*pb.SetModelConfigResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.SetModelConfig(ctx, m.Uuid, req.Set, req.Reset_); err != nil {
		return nil, err
	}
	return &pb.SetModelConfigResponse{}, nil
}

func (s *controllerServer) GetModelDefaults(ctx context.Context, _ *pb.GetModelDefaultsRequest) (*pb.ModelDefaults, error) {
	defaults, err := s.st.ModelDefaults(ctx)
	if err != nil {
		return nil, err
	}
	out := &pb.ModelDefaults{}
	for _, name := range modelconfig.Keys() {
		k, _ := modelconfig.Lookup(name)
		v, set := defaults[name]
		out.Values = append(out.Values, &pb.ModelDefault{Key: name, Default: k.Default, Controller: v, ControllerSet: set})
	}
	return out, nil
}

func (s *controllerServer) SetModelDefaults(ctx context.Context, req *pb.SetModelDefaultsRequest) (*pb.SetModelDefaultsResponse, error) {
	if err := s.st.SetModelDefaults(ctx, req.Set, req.Reset_); err != nil {
		return nil, err
	}
	return &pb.SetModelDefaultsResponse{}, nil
}

// modelView is modelView with the controller's model defaults read.
func (s *controllerServer) modelView(ctx context.Context, m *storepb.Model) (*pb.Model, error) {
	defaults, err := s.st.ModelDefaults(ctx)
	if err != nil {
		return nil, err
	}
	return modelView(m, defaults), nil
}

// modelView is a model as the API shows it: its configuration as set, with the controller's
// model defaults inherited (defaults).
func modelView(m *storepb.Model, defaults map[string]string) *pb.Model {
	config := modelconfig.Inherit(defaults, m.Config)
	st, since := status.Available, m.Created // available from its creation
	if m.Life != "alive" {
		st, since = status.Destroying, 0
	}
	return &pb.Model{
		Name: m.Name, Uuid: m.Uuid, Owner: m.Owner, Life: m.Life, Cloud: m.Cloud, Region: m.Region,
		Type: "iaas", Constraints: m.Constraints, DefaultBase: config[modelconfig.DefaultBase], Created: m.Created,
		Status: &pb.StatusInfo{Status: string(st), Since: since}, Config: config, AgentVersion: version.Juju,
	}
}
