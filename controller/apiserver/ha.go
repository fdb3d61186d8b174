package apiserver

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Members is the controller's member management (the daemon's): enable-ha, removing a member,
// and what each member is doing. Nil in a controller that cannot have more than one member
// (tests that start an API server alone).
type Members interface {
	EnableHA(ctx context.Context, n int) (*pb.EnableHAResponse, error)
	RemoveMember(ctx context.Context, id string) error
	// Members lists the members; degraded says why the controller takes no writes.
	Members(ctx context.Context) (members []*pb.ControllerMember, degraded string, err error)
	// APIAddresses are every member's API address, this member's first.
	APIAddresses(ctx context.Context) []string
}

func (s *controllerServer) EnableHA(ctx context.Context, req *pb.EnableHARequest) (*pb.EnableHAResponse, error) {
	n := int(req.GetNumMembers())
	if n < 0 || (n > 0 && n%2 == 0) {
		return nil, apierr.Errorf(apierr.NotValid, "controller member count must be odd and positive, not %d", n)
	}
	if s.cfg.Members == nil {
		return nil, apierr.Errorf(apierr.NotSupported, "this controller cannot have more than one member")
	}
	return s.cfg.Members.EnableHA(ctx, n)
}

func (s *controllerServer) RemoveControllerMember(ctx context.Context, req *pb.RemoveControllerMemberRequest) (*pb.RemoveControllerMemberResponse, error) {
	if req.GetId() == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no controller member named")
	}
	if s.cfg.Members == nil {
		return nil, apierr.Errorf(apierr.NotFound, "controller member %q not found", req.GetId())
	}
	if err := s.cfg.Members.RemoveMember(ctx, req.GetId()); err != nil {
		return nil, err
	}
	return &pb.RemoveControllerMemberResponse{}, nil
}

func (s *controllerServer) ControllerMembers(ctx context.Context, _ *pb.ControllerMembersRequest) (*pb.ControllerMembersResponse, error) {
	if s.cfg.Members == nil {
		return &pb.ControllerMembersResponse{}, nil
	}
	members, degraded, err := s.cfg.Members.Members(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.ControllerMembersResponse{Members: members, Degraded: degraded}, nil
}

// apiAddresses are the addresses Version reports: every member's, or none without members.
func (s *controllerServer) apiAddresses(ctx context.Context) []string {
	if s.cfg.Members == nil {
		return nil
	}
	return s.cfg.Members.APIAddresses(ctx)
}
