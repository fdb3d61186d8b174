package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/sshkey"
)

// keyServer manages the model's authorized SSH keys and finds machines' ssh servers.
type keyServer struct {
	pb.UnimplementedKeyServiceServer
	*service
}

// maxSSHTargetWait bounds SSHTarget when the caller set no deadline.
const maxSSHTargetWait = 2 * time.Minute

func (s *keyServer) ListKeys(ctx context.Context, req *pb.ListKeysRequest) (*pb.ListKeysResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	doc, _, err := s.st.AuthorizedKeys(ctx, m.Uuid)
	if err != nil {
		return nil, err
	}
	resp := &pb.ListKeysResponse{}
	for _, k := range doc.Keys {
		if sshkey.IsInternal(k.Comment) {
			continue // Juju's own keys are not the user's to see
		}
		resp.Keys = append(resp.Keys, &pb.SSHKey{Key: k.Key, Fingerprint: k.Fingerprint, Comment: k.Comment})
	}
	return resp, nil
}

func (s *keyServer) AddKeys(ctx context.Context, req *pb.AddKeysRequest) (*pb.AddKeysResponse, error) {
	if len(req.Keys) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "no ssh key specified")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.AddAuthorizedKeys(ctx, m.Uuid, req.Keys); err != nil {
		return nil, err
	}
	return &pb.AddKeysResponse{}, nil
}

func (s *keyServer) RemoveKeys(ctx context.Context, req *pb.RemoveKeysRequest) (*pb.RemoveKeysResponse, error) {
	if len(req.Ids) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "no ssh key id specified")
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := s.st.RemoveAuthorizedKeys(ctx, m.Uuid, req.Ids); err != nil {
		return nil, err
	}
	return &pb.RemoveKeysResponse{}, nil
}

func (s *keyServer) EnsureClientKey(ctx context.Context, req *pb.EnsureClientKeyRequest) (*pb.EnsureClientKeyResponse, error) {
	k, err := sshkey.Parse(req.Key)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	if k.Comment != sshkey.ClientKeyComment {
		return nil, apierr.Errorf(apierr.NotValid, "the client's key must have the comment %q, not %q", sshkey.ClientKeyComment, k.Comment)
	}
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	added, rev, err := s.st.EnsureAuthorizedKey(ctx, m.Uuid, k.Line)
	if err != nil {
		return nil, err
	}
	return &pb.EnsureClientKeyResponse{Added: added, KeysRevision: rev}, nil
}

func (s *keyServer) SSHTarget(ctx context.Context, req *pb.SSHTargetRequest) (*pb.SSHTargetResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	id, err := s.machineOf(ctx, m.Uuid, req.Target)
	if err != nil {
		return nil, err
	}
	mach, err := s.st.Machine(ctx, m.Uuid, id)
	if err != nil {
		return nil, err
	}
	switch {
	case mach.ProvisioningError != "":
		return nil, apierr.Errorf(apierr.NotValid, "machine %s has no instance: %s", id, mach.ProvisioningError)
	case mach.Life == string(life.Dead):
		return nil, apierr.Errorf(apierr.NotAlive, "machine %s is dead", id)
	}
	// Stop waiting a little before the caller's deadline, so that it gets the reason rather
	// than its own timeout.
	wait := maxSSHTargetWait
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		wait = left - min(left/10, time.Second)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// The agent records its server once it listens, and again each time it has written newer
	// keys: wait for a record that serves the keys the caller needs (or says it cannot serve).
	h, err := s.st.WaitSSHHost(wctx, m.Uuid, id, func(h *storepb.SSHHost) bool {
		return h != nil && (h.Error != "" || (h.Port != 0 && h.KeysRevision >= req.KeysRevision))
	})
	switch {
	case h != nil && h.Error != "":
		return nil, apierr.Errorf(apierr.Unavailable, "machine %s cannot serve ssh: %s", id, h.Error)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		if h == nil || h.Port == 0 {
			return nil, apierr.Errorf(apierr.Unavailable, "machine %s has no ssh server yet: its agent has not started one", id)
		}
		return nil, apierr.Errorf(apierr.Unavailable, "the ssh server of machine %s has not taken up the model's latest keys yet", id)
	case err != nil:
		return nil, err
	}
	return &pb.SSHTargetResponse{MachineId: id, Address: h.Address, Port: h.Port, User: h.User, HostKey: h.HostKey}, nil
}

// machineOf resolves a machine id, a unit name or "<application>/leader" to the machine that
// hosts it (a subordinate's is its principal's).
func (s *keyServer) machineOf(ctx context.Context, uuid, target string) (string, error) {
	if names.IsValidMachine(target) {
		return target, nil
	}
	unit := target
	if app, ok := strings.CutSuffix(target, "/leader"); ok && names.IsValidApplication(app) {
		if _, err := s.st.Application(ctx, uuid, app); err != nil {
			return "", err
		}
		leader, err := s.st.Leader(ctx, uuid, app)
		if err != nil {
			return "", err
		}
		if leader == "" {
			return "", apierr.Errorf(apierr.NotFound, "application %q has no leader", app)
		}
		unit = leader
	} else if !names.IsValidUnit(target) {
		return "", apierr.Errorf(apierr.NotValid, "invalid target %q: want a machine id, a unit name or <application>/leader", target)
	}
	u, err := s.st.Unit(ctx, uuid, unit)
	if err != nil {
		return "", err
	}
	if u.Principal != "" {
		if u, err = s.st.Unit(ctx, uuid, u.Principal); err != nil {
			return "", fmt.Errorf("principal of %s: %w", unit, err)
		}
	}
	if u.MachineId == "" {
		return "", apierr.Errorf(apierr.NotValid, "unit %q is not assigned to a machine", unit)
	}
	return u.MachineId, nil
}

// sshAgentServer serves machine agents their model's keys and records their ssh servers.
type sshAgentServer struct {
	pb.UnimplementedSSHAgentServiceServer
	*service
}

// ownMachine checks that the caller is the admin or the machine's own agent.
func (s *sshAgentServer) ownMachine(ctx context.Context, model, id string) (string, error) {
	return (&agentServer{service: s.service}).ownMachine(ctx, model, id)
}

func (s *sshAgentServer) WatchAuthorizedKeys(req *pb.WatchAuthorizedKeysRequest, stream pb.SSHAgentService_WatchAuthorizedKeysServer) error {
	ctx := stream.Context()
	uuid, err := s.ownMachine(ctx, req.Model, req.MachineId)
	if err != nil {
		return err
	}
	updates, err := s.st.WatchAuthorizedKeys(ctx, uuid)
	if err != nil {
		return err
	}
	for u := range updates {
		out := &pb.AuthorizedKeys{Revision: u.Revision}
		for _, k := range u.Keys.Keys {
			out.Keys = append(out.Keys, k.Key)
		}
		if err := stream.Send(out); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return apierr.Errorf(apierr.Unavailable, "watching ssh keys: watch ended")
}

func (s *sshAgentServer) SetSSHHost(ctx context.Context, req *pb.SetSSHHostRequest) (*pb.SetSSHHostResponse, error) {
	uuid, err := s.ownMachine(ctx, req.Model, req.MachineId)
	if err != nil {
		return nil, err
	}
	h := &storepb.SSHHost{
		Address: req.Address, Port: req.Port, User: req.User, HostKey: req.HostKey,
		KeysRevision: req.KeysRevision, Error: req.Error,
	}
	if h.Error == "" {
		if h.Address == "" || h.Port <= 0 || h.Port > 65535 || h.User == "" {
			return nil, apierr.Errorf(apierr.NotValid, "ssh server of machine %s: address, port and user are required", req.MachineId)
		}
		if _, err := sshkey.Parse(h.HostKey); err != nil {
			return nil, apierr.Errorf(apierr.NotValid, "ssh server of machine %s: host key: %v", req.MachineId, err)
		}
	}
	if err := s.st.SetSSHHost(ctx, uuid, req.MachineId, h); err != nil {
		return nil, err
	}
	return &pb.SetSSHHostResponse{}, nil
}
