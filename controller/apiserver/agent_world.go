package apiserver

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// UnitWorld is GetUnit, GetApplication, UnitRelations and (with tasks) ReceiverTasks in one
// call, for the unit's own agent alone: what it reads on every wake-up (issue 16).
func (s *agentServer) UnitWorld(ctx context.Context, req *pb.UnitWorldRequest) (*pb.UnitWorldResponse, error) {
	e := entityFrom(ctx)
	if e.Kind != "unit" || e.ID != req.Unit || e.Model != req.Model {
		return nil, errDenied
	}
	w, err := s.st.ReadUnitWorld(ctx, e.Model, req.Unit, membersOf(req.AllMembers, req.MemberEndpoints), req.Tasks)
	if err != nil {
		return nil, err
	}
	resp := &pb.UnitWorldResponse{Unit: agentUnit(w.Unit), Relations: agentRelations(w.Relations)}
	if w.Application != nil {
		resp.Application = agentApplication(w.Application)
	}
	if req.Tasks {
		resp.Tasks = queuedTasks(w.Tasks)
	}
	return resp, nil
}

// MachineWorld is GetMachine (with machine), MachineUnits and (with tasks) ReceiverTasks in
// one call, for the machine's own agent alone.
func (s *agentServer) MachineWorld(ctx context.Context, req *pb.MachineWorldRequest) (*pb.MachineWorldResponse, error) {
	e := entityFrom(ctx)
	if e.Kind != "machine" || e.ID != req.Id || e.Model != req.Model {
		return nil, errDenied
	}
	w, err := s.st.ReadMachineWorld(ctx, e.Model, req.Id, req.Machine, req.Tasks)
	if err != nil {
		return nil, err
	}
	resp := &pb.MachineWorldResponse{Units: agentUnits(w.Units)}
	if w.Machine != nil {
		resp.Machine = agentMachine(w.Machine)
	}
	if req.Tasks {
		resp.Tasks = queuedTasks(w.Tasks)
	}
	return resp, nil
}
