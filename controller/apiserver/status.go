package apiserver

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
	"github.com/jujuclone/juju/core/version"
)

type statusServer struct {
	pb.UnimplementedStatusServiceServer
	*service
	// auth checks the credentials of each watch added to a WatchMany stream.
	auth *authenticator
}

func (s *statusServer) FullStatus(ctx context.Context, req *pb.FullStatusRequest) (*pb.FullStatusResponse, error) {
	m, err := s.model(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	snap, err := s.st.SharedSnapshot(ctx, m.Uuid)
	if err != nil {
		return nil, err
	}
	alive, err := s.presence.alive(ctx, m.Uuid, presenceAsked(snap))
	if err != nil {
		return nil, err
	}
	resp := fullStatus(snap, s.cfg.ControllerName, func(ch *storepb.Charm) []string { return s.st.CharmEndpoints(m.Uuid, ch) }, alive)
	resp.ControllerTime = s.cfg.Now().UnixNano()
	resp.Model.Warning = local.IsolationWarning() // machines without uids of their own, said plainly
	if err := filter(resp, req.Patterns); err != nil {
		return nil, err
	}
	return resp, nil
}

// presenceAsked lists the agents of a snapshot whose presence its status shows: the machines
// that can be down and the units that can be lost.
func presenceAsked(snap *state.Snapshot) iter.Seq[agentID] {
	return func(yield func(agentID) bool) {
		for _, m := range snap.Machines {
			if machineCanBeDown(m) && !yield(agentID{state.KindMachine, m.Id}) {
				return
			}
		}
		for _, u := range snap.Units {
			if unitCanBeLost(u) && !yield(agentID{state.KindUnit, u.Name}) {
				return
			}
		}
	}
}

// fullStatus turns one snapshot into the API's status shape; endpoints lists a charm's
// endpoints (State.CharmEndpoints); alive says whether a machine's or unit's agent is connected
// (presence.alive; nil: every agent is).
func fullStatus(snap *state.Snapshot, controller string, endpoints func(*storepb.Charm) []string, alive func(kind, id string) bool) *pb.FullStatusResponse {
	if alive == nil {
		alive = func(string, string) bool { return true }
	}
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
		ms := &pb.MachineStatus{
			Id: m.Id, Life: m.Life, Base: pbBase(m.Base), Constraints: m.Constraints, Hardware: m.Hardware,
			InstanceId: m.InstanceId, DnsName: m.DnsName, AgentStatus: statusInfo(m.AgentStatus),
			InstanceStatus: statusInfo(m.InstanceStatus), Jobs: m.Jobs, Hostname: m.Hostname,
			BlockedBy: blockers.Machines[m.Id], ForceAfter: m.ForceAfter,
		}
		if machineCanBeDown(m) && !alive(state.KindMachine, m.Id) {
			ms.AgentStatus = &pb.StatusInfo{Status: string(status.Down), Message: agentNotCommunicating, Since: ms.AgentStatus.GetSince()}
		}
		resp.Machines = append(resp.Machines, ms)
	}
	apps := map[string]*pb.ApplicationStatus{}
	for _, a := range snap.Applications {
		as := &pb.ApplicationStatus{
			Name: a.Name, CharmUrl: a.CharmUrl, CharmOrigin: "local", Base: pbBase(a.Base), Life: a.Life,
			Subordinate: a.Subordinate, Constraints: a.Constraints, Exposed: a.Exposed,
			RelationCount: a.RelationCount, BlockedBy: blockers.Applications[a.Name], ForceAfter: a.ForceAfter,
			WorkloadVersion: a.WorkloadVersion, ExposedEndpoints: exposedEndpoints(a.ExposedEndpoints),
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
	// An application whose status derives from its units' derives it from what they stored,
	// not from what a lost agent shows (as Juju does): storedUnits keeps those of apps with one.
	storedUnits := map[string][]*storepb.Unit{}
	for _, u := range snap.Units {
		as, ok := apps[u.Application]
		if !ok {
			continue
		}
		as.UnitCount++
		us := unitStatus(u, snap.Leaders[u.Application] == u.Name, blockers)
		if unitCanBeLost(u) && !alive(state.KindUnit, u.Name) {
			showLost(us)
			storedUnits[u.Application] = nil
		}
		as.Units = append(as.Units, us)
	}
	if len(storedUnits) > 0 {
		for _, u := range snap.Units {
			if units, ok := storedUnits[u.Application]; ok {
				storedUnits[u.Application] = append(units, u)
			}
		}
		for app, units := range storedUnits {
			if as := apps[app]; as.Status == nil {
				as.Status = derivedStatus(units)
			}
		}
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

// The messages of an agent that status shows lost, Juju's (its apiserver's ModelPresenceContext).
const agentNotCommunicating = "agent is not communicating with the server"

func agentLostMessage(unit string) string {
	return fmt.Sprintf("agent lost, see 'juju show-status-log %s'", unit)
}

// machineCanBeDown: a machine whose agent should be connected, as Juju decides it: not one
// still pending (no instance, or its agent never started) or stopped, and not a dead one, whose
// agent has stopped for good (L-M3).
func machineCanBeDown(m *storepb.Machine) bool {
	switch status.Status(m.AgentStatus.GetStatus()) {
	case status.Pending, status.Stopped, "":
		return false
	}
	return m.Life != string(life.Dead)
}

// unitCanBeLost: a unit whose agent should be connected, as Juju decides it: not one still
// being deployed or installed (allocating, running its install hook, or with the workload
// status of those steps), and not a dead one.
func unitCanBeLost(u *storepb.Unit) bool {
	if u.Life == string(life.Dead) {
		return false
	}
	agent, workload := u.AgentStatus, u.WorkloadStatus
	switch status.Status(agent.GetStatus()) {
	case status.Allocating, status.Running, "":
		return false
	case status.Executing:
		if agent.GetMessage() == "running install hook" {
			return false
		}
	}
	switch status.Status(workload.GetStatus()) {
	case status.Maintenance:
		return workload.GetMessage() != "installing charm software"
	case status.Waiting:
		switch workload.GetMessage() {
		case "waiting for machine", "installing agent", "agent initialising":
			return false
		}
	}
	return true
}

// showLost shows a unit's agent lost, and its workload unknown unless it is in error or
// terminated (which the agent's return should still find), as Juju shows them.
func showLost(us *pb.UnitStatus) {
	if w := status.Status(us.WorkloadStatus.GetStatus()); w != status.Error && w != status.Terminated {
		us.WorkloadStatus = &pb.StatusInfo{Status: string(status.Unknown), Message: agentLostMessage(us.Name), Since: us.WorkloadStatus.GetSince()}
	}
	us.AgentStatus = &pb.StatusInfo{Status: string(status.Lost), Message: agentNotCommunicating, Since: us.AgentStatus.GetSince()}
}

// derivedStatus is the status of an application that set none: the stored workload status of
// the most severe of its units (the first in natural order among equals), unknown without
// units, as juju status derives it.
func derivedStatus(units []*storepb.Unit) *pb.StatusInfo {
	var best *storepb.Unit
	for _, u := range units {
		d := status.Severity(status.Status(u.WorkloadStatus.GetStatus())) - status.Severity(status.Status(best.GetWorkloadStatus().GetStatus()))
		if best == nil || d > 0 || d == 0 && names.NaturalLess(u.Name, best.Name) {
			best = u
		}
	}
	if best.GetWorkloadStatus().GetStatus() == "" {
		return &pb.StatusInfo{Status: string(status.Unknown)}
	}
	return statusInfo(best.WorkloadStatus)
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
	uuid, keys, err := s.watchKeys(ctx, e, req)
	if err != nil {
		return err
	}
	events, err := s.hub.Subscribe(ctx, uuid, keys)
	if err != nil {
		return err
	}
	// An agent's open watch is what tells status it runs (presence.go). Counted before the
	// header, so that once the agent's Watch returns, status knows it.
	if e.Kind == "machine" || e.Kind == "unit" {
		defer s.presence.connect(uuid, e.Kind, e.ID)()
	}
	// Status changes with presence, which no store key records: the admin's watches of units
	// and machines hear of agents lost and back as changes of those entities.
	var presenceWake <-chan struct{}
	var sub *presenceSub
	if e.IsAdmin() && presenceWatched(req.Targets, presenceChange{}) {
		var stop func()
		sub, stop, err = s.presence.subscribe(ctx, uuid)
		if err != nil {
			return err
		}
		defer stop()
		presenceWake = sub.wake
	}
	// The header tells the client the watch is established: every later change will arrive.
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	for {
		select {
		case <-events.Ready():
			evs, ok := events.Take()
			for _, ev := range evs {
				if err := stream.Send(&pb.WatchEvent{Kind: ev.Kind, Id: ev.ID, Removed: ev.Removed, Revision: ev.Revision}); err != nil {
					return err
				}
			}
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return apierr.Errorf(apierr.Unavailable, "watch ended; watch again")
			}
		case <-presenceWake:
			for _, c := range sub.take() {
				if !presenceWatched(req.Targets, c) {
					continue
				}
				kind := c.kind
				if kind == "" {
					kind = state.KindModel // any agent of the model
				}
				if err := stream.Send(&pb.WatchEvent{Kind: kind, Id: c.id}); err != nil {
					return err
				}
			}
		}
	}
}

// watchKeys checks e's watch req (Watch's, or one of WatchMany's) and returns its model's UUID
// and the hub keys it watches: an agent watches in its own model only, and only what mayWatch
// lets it.
func (s *statusServer) watchKeys(ctx context.Context, e Entity, req *pb.WatchRequest) (uuid string, keys []state.WatchKey, err error) {
	if e.IsAdmin() {
		m, err := s.model(ctx, req.Model)
		if err != nil {
			return "", nil, err
		}
		uuid = m.Uuid
	} else {
		if req.Model != e.Model {
			return "", nil, errDenied
		}
		uuid = e.Model
	}
	if len(req.Targets) == 0 {
		return "", nil, apierr.Errorf(apierr.NotValid, "nothing to watch")
	}
	keys = make([]state.WatchKey, 0, len(req.Targets)) // held as long as the watch
	for _, t := range req.Targets {
		if !s.mayWatch(ctx, e, uuid, t) {
			return "", nil, errDenied
		}
		p, err := state.KeyPrefix(uuid, t.Kind, t.Id)
		if err != nil {
			return "", nil, err
		}
		keys = append(keys, state.WatchKey{Key: p, LifeOnly: t.LifeOnly, IgnoreOwnWrites: t.IgnoreOwnWrites})
	}
	return uuid, keys, nil
}

// presenceWatched reports whether a watch of targets shows the presence change c (the zero
// change: of any agent): watches of the whole model, of the unit or machine, or of the unit's
// application (whose status may derive from it). Life-only watches do not.
func presenceWatched(targets []*pb.WatchTarget, c presenceChange) bool {
	for _, t := range targets {
		if t.LifeOnly || t.IgnoreOwnWrites {
			continue
		}
		switch t.Kind {
		case state.KindModel:
			if t.Id == "" {
				return true
			}
		case state.KindUnit, state.KindMachine:
			if c.kind == "" || t.Kind == c.kind && (t.Id == "" || t.Id == c.id ||
				strings.HasSuffix(t.Id, "/") && strings.HasPrefix(c.id, t.Id)) {
				return true
			}
		case state.KindApplication:
			app, _, _ := strings.Cut(c.id, "/")
			if c.kind == "" || c.kind == state.KindUnit && (t.Id == "" || t.Id == app) {
				return true
			}
		}
	}
	return false
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
