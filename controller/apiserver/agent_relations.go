package apiserver

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/names"
)

// Relation data and leadership for unit agents' hook tools (relation-get/-set, is-leader,
// leader-get/-set, status-set --application). A unit agent acts only for its own unit.

// Leadership lease bounds. A lease is extended by its holder's agent three or four times per
// lease (controller/agent/leadership.go), so even the shortest (which tests use, to run in
// seconds) costs the store little; the longest keeps a dead leader replaced within minutes.
// The default is Juju's: 60 s, so that is-leader can promise 30 s.
const (
	minLeaseSeconds     = 2
	maxLeaseSeconds     = 300
	defaultLeaseSeconds = 60
)

// relationOf reads a relation whose endpoints include unit's application.
func (b *service) relationOf(ctx context.Context, uuid, unit string, relID int64) (*storepb.Relation, error) {
	app, err := names.UnitApplication(unit)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "unit name %q not valid", unit)
	}
	rel, err := b.st.Relation(ctx, uuid, relID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(relationApps(rel), app) {
		return nil, errDenied
	}
	return rel, nil
}

func relationApps(rel *storepb.Relation) []string {
	var out []string
	for _, ep := range rel.Endpoints {
		out = append(out, ep.Application)
	}
	return out
}

// ownRelation refuses a unit's scope and settings calls for a relation its application is not
// in (PermissionDenied, as for any entity not the caller's). A relation that is gone, or that
// cannot be read now, is left to state: leaving the scope of a removed relation must still
// work (L-R3), and writing to it fails there with its own error.
func (b *service) ownRelation(ctx context.Context, uuid, unit string, relID int64) error {
	if _, err := b.relationOf(ctx, uuid, unit, relID); errors.Is(err, apierr.PermissionDenied) {
		return err
	}
	return nil
}

// unitInRelation: a unit agent may watch the scope and settings of relations its application
// is in.
func (b *service) unitInRelation(ctx context.Context, e Entity, uuid, id string) bool {
	relID, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return false
	}
	_, err = b.relationOf(ctx, uuid, e.ID, relID)
	return err == nil
}

// unitLeadershipVisible: a unit agent may watch the leadership of its own application and of
// its subordinates' applications.
func (b *service) unitLeadershipVisible(ctx context.Context, e Entity, uuid, app string) bool {
	if own, _ := names.UnitApplication(e.ID); own == app {
		return true
	}
	u, err := b.st.Unit(ctx, uuid, e.ID)
	if err != nil {
		return false
	}
	for _, sub := range u.Subordinates {
		if subApp, _ := names.UnitApplication(sub); subApp == app {
			return true
		}
	}
	return false
}

func (s *agentServer) RelationSettings(ctx context.Context, req *pb.RelationSettingsRequest) (*pb.RelationSettingsResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if req.OfApplication != "" {
		return s.applicationRelationSettings(ctx, uuid, req)
	}
	of := req.OfUnit
	if of == "" {
		of = req.Unit
	}
	app, err := names.UnitApplication(of)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "unit name %q not valid", of)
	}
	rel, err := s.relationOf(ctx, uuid, req.Unit, req.RelationId)
	switch {
	case errors.Is(err, apierr.NotFound):
		// L-R3, L-R7: the relation can go (forced, or its last unit left) while one of the
		// caller's hooks for it still runs; the settings stay until cleaned up. The caller's own
		// settings there show it was in the relation (only its units wrote any). Otherwise, or
		// once cleaned up, there is nothing to read: relation-get is never guaranteed values
		// (seed 004), and failing the hook over a race it cannot help would block the unit.
		if _, _, err := s.st.UnitRelationSettings(ctx, uuid, req.RelationId, req.Unit); err != nil {
			return &pb.RelationSettingsResponse{Settings: map[string]string{}}, nil
		}
		settings, _, err := s.st.UnitRelationSettings(ctx, uuid, req.RelationId, of)
		if errors.Is(err, apierr.NotFound) {
			settings, err = map[string]string{}, nil
		}
		if err != nil {
			return nil, err
		}
		return &pb.RelationSettingsResponse{Settings: settings}, nil
	case err != nil:
		return nil, err
	case !slices.Contains(relationApps(rel), app):
		return nil, apierr.Errorf(apierr.NotValid, "unit %q is not in relation %q", of, rel.Key)
	}
	settings, _, err := s.st.UnitRelationSettings(ctx, uuid, req.RelationId, of)
	if errors.Is(err, apierr.NotFound) && of == req.Unit {
		// Its own relation, not joined yet (or left): it has written nothing there.
		return &pb.RelationSettingsResponse{Settings: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return &pb.RelationSettingsResponse{Settings: settings}, nil
}

func (s *agentServer) SetRelationSettings(ctx context.Context, req *pb.SetRelationSettingsRequest) (*pb.SetRelationSettingsResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if err := s.ownRelation(ctx, uuid, req.Unit, req.RelationId); err != nil {
		return nil, err
	}
	set := s.st.SetRelationSettings
	if req.Application {
		set = s.st.SetApplicationRelationSettings
	}
	changed, err := set(ctx, uuid, req.RelationId, req.Unit, req.Settings)
	if err != nil {
		return nil, err
	}
	return &pb.SetRelationSettingsResponse{Changed: changed}, nil
}

// applicationRelationSettings reads an application's settings in a relation (relation-get
// --app): any unit of the relation may read the other application's; only the leader its own.
func (s *agentServer) applicationRelationSettings(ctx context.Context, uuid string, req *pb.RelationSettingsRequest) (*pb.RelationSettingsResponse, error) {
	rel, err := s.relationOf(ctx, uuid, req.Unit, req.RelationId)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(relationApps(rel), req.OfApplication) {
		return nil, apierr.Errorf(apierr.NotValid, "application %q is not in relation %q", req.OfApplication, rel.Key)
	}
	own, _ := names.UnitApplication(req.Unit)
	if own == req.OfApplication && len(rel.Endpoints) == 2 {
		// A peer relation's application data is shared by all its units; across a relation,
		// the application's own side is the leader's to read and write.
		leader, err := s.st.Leader(ctx, uuid, own)
		if err != nil {
			return nil, err
		}
		if leader != req.Unit {
			return nil, apierr.Errorf(apierr.PermissionDenied, "permission denied: only the leader of %q may read its own application data", own)
		}
	}
	settings, _, err := s.st.ApplicationRelationSettings(ctx, uuid, req.RelationId, req.OfApplication)
	if err != nil {
		return nil, err
	}
	return &pb.RelationSettingsResponse{Settings: settings}, nil
}

func (s *agentServer) ClaimLeadership(ctx context.Context, req *pb.ClaimLeadershipRequest) (*pb.ClaimLeadershipResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	ttl := req.TtlSeconds
	if ttl <= 0 {
		ttl = defaultLeaseSeconds
	}
	ttl = min(max(ttl, minLeaseSeconds), maxLeaseSeconds)
	claim, err := s.st.ClaimLeadership(ctx, uuid, req.Unit, ttl)
	if err != nil {
		return nil, err
	}
	return &pb.ClaimLeadershipResponse{Held: claim.Held, Leader: claim.Leader, TtlSeconds: claim.TTL}, nil
}

func (s *agentServer) LeaderSettings(ctx context.Context, req *pb.AgentEntity) (*pb.LeaderSettingsResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	app, err := names.UnitApplication(req.Id)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "unit name %q not valid", req.Id)
	}
	settings, rev, err := s.st.LeaderSettings(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	return &pb.LeaderSettingsResponse{Settings: settings, Revision: rev}, nil
}

func (s *agentServer) SetLeaderSettings(ctx context.Context, req *pb.SetLeaderSettingsRequest) (*pb.SetLeaderSettingsResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Unit)
	if err != nil {
		return nil, err
	}
	if !names.IsValidUnit(req.Unit) {
		return nil, apierr.Errorf(apierr.NotValid, "unit name %q not valid", req.Unit)
	}
	return &pb.SetLeaderSettingsResponse{}, s.st.SetLeaderSettings(ctx, uuid, req.Unit, req.Settings)
}

func (s *agentServer) SetApplicationStatus(ctx context.Context, req *pb.SetStatusRequest) (*pb.SetStatusResponse, error) {
	uuid, err := s.ownUnit(ctx, req.Model, req.Id)
	if err != nil {
		return nil, err
	}
	if !names.IsValidUnit(req.Id) {
		return nil, apierr.Errorf(apierr.NotValid, "unit name %q not valid", req.Id)
	}
	if req.Status == nil || req.Status.Status == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no status given")
	}
	return &pb.SetStatusResponse{}, s.st.SetApplicationStatus(ctx, uuid, req.Id, req.Status.Status, req.Status.Message)
}
