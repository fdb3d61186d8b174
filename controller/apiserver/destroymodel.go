package apiserver

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
)

// DestroyModel makes a model dying (the model remover takes it apart and removes it) or, with
// dry_run, reports what would go. The admin's alone (see agentAllowed).
func (s *controllerServer) DestroyModel(ctx context.Context, req *pb.DestroyModelRequest) (*pb.DestroyModelResponse, error) {
	opts, err := s.destroyOptions(&pb.RemoveRequest{Force: req.Force, NoWait: req.NoWait, DryRun: req.DryRun})
	if err != nil {
		return nil, err
	}
	if _, err := s.model(ctx, req.Model); err != nil {
		return nil, err
	}
	res, err := s.st.DestroyModel(ctx, req.Model, state.DestroyModelOptions{ForceAfter: opts.ForceAfter, DryRun: opts.DryRun})
	if errors.Is(err, state.ErrControllerModel) {
		// No sentinel of api/apierr says "not possible in this state": a plain
		// FailedPrecondition carries the message, which tells what to do instead.
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	if err != nil {
		return nil, err
	}
	return &pb.DestroyModelResponse{
		Applications: res.Applications, Units: res.Units, Machines: res.Machines, Uuid: res.UUID,
	}, nil
}
