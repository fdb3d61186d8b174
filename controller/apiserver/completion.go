package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
)

type completionServer struct {
	pb.UnimplementedCompletionServiceServer
	*service
}

var nameKinds = map[pb.NameKind]state.NameKind{
	pb.NameKind_NAME_KIND_APPLICATION: state.NamesApplications,
	pb.NameKind_NAME_KIND_UNIT:        state.NamesUnits,
	pb.NameKind_NAME_KIND_MACHINE:     state.NamesMachines,
	pb.NameKind_NAME_KIND_MODEL:       state.NamesModels,
	pb.NameKind_NAME_KIND_ENDPOINT:    state.NamesEndpoints,
	pb.NameKind_NAME_KIND_CONFIG_KEY:  state.NamesConfigKeys,
}

// CompleteNames answers shell completion with the names of one kind from one bounded read.
func (s *completionServer) CompleteNames(ctx context.Context, req *pb.CompleteNamesRequest) (*pb.CompleteNamesResponse, error) {
	kind, ok := nameKinds[req.Kind]
	if !ok {
		return nil, apierr.Errorf(apierr.NotValid, "name kind %s not valid", req.Kind)
	}
	if req.Limit < 0 {
		return nil, apierr.Errorf(apierr.NotValid, "limit %d not valid", req.Limit)
	}
	if kind != state.NamesModels && req.Model == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no model specified")
	}
	names, truncated, err := s.st.ListNames(ctx, req.Model, kind, req.Prefix, int(req.Limit))
	if err != nil {
		return nil, err
	}
	return &pb.CompleteNamesResponse{Names: names, Truncated: truncated}, nil
}
