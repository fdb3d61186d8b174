package apiserver

import (
	"context"
	"strconv"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/names"
)

// DefaultForceGrace is how long a forced removal waits for agents before the controller does
// their work (L-F1); --no-wait makes it zero.
const DefaultForceGrace = time.Minute

// destroyOptions turns a remove request's flags into state's options.
func (b *service) destroyOptions(req *pb.RemoveRequest) (state.DestroyOptions, error) {
	if req.NoWait && !req.Force {
		return state.DestroyOptions{}, apierr.Errorf(apierr.NotValid, "--no-wait without --force not valid")
	}
	opts := state.DestroyOptions{DryRun: req.DryRun, KeepInstance: req.KeepInstance}
	if req.Force {
		grace := b.cfg.ForceGrace
		if req.NoWait {
			grace = 0
		}
		opts.ForceAfter = b.cfg.Now().Add(grace).UnixNano()
	}
	return opts, nil
}

type destroyFunc func(ctx context.Context, uuid, name string, opts state.DestroyOptions) (state.Removal, error)

// removeEach runs destroy for every name; each result carries its own error (Juju reports
// per entity and goes on with the others).
func (b *service) removeEach(ctx context.Context, req *pb.RemoveRequest, valid func(string) error, destroy destroyFunc) (*pb.RemoveResponse, error) {
	m, err := b.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	opts, err := b.destroyOptions(req)
	if err != nil {
		return nil, err
	}
	resp := &pb.RemoveResponse{}
	for _, name := range req.Names {
		res := &pb.RemoveResult{Name: name}
		resp.Results = append(resp.Results, res)
		if err := valid(name); err != nil {
			res.Error = err.Error()
			continue
		}
		removal, err := destroy(ctx, m.Uuid, name, opts)
		res.Units, res.RequiresForce, res.Outcome = removal.Units, removal.RequiresForce, string(removal.Outcome)
		if err != nil {
			res.Error = err.Error()
		}
	}
	return resp, nil
}

// nameCheck refuses names that cannot be valid, with Juju's wording.
func nameCheck(valid func(string) bool, format string) func(string) error {
	return func(name string) error {
		if !valid(name) {
			return apierr.Errorf(apierr.NotValid, format, name)
		}
		return nil
	}
}

func (s *applicationServer) RemoveUnits(ctx context.Context, req *pb.RemoveRequest) (*pb.RemoveResponse, error) {
	return s.removeEach(ctx, req, nameCheck(names.IsValidUnit, "invalid unit name %q"), s.st.DestroyUnit)
}

func (s *applicationServer) RemoveApplications(ctx context.Context, req *pb.RemoveRequest) (*pb.RemoveResponse, error) {
	return s.removeEach(ctx, req, nameCheck(names.IsValidApplication, "invalid application name %q"), s.st.DestroyApplication)
}

func (s *machineServer) RemoveMachines(ctx context.Context, req *pb.RemoveRequest) (*pb.RemoveResponse, error) {
	return s.removeEach(ctx, req, nameCheck(names.IsValidMachine, "invalid machine id %q"), s.st.DestroyMachine)
}

func (s *applicationServer) Integrate(ctx context.Context, req *pb.IntegrateRequest) (*pb.IntegrateResponse, error) {
	if len(req.Endpoints) != 2 {
		return nil, apierr.Errorf(apierr.NotValid, "an integration must involve two applications")
	}
	a, err := state.ParseEndpoint(req.Endpoints[0])
	if err != nil {
		return nil, err
	}
	b, err := state.ParseEndpoint(req.Endpoints[1])
	if err != nil {
		return nil, err
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	rel, err := s.st.Integrate(ctx, m.Uuid, a, b)
	if err != nil {
		return nil, err
	}
	resp := &pb.IntegrateResponse{Id: rel.Id, Key: rel.Key}
	for _, ep := range rel.Endpoints {
		resp.Endpoints = append(resp.Endpoints, &pb.RelationEndpoint{
			Application: ep.Application, Name: ep.Name, Role: ep.Role, Interface: ep.Interface, Scope: ep.Scope,
		})
	}
	return resp, nil
}

func (s *applicationServer) RemoveRelation(ctx context.Context, req *pb.RemoveRelationRequest) (*pb.RemoveRelationResponse, error) {
	opts, err := s.destroyOptions(&pb.RemoveRequest{Force: req.Force, NoWait: req.NoWait})
	if err != nil {
		return nil, err
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	id := req.Id
	switch {
	case req.ById:
		if id < 0 {
			return nil, apierr.Errorf(apierr.NotValid, "relation ID %q not valid", strconv.FormatInt(id, 10))
		}
	case len(req.Endpoints) == 2:
		a, err := state.ParseEndpoint(req.Endpoints[0])
		if err != nil {
			return nil, err
		}
		b, err := state.ParseEndpoint(req.Endpoints[1])
		if err != nil {
			return nil, err
		}
		rel, err := s.st.FindRelation(ctx, m.Uuid, a, b)
		if err != nil {
			return nil, err
		}
		id = rel.Id
	default:
		return nil, apierr.Errorf(apierr.NotValid, "a relation must involve two applications")
	}
	rel, err := s.st.Relation(ctx, m.Uuid, id)
	if err != nil {
		return nil, err
	}
	outcome, err := s.st.DestroyRelation(ctx, m.Uuid, id, opts.ForceAfter)
	if err != nil {
		return nil, err
	}
	return &pb.RemoveRelationResponse{Id: id, Key: rel.Key, Outcome: string(outcome)}, nil
}
