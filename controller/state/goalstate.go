package state

import (
	"context"
	"fmt"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
)

// ApplicationUnits lists an application's units.
func (s *State) ApplicationUnits(ctx context.Context, uuid, app string) ([]*storepb.Unit, error) {
	resp, err := s.kv.Get(ctx, applicationUnitsPrefix(uuid, app), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing units of %q: %w", app, err)
	}
	out := make([]*storepb.Unit, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		u := &storepb.Unit{}
		if err := unmarshal(kv, u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// GoalStatus is one entry of a unit's goal state: where an application or unit is heading.
type GoalStatus struct {
	Status string
	Since  int64 // Unix nanoseconds, 0 when unknown
}

// GoalState is what goal-state shows a unit: its application's units, and for each of its
// endpoints the applications and units related through it.
type GoalState struct {
	Units     map[string]GoalStatus
	Relations map[string]map[string]GoalStatus
}

// GoalState reads the goal state of unit's application, as of one read per application.
// A unit's goal is its workload status while alive ("waiting" before it has one), "dying" once
// it is not; a related application is "joined" while the relation is alive, else "dying".
func (s *State) GoalState(ctx context.Context, uuid, app string) (*GoalState, error) {
	units, err := s.ApplicationUnits(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	gs := &GoalState{Units: map[string]GoalStatus{}, Relations: map[string]map[string]GoalStatus{}}
	for _, u := range units {
		gs.Units[u.Name] = unitGoal(u)
	}
	rels, err := s.Relations(ctx, uuid)
	if err != nil {
		return nil, err
	}
	others := map[string][]*storepb.Unit{app: units}
	for _, rel := range rels {
		i := slices.IndexFunc(rel.Endpoints, func(ep *storepb.Endpoint) bool { return ep.Application == app })
		if i < 0 {
			continue
		}
		own, other := rel.Endpoints[i], rel.Endpoints[i]
		if len(rel.Endpoints) == 2 {
			other = rel.Endpoints[1-i]
		}
		members := gs.Relations[own.Name]
		if members == nil {
			members = map[string]GoalStatus{}
			gs.Relations[own.Name] = members
		}
		relStatus := "joined"
		if rel.Life != string(life.Alive) {
			relStatus = "dying"
		}
		if other.Application != app {
			members[other.Application] = GoalStatus{Status: relStatus}
		}
		otherUnits, ok := others[other.Application]
		if !ok {
			if otherUnits, err = s.ApplicationUnits(ctx, uuid, other.Application); err != nil {
				return nil, err
			}
			others[other.Application] = otherUnits
		}
		for _, u := range otherUnits {
			members[u.Name] = unitGoal(u)
		}
	}
	return gs, nil
}

func unitGoal(u *storepb.Unit) GoalStatus {
	if u.Life != string(life.Alive) {
		return GoalStatus{Status: "dying"}
	}
	w := u.GetWorkloadStatus()
	if w.GetStatus() == "" || w.GetStatus() == "unknown" {
		return GoalStatus{Status: "waiting", Since: w.GetSince()}
	}
	return GoalStatus{Status: w.GetStatus(), Since: w.GetSince()}
}
