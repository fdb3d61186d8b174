package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
)

type machineServer struct {
	pb.UnimplementedMachineServiceServer
	*service
}

// AddMachines adds every machine asked for in one transaction (state.AddMachines), or none.
// A machine the local provider can never start (a container, any placement) is refused with
// its own result, as in Juju; the others of that call are then not added either.
func (s *machineServer) AddMachines(ctx context.Context, req *pb.AddMachinesRequest) (*pb.AddMachinesResponse, error) {
	if err := state.CheckMachineCount(len(req.Params)); err != nil {
		return nil, err
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.checkCapacity(ctx, "machines"); err != nil {
		return nil, err
	}
	resp := &pb.AddMachinesResponse{}
	params := make([]state.MachineParams, 0, len(req.Params))
	refused := false
	for _, p := range req.Params {
		b := ""
		if p.Base != nil {
			b = p.Base.Name + "@" + p.Base.Channel
		}
		params = append(params, state.MachineParams{Base: b, Constraints: p.Constraints})
		res := &pb.AddMachineResult{}
		if err := machinePlacement(p.Placement); err != nil {
			res.Error, refused = err.Error(), true
		}
		resp.Results = append(resp.Results, res)
	}
	if refused {
		for _, res := range resp.Results {
			if res.Error == "" {
				res.Error = "machine not added: another machine of this call was refused"
			}
		}
		return resp, nil
	}
	ids, err := s.st.AddMachines(ctx, m.Uuid, params)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		resp.Results[i].MachineId = id
	}
	return resp, nil
}

// machinePlacement refuses every placement of a new machine: the local provider has no
// containers and takes no provider directives.
func machinePlacement(p *pb.Placement) error {
	if p == nil || (p.Scope == "" && p.Directive == "") {
		return nil
	}
	if err := errContainers(p.Scope); err != nil {
		return err
	}
	raw := p.Directive
	if p.Scope != "" && p.Directive != "" {
		raw = p.Scope + ":" + p.Directive
	} else if p.Scope != "" {
		raw = p.Scope
	}
	return apierr.Errorf(apierr.NotSupported, "placement directive %q not supported by the local provider", raw)
}
