package apiserver

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
)

type machineServer struct {
	pb.UnimplementedMachineServiceServer
	*service
}

func (s *machineServer) AddMachines(ctx context.Context, req *pb.AddMachinesRequest) (*pb.AddMachinesResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	resp := &pb.AddMachinesResponse{}
	for _, p := range req.Params {
		b := ""
		if p.Base != nil {
			b = p.Base.Name + "@" + p.Base.Channel
		}
		var scope string
		if p.Placement != nil {
			scope = p.Placement.Scope
		}
		var id string
		err := errContainers(scope)
		if err == nil {
			id, err = s.st.AddMachine(ctx, m.Uuid, state.MachineParams{Base: b, Constraints: p.Constraints})
		}
		res := &pb.AddMachineResult{MachineId: id}
		if err != nil {
			res.Error = err.Error()
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
