package state

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
)

// Audit checks a model's references and counts (L-G6) as of one revision and returns every
// inconsistency found: applications' unit and relation counts equal what exists, relations'
// scope counts equal their scope records, every scope, settings, index and subordinate link
// points at something that exists. Tests call it after every change; it is also what an
// operator would want from a "check model" command.
func (s *State) Audit(ctx context.Context, uuid string) ([]string, error) {
	resp, err := s.kv.Get(ctx, ModelPrefix(uuid), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading model: %w", err)
	}
	prefix := ModelPrefix(uuid)
	apps := map[string]*storepb.Application{}
	units := map[string]*storepb.Unit{}
	machines := map[string]*storepb.Machine{}
	rels := map[int64]*storepb.Relation{}
	relIndex := map[string]string{}
	scopes := map[int64][]string{}
	settings := map[int64][]string{}
	machineUnits := map[string][]string{}
	cleanups := map[int64]bool{}
	indexLife := map[string]string{}
	leases := map[string]string{}
	leaseless := map[string]bool{}
	leaderSettings := map[string]bool{}
	tasks := &taskAudit{}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, kv := range resp.Kvs {
		rest := string(kv.Key)[len(prefix):]
		kind, id, _ := strings.Cut(rest, "/")
		var err error
		switch kind {
		case "applications":
			a := &storepb.Application{}
			err = unmarshal(kv, a)
			apps[id] = a
		case "units":
			u := &storepb.Unit{}
			err = unmarshal(kv, u)
			units[id] = u
		case "machines":
			m := &storepb.Machine{}
			err = unmarshal(kv, m)
			machines[id] = m
		case "relations":
			r := &storepb.Relation{}
			err = unmarshal(kv, r)
			rels[r.Id] = r
		case "relationkeys":
			relIndex[id] = string(kv.Value)
		case "scopes", "settings":
			relID, unit, _ := strings.Cut(id, "/")
			n, perr := strconv.ParseInt(relID, 10, 64)
			if perr != nil {
				bad("bad %s key %s", kind, kv.Key)
				continue
			}
			if kind == "scopes" {
				scopes[n] = append(scopes[n], unit)
			} else {
				settings[n] = append(settings[n], unit)
			}
		case "machineunits":
			m, unit, _ := strings.Cut(id, "/")
			machineUnits[m] = append(machineUnits[m], unit)
			indexLife[unit] = string(kv.Value)
		case "leases":
			leases[id] = string(kv.Value)
			leaseless[id] = kv.Lease == 0
		case "leadersettings":
			leaderSettings[id] = true
		case "cleanups":
			c := &storepb.Cleanup{}
			err = unmarshal(kv, c)
			cleanups[c.RelationId] = true
			tasks.cleanup(c)
		case "operations", "tasks", "taskqueue":
			err = tasks.add(kind, id, kv)
		}
		if err != nil {
			return nil, err
		}
	}
	// Applications' counts (L-G6).
	for name, a := range apps {
		held := 0
		for _, u := range units {
			if u.Application == name {
				held++
			}
		}
		n := 0
		for _, r := range rels {
			if own, _ := relationSides(r, name); own != nil {
				n++
			}
		}
		if int(a.RelationCount) != n {
			bad("application %s: relation count %d, %d relations exist", name, a.RelationCount, n)
		}
		if a.Life != string(life.Alive) && held == 0 && n == 0 {
			bad("application %s is %s and nothing holds it: nothing will remove it (L-A3)", name, a.Life)
		}
	}
	// Leadership: a lease key for an existing application, naming one of its units and held
	// by an etcd lease; leader settings only for an existing application.
	for app, leader := range leases {
		if _, ok := apps[app]; !ok {
			bad("leadership of missing application %s (held by %s)", app, leader)
		}
		if u, ok := units[leader]; !ok || u.Application != app {
			bad("application %s: leader %s does not exist or is not its unit", app, leader)
		}
		if leaseless[app] {
			bad("application %s: leadership key without a lease: it would never expire", app)
		}
	}
	for app := range leaderSettings {
		if _, ok := apps[app]; !ok {
			bad("leader settings of missing application %s", app)
		}
	}
	// Relations: applications exist, the key index agrees, scope counts match records.
	for id, r := range rels {
		for _, ep := range r.Endpoints {
			if _, ok := apps[ep.Application]; !ok {
				bad("relation %d: application %s does not exist", id, ep.Application)
			}
		}
		if relIndex[r.Key] != strconv.FormatInt(id, 10) {
			bad("relation %d: key index %q points at %q", id, r.Key, relIndex[r.Key])
		}
		if r.Life != string(life.Alive) && len(scopes[id]) == 0 {
			bad("relation %d is %s with nobody in scope: nothing will remove it (L-R4)", id, r.Life)
		}
	}
	for key, id := range relIndex {
		n, _ := strconv.ParseInt(id, 10, 64)
		if r, ok := rels[n]; !ok || r.Key != key {
			bad("relation key index %q points at missing relation %s", key, id)
		}
	}
	for id, members := range scopes {
		r, ok := rels[id]
		for _, unit := range members {
			u, uok := units[unit]
			switch {
			case !ok:
				bad("scope record of %s in missing relation %d", unit, id)
			case !uok:
				bad("scope record of missing unit %s in relation %d", unit, id)
			case !slices.Contains(u.Scopes, id):
				bad("unit %s has a scope record in relation %d but does not list it", unit, id)
			}
			if ok && uok {
				if own, _ := relationSides(r, u.Application); own == nil {
					bad("unit %s in scope of relation %d (%s) its application is not in", unit, id, r.Key)
				}
			}
		}
	}
	for id, members := range settings {
		if _, ok := rels[id]; !ok && !cleanups[id] {
			bad("settings of removed relation %d (%s) with no cleanup pending", id, strings.Join(members, ", "))
		}
	}
	// Units: application, machine or principal, scopes and subordinates all exist and agree.
	for name, u := range units {
		if _, ok := apps[u.Application]; !ok {
			bad("unit %s: application %s does not exist", name, u.Application)
		}
		for _, id := range u.Scopes {
			if !slices.Contains(scopes[id], name) {
				bad("unit %s lists relation %d but has no scope record", name, id)
			}
		}
		if u.Principal != "" {
			p, ok := units[u.Principal]
			if !ok {
				bad("subordinate %s: principal %s does not exist", name, u.Principal)
			} else if !slices.Contains(p.Subordinates, name) {
				bad("subordinate %s: principal %s does not list it", name, u.Principal)
			}
			continue
		}
		if _, ok := machines[u.MachineId]; !ok {
			bad("unit %s: machine %s does not exist", name, u.MachineId)
		}
		if !slices.Contains(machineUnits[u.MachineId], name) {
			bad("unit %s: not in machine %s's index", name, u.MachineId)
		} else if indexLife[name] != u.Life {
			bad("machine-units index of %s says %q, unit is %s", name, indexLife[name], u.Life)
		}
		for _, sub := range u.Subordinates {
			if s, ok := units[sub]; !ok || s.Principal != name {
				bad("unit %s: subordinate %s missing or not its own", name, sub)
			}
		}
		if u.Life == string(life.Dead) && (len(u.Scopes) > 0 || len(u.Subordinates) > 0) {
			bad("unit %s is dead but still holds scopes or subordinates (L-U4)", name)
		}
	}
	for m, list := range machineUnits {
		for _, unit := range list {
			if u, ok := units[unit]; !ok || u.MachineId != m {
				bad("machine %s's index lists unit %s that is not assigned to it", m, unit)
			}
		}
		if mach, ok := machines[m]; ok && mach.Life == string(life.Dead) && len(list) > 0 {
			bad("machine %s is dead with units assigned", m)
		}
	}
	tasks.check(bad, func(receiver string) bool {
		_, unit := units[receiver]
		_, machine := machines[receiver]
		return unit || machine
	})
	slices.SortFunc(problems, names.NaturalCompare)
	return problems, nil
}

// Remaining lists what of a model is not alive, or pending cleanup: after agents settle there
// must be nothing (L-F2: nothing stays stuck).
func (s *State) Remaining(ctx context.Context, uuid string) ([]string, error) {
	snap, err := s.Snapshot(ctx, uuid)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range snap.Machines {
		if m.Life != string(life.Alive) {
			out = append(out, "machine "+m.Id+" "+m.Life)
		}
	}
	for _, a := range snap.Applications {
		if a.Life != string(life.Alive) {
			n := 0
			for _, u := range snap.Units {
				if u.Application == a.Name {
					n++
				}
			}
			out = append(out, fmt.Sprintf("application %s %s (units %d, relations %d)", a.Name, a.Life, n, a.RelationCount))
		}
	}
	for _, u := range snap.Units {
		if u.Life != string(life.Alive) {
			out = append(out, "unit "+u.Name+" "+u.Life)
		}
	}
	for _, r := range snap.Relations {
		if r.Life != string(life.Alive) {
			out = append(out, "relation "+r.Key+" "+r.Life)
		}
	}
	cl, err := s.Cleanups(ctx, uuid)
	if err != nil {
		return nil, err
	}
	for _, c := range cl {
		out = append(out, fmt.Sprintf("cleanup %d of relation %d", c.ID, c.Doc.RelationId))
	}
	slices.SortFunc(out, names.NaturalCompare)
	return out, nil
}
