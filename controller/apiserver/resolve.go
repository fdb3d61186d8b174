package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/constraints"
	"github.com/jujuclone/juju/core/names"
)

// ResolveUnitErrors is `juju resolved` (L-U2): every named unit, or with all every unit in
// error, is marked for its agent to retry or skip the failed hook. Each result carries its own
// error, as in Juju.
func (s *applicationServer) ResolveUnitErrors(ctx context.Context, req *pb.ResolveUnitErrorsRequest) (*pb.ResolveUnitErrorsResponse, error) {
	if req.All && len(req.Units) > 0 {
		return nil, apierr.Errorf(apierr.NotValid, "specifying unit names(s) with --all not supported")
	}
	if !req.All && len(req.Units) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "no unit specified")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	units := req.Units
	if req.All {
		if units, err = s.st.UnitsInError(ctx, m.Uuid); err != nil {
			return nil, err
		}
	}
	resp := &pb.ResolveUnitErrorsResponse{}
	for _, name := range units {
		res := &pb.ResolveResult{Name: name}
		resp.Results = append(resp.Results, res)
		if !names.IsValidUnit(name) {
			res.Error = apierr.Errorf(apierr.NotValid, "unit name %q not valid", name).Error()
			continue
		}
		next, err := s.st.ResolveUnit(ctx, m.Uuid, name, req.Retry)
		if err != nil {
			res.Error = err.Error()
			continue
		}
		res.Next = next
	}
	return resp, nil
}

// RetryProvisioning makes machines whose provisioning failed eligible again (L-M5), replacing
// their constraints when asked (seed 002). Each result carries its own error.
func (s *machineServer) RetryProvisioning(ctx context.Context, req *pb.RetryProvisioningRequest) (*pb.RemoveResponse, error) {
	if req.All && len(req.Machines) > 0 {
		return nil, apierr.Errorf(apierr.NotValid, "specify machines or --all but not both")
	}
	if !req.All && len(req.Machines) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "no machine specified")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	// Given constraints are meant to be used: they replace the machine's even without the flag.
	// They are the same for every machine, so bad ones fail the whole call.
	replace := req.ReplaceConstraints || req.Constraints != ""
	if replace {
		v, err := constraints.Parse(req.Constraints)
		if err == nil {
			err = constraints.Validate(v)
		}
		if err != nil {
			return nil, apierr.Errorf(apierr.NotValid, "%v", err)
		}
	}
	machines := req.Machines
	if req.All {
		if machines, err = s.st.MachinesWithProvisioningErrors(ctx, m.Uuid); err != nil {
			return nil, err
		}
	}
	resp := &pb.RemoveResponse{}
	for _, id := range machines {
		res := &pb.RemoveResult{Name: id}
		resp.Results = append(resp.Results, res)
		if !names.IsValidMachine(id) {
			res.Error = apierr.Errorf(apierr.NotValid, "invalid machine %q", id).Error()
			continue
		}
		if err := s.st.RetryProvisioning(ctx, m.Uuid, id, req.Constraints, replace); err != nil {
			res.Error = err.Error()
		}
	}
	return resp, nil
}

// GetConfig returns an application's config: every option of its charm, sorted by name, with
// its type, description, default and value (JSON) and where the value comes from; and the same
// of Juju's application config (trust).
func (s *applicationServer) GetConfig(ctx context.Context, req *pb.ApplicationRef) (*pb.ApplicationConfig, error) {
	if !names.IsValidApplication(req.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	cfg, err := s.st.ApplicationConfig(ctx, m.Uuid, req.Application)
	if err != nil {
		return nil, err
	}
	resp := &pb.ApplicationConfig{Application: cfg.Application, Charm: cfg.CharmURL}
	option := func(set state.ConfigSetting) *pb.ConfigOption {
		return &pb.ConfigOption{
			Name: set.Option.Name, Type: set.Option.Type, Description: set.Option.Description,
			DefaultJson: set.DefaultJSON, ValueJson: set.ValueJSON, Source: set.Source,
		}
	}
	for _, set := range cfg.Settings {
		resp.Options = append(resp.Options, option(set))
	}
	for _, set := range cfg.ApplicationSettings {
		resp.ApplicationOptions = append(resp.ApplicationOptions, option(set))
	}
	return resp, nil
}

// SetConfig sets values (converted to their options' types) and resets options to their
// defaults; unit agents see the change through their application document (config-changed).
func (s *applicationServer) SetConfig(ctx context.Context, req *pb.SetConfigRequest) (*pb.SetConfigResponse, error) {
	if !names.IsValidApplication(req.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", req.Application)
	}
	if len(req.Values) == 0 && len(req.Reset_) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "no config values to set or reset")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.SetApplicationConfig(ctx, m.Uuid, req.Application, req.Values, req.Reset_); err != nil {
		return nil, err
	}
	return &pb.SetConfigResponse{}, nil
}
