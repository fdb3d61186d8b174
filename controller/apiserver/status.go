package apiserver

import (
	"context"
	"sort"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/version"
)

type statusServer struct {
	pb.UnimplementedStatusServiceServer
	*service
}

func (s *statusServer) FullStatus(ctx context.Context, req *pb.FullStatusRequest) (*pb.FullStatusResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	snap, err := s.st.Snapshot(ctx, m.Uuid)
	if err != nil {
		return nil, err
	}
	resp := fullStatus(snap, s.cfg.ControllerName, func(ch *storepb.Charm) []string { return s.st.CharmEndpoints(m.Uuid, ch) })
	resp.ControllerTime = s.cfg.Now().UnixNano()
	if err := filter(resp, req.Patterns); err != nil {
		return nil, err
	}
	return resp, nil
}

// fullStatus turns one snapshot into the API's status shape; endpoints lists a charm's
// endpoints (State.CharmEndpoints).
func fullStatus(snap *state.Snapshot, controller string, endpoints func(*storepb.Charm) []string) *pb.FullStatusResponse {
	mv := modelView(snap.Model, nil) // status shows no configuration
	resp := &pb.FullStatusResponse{
		Revision: snap.Revision,
		Model: &pb.ModelStatus{
			Name: mv.Name, Uuid: mv.Uuid, Controller: controller, Cloud: mv.Cloud, Region: mv.Region,
			Version: version.Juju, Type: mv.Type, Status: mv.Status, Life: mv.Life,
		},
	}
	blockers := snap.Blockers()
	for _, m := range snap.Machines {
		resp.Machines = append(resp.Machines, &pb.MachineStatus{
			Id: m.Id, Life: m.Life, Base: pbBase(m.Base), Constraints: m.Constraints, Hardware: m.Hardware,
			InstanceId: m.InstanceId, DnsName: m.DnsName, AgentStatus: statusInfo(m.AgentStatus),
			InstanceStatus: statusInfo(m.InstanceStatus), Jobs: m.Jobs, Hostname: m.Hostname,
			BlockedBy: blockers.Machines[m.Id], ForceAfter: m.ForceAfter,
		})
	}
	apps := map[string]*pb.ApplicationStatus{}
	for _, a := range snap.Applications {
		as := &pb.ApplicationStatus{
			Name: a.Name, CharmUrl: a.CharmUrl, CharmOrigin: "local", Base: pbBase(a.Base), Life: a.Life,
			Subordinate: a.Subordinate, Constraints: a.Constraints, Exposed: a.Exposed,
			RelationCount: a.RelationCount, BlockedBy: blockers.Applications[a.Name], ForceAfter: a.ForceAfter,
			WorkloadVersion: a.WorkloadVersion,
		}
		if a.Status != nil && a.Status.Status != "" {
			as.Status = statusInfo(a.Status)
		}
		if ch, ok := snap.Charms[a.CharmUrl]; ok {
			as.CharmName, as.CharmRev = ch.Name, ch.Revision
			as.Endpoints = endpoints(ch)
		}
		apps[a.Name] = as
		resp.Applications = append(resp.Applications, as)
	}
	for _, u := range snap.Units {
		as, ok := apps[u.Application]
		if !ok {
			continue
		}
		as.UnitCount++
		as.Units = append(as.Units, unitStatus(u, snap.Leaders[u.Application] == u.Name, blockers))
	}
	for _, r := range snap.Relations {
		rs := &pb.RelationStatus{
			Id: r.Id, Key: r.Key, Life: r.Life, UnitsInScope: int32(len(blockers.ScopeUnits[r.Id])),
			BlockedBy: blockers.Relations[r.Id], ScopeUnits: blockers.ScopeUnits[r.Id],
		}
		for _, ep := range r.Endpoints {
			rs.Endpoints = append(rs.Endpoints, &pb.RelationEndpoint{
				Application: ep.Application, Name: ep.Name, Role: ep.Role, Interface: ep.Interface, Scope: ep.Scope,
			})
			rs.Interface = ep.Interface
			if ep.Scope == "container" {
				rs.Scope = "container"
			}
		}
		if rs.Scope == "" {
			rs.Scope = "global"
		}
		resp.Relations = append(resp.Relations, rs)
		addEndpointRelations(apps, r)
	}
	return resp
}

func unitStatus(u *storepb.Unit, leader bool, blockers state.Blockers) *pb.UnitStatus {
	return &pb.UnitStatus{
		Name: u.Name, Machine: u.MachineId, Life: u.Life, AgentStatus: statusInfo(u.AgentStatus),
		WorkloadStatus: statusInfo(u.WorkloadStatus), PublicAddress: u.PublicAddress,
		Leader: leader, Principal: u.Principal,
		BlockedBy: blockers.Units[u.Name], ForceAfter: u.ForceAfter, Scopes: u.Scopes,
		OpenPorts: u.OpenPorts,
	}
}

// addEndpointRelations fills each application's endpoint → related applications map.
func addEndpointRelations(apps map[string]*pb.ApplicationStatus, r *storepb.Relation) {
	for _, ep := range r.Endpoints {
		as, ok := apps[ep.Application]
		if !ok {
			continue
		}
		var related []string
		if len(r.Endpoints) == 1 {
			related = []string{ep.Application}
		}
		for _, other := range r.Endpoints {
			if other != ep {
				related = append(related, other.Application)
			}
		}
		var er *pb.EndpointRelations
		for _, existing := range as.Relations {
			if existing.Endpoint == ep.Name {
				er = existing
			}
		}
		if er == nil {
			er = &pb.EndpointRelations{Endpoint: ep.Name}
			as.Relations = append(as.Relations, er)
		}
		er.Applications = append(er.Applications, related...)
		sort.Strings(er.Applications)
		if ep.Scope == "container" {
			for _, other := range r.Endpoints {
				if other != ep && as.Subordinate {
					as.SubordinateTo = appendUnique(as.SubordinateTo, other.Application)
				}
			}
		}
	}
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func (s *statusServer) Watch(req *pb.WatchRequest, stream pb.StatusService_WatchServer) error {
	ctx := stream.Context()
	e := entityFrom(ctx)
	var uuid string
	if e.IsAdmin() {
		m, err := s.model(ctx, req.Model)
		if err != nil {
			return err
		}
		uuid = m.Uuid
	} else {
		if req.Model != e.Model {
			return errDenied
		}
		uuid = e.Model
	}
	if len(req.Targets) == 0 {
		return apierr.Errorf(apierr.NotValid, "nothing to watch")
	}
	var keys []state.WatchKey
	for _, t := range req.Targets {
		if !s.mayWatch(ctx, e, uuid, t) {
			return errDenied
		}
		p, err := state.KeyPrefix(uuid, t.Kind, t.Id)
		if err != nil {
			return err
		}
		keys = append(keys, state.WatchKey{Key: p, LifeOnly: t.LifeOnly})
	}
	events, err := s.hub.Subscribe(ctx, uuid, keys)
	if err != nil {
		return err
	}
	// The header tells the client the watch is established: every later change will arrive.
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	for ev := range events {
		if err := stream.Send(&pb.WatchEvent{Kind: ev.Kind, Id: ev.ID, Removed: ev.Removed, Revision: ev.Revision}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return apierr.Errorf(apierr.Unavailable, "watch ended; watch again")
}

// mayWatch: agents watch only their own entities (a machine agent: its machine, the units
// assigned to it; a unit agent: itself, its subordinates, its application and relations).
func (s *statusServer) mayWatch(ctx context.Context, e Entity, uuid string, t *pb.WatchTarget) bool {
	if e.IsAdmin() {
		return true
	}
	switch e.Kind {
	case "machine":
		switch t.Kind {
		case state.KindMachine, state.KindMachineUnits, state.KindTasks:
			return t.Id == e.ID
		case state.KindUnit:
			u, err := s.st.Unit(ctx, uuid, t.Id)
			return err == nil && u.MachineId == e.ID
		}
	case "unit":
		switch t.Kind {
		case state.KindTasks:
			return t.Id == e.ID // its own queue: a principal does not run its subordinates' tasks
		case state.KindUnit:
			if t.Id == e.ID {
				return true
			}
			// A principal watches the subordinates it deploys.
			u, err := s.st.Unit(ctx, uuid, t.Id)
			return err == nil && u.Principal == e.ID
		case state.KindApplication:
			app, _, _ := strings.Cut(e.ID, "/")
			return t.Id == app
		case state.KindRelation:
			return true // relation documents name applications and endpoints only
		case state.KindScope, state.KindSettings:
			return s.unitInRelation(ctx, e, uuid, t.Id)
		case state.KindLeadership, state.KindLeaderSettings:
			return s.unitLeadershipVisible(ctx, e, uuid, t.Id)
		case state.KindModel:
			// The model document alone (its configuration: update-status-hook-interval,
			// logging-config ...), not every key of the model.
			return t.Id != ""
		}
	}
	return false
}

// pbBase sends a stored base with its risk, as Juju's API does ("22.04/stable", "22.04/edge"):
// clients leave a stable risk out when they show it, and only it.
func pbBase(s string) *pb.Base {
	b, err := base.Parse(s)
	if err != nil {
		return nil
	}
	return &pb.Base{Name: b.OS, Channel: b.Channel.String()}
}

func errContainers(scope string) error {
	if scope == "lxd" || scope == "kvm" {
		return apierr.Errorf(apierr.NotSupported, "%s containers are not supported by the local provider", scope)
	}
	return nil
}
