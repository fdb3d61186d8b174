package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

func scopePrefix(uuid string, rel int64) string {
	return ModelPrefix(uuid) + "scopes/" + strconv.FormatInt(rel, 10) + "/"
}
func scopeKey(uuid string, rel int64, unit string) string { return scopePrefix(uuid, rel) + unit }
func settingsPrefix(uuid string, rel int64) string {
	return ModelPrefix(uuid) + "settings/" + strconv.FormatInt(rel, 10) + "/"
}
func settingsKey(uuid string, rel int64, unit string) string { return settingsPrefix(uuid, rel) + unit }
func cleanupKey(uuid string, seq int64) string {
	return ModelPrefix(uuid) + "cleanups/" + strconv.FormatInt(seq, 10)
}

// EndpointSpec is one side of an integrate or remove-relation request: an application and,
// optionally, one of its endpoints.
type EndpointSpec struct {
	Application, Endpoint string
}

// ParseEndpoint reads "app" or "app:endpoint".
func ParseEndpoint(s string) (EndpointSpec, error) {
	app, ep, found := strings.Cut(s, ":")
	if found && (ep == "" || strings.Contains(ep, ":") || !names.IsValidEndpoint(ep)) || app == "" {
		return EndpointSpec{}, apierr.Errorf(apierr.NotValid, "endpoint %q not valid", s)
	}
	if !names.IsValidApplication(app) {
		return EndpointSpec{}, apierr.Errorf(apierr.NotValid, "application name %q not valid", app)
	}
	return EndpointSpec{Application: app, Endpoint: ep}, nil
}

func (e EndpointSpec) String() string {
	if e.Endpoint == "" {
		return e.Application
	}
	return e.Application + ":" + e.Endpoint
}

// applicationEndpoints returns an application's endpoints (with the implicit juju-info).
func (s *State) applicationEndpoints(ctx context.Context, uuid, app string) ([]charm.Relation, error) {
	a, err := s.Application(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	ch, err := s.Charm(ctx, uuid, a.CharmUrl)
	if err != nil {
		return nil, err
	}
	meta, err := CharmMeta(ch)
	if err != nil {
		return nil, err
	}
	return meta.Endpoints(), nil
}

// inferEndpoints picks the one pair of endpoints two specs can mean (L-D5): same interface and
// provider/requirer roles. Several candidates are ambiguous, except that the implicit juju-info
// endpoint gives way to explicit ones, as in Juju.
func (s *State) inferEndpoints(ctx context.Context, uuid string, a, b EndpointSpec) ([]*storepb.Endpoint, error) {
	if a.Application == b.Application {
		return nil, apierr.Errorf(apierr.NotValid,
			"cannot integrate application %q with itself: peer relations come with the charm", a.Application)
	}
	epsA, err := s.applicationEndpoints(ctx, uuid, a.Application)
	if err != nil {
		return nil, err
	}
	epsB, err := s.applicationEndpoints(ctx, uuid, b.Application)
	if err != nil {
		return nil, err
	}
	type pair struct{ x, y charm.Relation }
	var candidates []pair
	for _, x := range epsA {
		if a.Endpoint != "" && x.Name != a.Endpoint {
			continue
		}
		for _, y := range epsB {
			if b.Endpoint != "" && y.Name != b.Endpoint {
				continue
			}
			if x.Interface != y.Interface || !counterpartRoles(x.Role, y.Role) {
				continue
			}
			candidates = append(candidates, pair{x, y})
		}
	}
	if len(candidates) > 1 {
		explicit := slices.DeleteFunc(slices.Clone(candidates), func(p pair) bool {
			return p.x.Name == charm.JujuInfo || p.y.Name == charm.JujuInfo
		})
		if len(explicit) > 0 {
			candidates = explicit
		}
	}
	switch len(candidates) {
	case 0:
		return nil, apierr.Errorf(apierr.NotFound, "no relations found")
	case 1:
	default:
		var quoted []string
		for _, c := range candidates {
			quoted = append(quoted, fmt.Sprintf("%q", a.Application+":"+c.x.Name+" "+b.Application+":"+c.y.Name))
		}
		return nil, apierr.Errorf(apierr.NotValid, "ambiguous relation: %q could refer to %s",
			a.String()+" "+b.String(), strings.Join(quoted, "; "))
	}
	c := candidates[0]
	eps := []*storepb.Endpoint{endpointDoc(a.Application, c.x), endpointDoc(b.Application, c.y)}
	// L-D6: one container-scoped endpoint makes the whole relation container-scoped.
	if c.x.Scope == charm.ScopeContainer || c.y.Scope == charm.ScopeContainer {
		for _, ep := range eps {
			ep.Scope = string(charm.ScopeContainer)
		}
	}
	return eps, nil
}

func counterpartRoles(a, b charm.Role) bool {
	return a == charm.RoleProvider && b == charm.RoleRequirer || a == charm.RoleRequirer && b == charm.RoleProvider
}

// Integrate relates two alive applications (L-D5, L-D6) and returns the new relation.
func (s *State) Integrate(ctx context.Context, uuid string, a, b EndpointSpec) (*storepb.Relation, error) {
	eps, err := s.inferEndpoints(ctx, uuid, a, b)
	if err != nil {
		return nil, err
	}
	key := RelationKey(eps)
	what := fmt.Sprintf("cannot add relation %q", key)
	var rel *storepb.Relation
	err = s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		w := &writes{}
		var apps []*storepb.Application
		for _, ep := range eps {
			app, err := r.application(ctx, uuid, ep.Application)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			if app.Life != string(life.Alive) {
				return nil, apierr.Errorf(apierr.NotAlive, "%s: application %q is not alive", what, app.Name) // L-D5
			}
			apps = append(apps, app)
		}
		if eps[0].Scope == string(charm.ScopeContainer) {
			// L-D6
			if !apps[0].Subordinate && !apps[1].Subordinate {
				return nil, apierr.Errorf(apierr.NotValid, "%s: a container-scoped relation needs a subordinate application", what)
			}
			if !compatibleBases(apps[0].Base, apps[1].Base) {
				return nil, apierr.Errorf(apierr.NotValid, "%s: principal and subordinate applications' bases must match (%s, %s)",
					what, apps[0].Base, apps[1].Base)
			}
		}
		var err error
		if rel, err = r.addRelation(ctx, w, uuid, eps); err != nil {
			if errors.Is(err, apierr.AlreadyExists) {
				return nil, apierr.Errorf(apierr.AlreadyExists, "%s: relation %s already exists", what, key)
			}
			return nil, err
		}
		for _, app := range apps {
			app.RelationCount++
			w.put(applicationKey(uuid, app.Name), app)
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return rel, nil
}

// application reads an application document inside a transaction.
func (r *reader) application(ctx context.Context, uuid, name string) (*storepb.Application, error) {
	app := &storepb.Application{}
	ok, err := r.get(ctx, applicationKey(uuid, name), app)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", name)
	}
	return app, nil
}

func (r *reader) unit(ctx context.Context, uuid, name string) (*storepb.Unit, error) {
	u := &storepb.Unit{}
	ok, err := r.get(ctx, unitKey(uuid, name), u)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "unit %q does not exist", name)
	}
	return u, nil
}

func (r *reader) relation(ctx context.Context, uuid string, id int64) (*storepb.Relation, error) {
	rel := &storepb.Relation{}
	ok, err := r.get(ctx, relationKey(uuid, id), rel)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "relation %d not found", id)
	}
	return rel, nil
}

// Relation returns a relation document.
func (s *State) Relation(ctx context.Context, uuid string, id int64) (*storepb.Relation, error) {
	rel := &storepb.Relation{}
	ok, err := s.getDoc(ctx, relationKey(uuid, id), rel)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "relation %d not found", id)
	}
	return rel, nil
}

// Relations lists a model's relations.
func (s *State) Relations(ctx context.Context, uuid string) ([]*storepb.Relation, error) {
	resp, err := s.kv.Get(ctx, ModelPrefix(uuid)+"relations/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing relations: %w", err)
	}
	out := make([]*storepb.Relation, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		rel := &storepb.Relation{}
		if err := unmarshal(kv, rel); err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

// FindRelation resolves remove-relation's two endpoints to one relation.
func (s *State) FindRelation(ctx context.Context, uuid string, a, b EndpointSpec) (*storepb.Relation, error) {
	rels, err := s.Relations(ctx, uuid)
	if err != nil {
		return nil, err
	}
	matches := func(ep *storepb.Endpoint, spec EndpointSpec) bool {
		return ep.Application == spec.Application && (spec.Endpoint == "" || ep.Name == spec.Endpoint)
	}
	var found []*storepb.Relation
	for _, rel := range rels {
		if len(rel.Endpoints) != 2 {
			continue
		}
		e0, e1 := rel.Endpoints[0], rel.Endpoints[1]
		if matches(e0, a) && matches(e1, b) || matches(e0, b) && matches(e1, a) {
			found = append(found, rel)
		}
	}
	switch len(found) {
	case 0:
		return nil, apierr.Errorf(apierr.NotFound, "relation matching %q not found", a.String()+" "+b.String())
	case 1:
		return found[0], nil
	}
	var keys []string
	for _, rel := range found {
		keys = append(keys, fmt.Sprintf("%q", rel.Key))
	}
	return nil, apierr.Errorf(apierr.NotValid, "ambiguous relation: %q could refer to %s",
		a.String()+" "+b.String(), strings.Join(keys, "; "))
}

// Outcome says what a destroy call did.
type Outcome string

const (
	// OutcomeRemoved: the entity is gone.
	OutcomeRemoved Outcome = "removed"
	// OutcomeDying: the entity is dying; agents (or, when forced, the controller) finish the job.
	OutcomeDying Outcome = "dying"
	// OutcomeNone: the entity was not alive, so nothing changed (L-G2).
	OutcomeNone Outcome = "none"
)

// DestroyRelation is remove-relation (L-R1). forceAfter, when non-zero, is when the controller
// takes over the duties of agents that have not left its scope (L-F1).
func (s *State) DestroyRelation(ctx context.Context, uuid string, id int64, forceAfter int64) (Outcome, error) {
	var outcome Outcome
	err := s.run(ctx, fmt.Sprintf("cannot destroy relation %d", id), func(ctx context.Context, r *reader) (*writes, error) {
		rel, err := r.relation(ctx, uuid, id)
		if err != nil {
			return nil, err
		}
		if len(rel.Endpoints) == 1 {
			return nil, apierr.Errorf(apierr.NotSupported, "relation %q is a peer relation; it goes with its application", rel.Key)
		}
		w := &writes{}
		if rel.Life != string(life.Alive) {
			outcome = OutcomeNone
			if forceAfter > 0 && (rel.ForceAfter == 0 || forceAfter < rel.ForceAfter) {
				rel.ForceAfter = forceAfter
				w.put(relationKey(uuid, id), rel)
			}
			return w, nil
		}
		occupied, err := r.occupied(ctx, uuid, id)
		if err != nil {
			return nil, err
		}
		if occupied {
			outcome = OutcomeDying
			rel.Life = string(life.Dying)
			rel.ForceAfter = forceAfter
			w.put(relationKey(uuid, id), rel)
			return w, nil
		}
		outcome = OutcomeRemoved
		for _, ep := range rel.Endpoints {
			app, err := r.application(ctx, uuid, ep.Application)
			if err != nil {
				return nil, err
			}
			app.RelationCount--
			w.put(applicationKey(uuid, app.Name), app)
		}
		if err := r.deleteRelation(ctx, w, uuid, rel); err != nil {
			return nil, err
		}
		return w, nil
	})
	return outcome, err
}

// deleteRelation deletes a relation and its key index and leaves one cleanup document for its
// settings (L-R1, L-R7). The caller fixes the applications' relation counts.
func (r *reader) deleteRelation(ctx context.Context, w *writes, uuid string, rel *storepb.Relation) error {
	seq, err := r.nextSequence(ctx, uuid, "cleanup")
	if err != nil {
		return err
	}
	w.del(relationKey(uuid, rel.Id))
	w.del(relationIndexKey(uuid, rel.Key))
	w.put(cleanupKey(uuid, seq), &storepb.Cleanup{Kind: CleanupRelationSettings, RelationId: rel.Id, Created: r.s.now().UnixNano()})
	return nil
}

// CleanupRelationSettings is the kind of cleanup that deletes a removed relation's settings.
const CleanupRelationSettings = "relation-settings"

// EnterScope writes a unit's settings and enters a relation's scope, in one transaction (L-R2:
// the settings are there before anyone sees the unit). A principal entering a container-scoped
// relation gets its subordinate in the same transaction unless it has one already (L-D7).
// It returns the name of a subordinate it created.
func (s *State) EnterScope(ctx context.Context, uuid string, relID int64, unitName string, settings map[string]string) (string, error) {
	var created string
	what := fmt.Sprintf("unit %q cannot enter scope of relation %d", unitName, relID)
	err := s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		created = ""
		if err := r.prefetch(ctx, scopeKey(uuid, relID, unitName), unitKey(uuid, unitName), relationKey(uuid, relID)); err != nil {
			return nil, err
		}
		inScope, err := r.get(ctx, scopeKey(uuid, relID, unitName), nil)
		if err != nil || inScope {
			return nil, err
		}
		u, err := r.unit(ctx, uuid, unitName)
		if err != nil {
			return nil, err
		}
		if u.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: unit is not alive", what)
		}
		rel, err := r.relation(ctx, uuid, relID)
		if err != nil {
			return nil, err
		}
		if rel.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: relation is not alive", what)
		}
		own, other := relationSides(rel, u.Application)
		if own == nil {
			return nil, apierr.Errorf(apierr.NotValid, "%s: application %q is not in it", what, u.Application)
		}
		w := &writes{}
		if own.Scope == string(charm.ScopeContainer) && u.Principal == "" {
			if created, err = r.ensureSubordinate(ctx, w, uuid, u, other.Application); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		w.put(settingsKey(uuid, relID, unitName), &storepb.Settings{Values: settings})
		w.putRaw(scopeKey(uuid, relID, unitName), "")
		// The relation document is only read (asserted alive): with a count in it, a thousand
		// units joining or leaving at once would all fight over that one key.
		u.Scopes = append(u.Scopes, relID)
		w.put(unitKey(uuid, unitName), u)
		return w, nil
	})
	return created, err
}

// relationSides returns the endpoint of app in rel and the other one (the same for a peer).
func relationSides(rel *storepb.Relation, app string) (own, other *storepb.Endpoint) {
	for _, ep := range rel.Endpoints {
		if ep.Application == app && own == nil {
			own = ep
		} else {
			other = ep
		}
	}
	if other == nil {
		other = own
	}
	return own, other
}

// ensureSubordinate creates principal's unit of the subordinate application subApp unless it
// has one already (L-D7: one per principal unit and subordinate application).
func (r *reader) ensureSubordinate(ctx context.Context, w *writes, uuid string, principal *storepb.Unit, subApp string) (string, error) {
	for _, sub := range principal.Subordinates {
		if app, _ := names.UnitApplication(sub); app == subApp {
			return "", nil
		}
	}
	app, err := r.application(ctx, uuid, subApp)
	if err != nil {
		return "", err
	}
	if app.Life != string(life.Alive) || !app.Subordinate {
		return "", nil
	}
	seq, err := r.nextSequence(ctx, uuid, "unit-"+subApp)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s/%d", subApp, seq)
	w.put(unitKey(uuid, name), &storepb.Unit{
		Name: name, Application: subApp, Base: principal.Base, Life: string(life.Alive), CharmUrl: app.CharmUrl,
		Principal:      principal.Name,
		AgentStatus:    r.s.status(string(status.Allocating), ""),
		WorkloadStatus: r.s.status(string(status.Waiting), "agent initialising"),
	})
	principal.Subordinates = append(principal.Subordinates, name)
	return name, nil
}

// LeaveScope takes a unit out of a relation's scope. The last unit out of a dying relation
// removes it, and with it a counterpart application that nothing else holds (L-R4).
// Leaving a scope the unit is not in does nothing.
func (s *State) LeaveScope(ctx context.Context, uuid string, relID int64, unitName string) error {
	what := fmt.Sprintf("unit %q cannot leave scope of relation %d", unitName, relID)
	return s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if err := r.prefetch(ctx, scopeKey(uuid, relID, unitName), unitKey(uuid, unitName), relationKey(uuid, relID)); err != nil {
			return nil, err
		}
		inScope, err := r.get(ctx, scopeKey(uuid, relID, unitName), nil)
		if err != nil || !inScope {
			return nil, err
		}
		u, err := r.unit(ctx, uuid, unitName)
		if err != nil {
			return nil, err
		}
		rel, err := r.relation(ctx, uuid, relID)
		if err != nil {
			return nil, err
		}
		w := &writes{}
		w.del(scopeKey(uuid, relID, unitName))
		u.Scopes = slices.DeleteFunc(u.Scopes, func(id int64) bool { return id == relID })
		w.put(unitKey(uuid, unitName), u)
		if rel.Life == string(life.Alive) {
			return w, nil
		}
		last, err := r.lastInScope(ctx, uuid, relID, unitName)
		if err != nil || !last {
			return w, err
		}
		// L-R4: the unit's own application still has this unit, so it only loses the relation.
		own, err := r.application(ctx, uuid, u.Application)
		if err != nil {
			return nil, err
		}
		own.RelationCount--
		w.put(applicationKey(uuid, own.Name), own)
		for _, ep := range rel.Endpoints {
			if ep.Application == u.Application {
				continue
			}
			other, err := r.application(ctx, uuid, ep.Application)
			if err != nil {
				return nil, err
			}
			if err := r.releaseRelation(ctx, w, uuid, other); err != nil {
				return nil, err
			}
		}
		return w, r.deleteRelation(ctx, w, uuid, rel)
	})
}

// occupied reports whether any unit is in a relation's scope (asserted, see othersUnder).
func (r *reader) occupied(ctx context.Context, uuid string, relID int64) (bool, error) {
	return r.othersUnder(ctx, scopePrefix(uuid, relID), "")
}

// lastInScope reports whether unit is the last in a relation's scope (asserted, see
// othersUnder). Two last units leaving together cannot both think that someone else will
// remove the relation (L-R4).
func (r *reader) lastInScope(ctx context.Context, uuid string, relID int64, unit string) (bool, error) {
	others, err := r.othersUnder(ctx, scopePrefix(uuid, relID), scopeKey(uuid, relID, unit))
	return !others, err
}

// othersUnder reports whether any key other than except (which may be "") exists under
// prefix, and asserts the answer for the commit: if so, that one such key (the first after
// except, else the first before it: neighbours, so that a crowd leaving at once does not all
// watch the same key) still exists; if not, that there is still none. Counting this way, from
// the records themselves, keeps counts off hot documents: a thousand units leaving a relation
// or an application at once write only their own keys.
func (r *reader) othersUnder(ctx context.Context, prefix, except string) (bool, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	ranges := [][2]string{{prefix, end}}
	if except != "" {
		ranges = [][2]string{{except + "\x00", end}, {prefix, except}}
	}
	for {
		var found []byte
		for _, rng := range ranges {
			resp, err := r.s.kv.Get(ctx, rng[0], clientv3.WithRange(rng[1]), clientv3.WithKeysOnly(), clientv3.WithLimit(1))
			if err != nil {
				return false, fmt.Errorf("reading %s: %w", prefix, err)
			}
			if len(resp.Kvs) > 0 {
				found = resp.Kvs[0].Key
				break
			}
		}
		if found == nil {
			for _, rng := range ranges {
				r.assertEmpty(rng[0], rng[1])
			}
			return false, nil
		}
		exists, err := r.get(ctx, string(found), nil)
		if err != nil || exists {
			return exists, err
		}
		// Gone between the two reads: look again.
	}
}

// releaseRelation drops one relation reference from app; a dying application that nothing else
// holds goes with it (L-R4, L-A3).
func (r *reader) releaseRelation(ctx context.Context, w *writes, uuid string, app *storepb.Application) error {
	if app.Life == string(life.Alive) || app.RelationCount >= 2 {
		app.RelationCount--
		w.put(applicationKey(uuid, app.Name), app)
		return nil
	}
	hasUnits, err := r.othersUnder(ctx, applicationUnitsPrefix(uuid, app.Name), "")
	if err != nil {
		return err
	}
	if hasUnits {
		app.RelationCount--
		w.put(applicationKey(uuid, app.Name), app)
		return nil
	}
	w.deleteApplication(uuid, app.Name)
	return nil
}

// applicationUnitsPrefix is where an application's units are: their records are its unit
// count (L-G6).
func applicationUnitsPrefix(uuid, app string) string { return ModelPrefix(uuid) + "units/" + app + "/" }

// UnitRelation is a relation as one unit's agent sees it.
type UnitRelation struct {
	Relation *storepb.Relation
	// Own and Other are the unit's endpoint and the counterpart's (the same for a peer).
	Own, Other *storepb.Endpoint
	InScope    bool
	// ShouldJoin: the relation is alive, the unit is alive and, for a container-scoped relation
	// seen by a subordinate, the counterpart is its principal's application.
	ShouldJoin bool
	// Members: the counterparts in scope the unit observes (L-R2), while it is in scope itself;
	// filled by State.UnitRelations and ReadUnitWorld only.
	Members []Member
	// RemoteAppSettingsRevision: the store revision of the other application's settings in the
	// relation (0: never written), filled with Members; a change is relation-changed.
	RemoteAppSettingsRevision int64
}

// UnitRelations lists the relations of a unit's application, with the unit's membership as
// recorded in the store (L-R6) and, for each relation it is in scope of whose endpoint
// membersOf accepts (nil: every one), the members it observes; all as of one store revision.
func (s *State) UnitRelations(ctx context.Context, uuid, unitName string, membersOf func(endpoint string) bool) ([]UnitRelation, error) {
	resp, err := s.kv.Txn(ctx).Then(unitRelationsOps(uuid, unitName)...).Commit()
	if err != nil {
		return nil, fmt.Errorf("reading relations of unit %q: %w", unitName, err)
	}
	_, out, err := s.decodeUnitRelations(ctx, uuid, unitName, resp, membersOf)
	return out, err
}

// unitRelationsOps read what decodeUnitRelations takes, first in a transaction.
func unitRelationsOps(uuid, unitName string) []clientv3.Op {
	return []clientv3.Op{clientv3.OpGet(unitKey(uuid, unitName)), clientv3.OpGet(ModelPrefix(uuid)+"relations/", clientv3.WithPrefix())}
}

// decodeUnitRelations makes a unit and its relations of a read that began with
// unitRelationsOps, and adds the members membersOf asks for.
func (s *State) decodeUnitRelations(ctx context.Context, uuid, unitName string, resp *clientv3.TxnResponse, membersOf func(string) bool) (*storepb.Unit, []UnitRelation, error) {
	ukvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(ukvs) == 0 {
		return nil, nil, apierr.Errorf(apierr.NotFound, "unit %q not found", unitName)
	}
	u := &storepb.Unit{}
	if err := unmarshal(ukvs[0], u); err != nil {
		return nil, nil, err
	}
	var rels []*storepb.Relation
	for _, kv := range resp.Responses[1].GetResponseRange().GetKvs() {
		rel := &storepb.Relation{}
		if err := unmarshal(kv, rel); err != nil {
			return nil, nil, err
		}
		rels = append(rels, rel)
	}
	out := unitRelations(u, rels)
	if err := s.addMembers(ctx, uuid, resp.Header.Revision, u, out, membersOf); err != nil {
		return nil, nil, err
	}
	return u, out, nil
}

// UnitRelations is State.UnitRelations as of the snapshot; false if the unit is not in it.
func (snap *Snapshot) UnitRelations(unitName string) (*storepb.Unit, []UnitRelation, bool) {
	for _, u := range snap.Units {
		if u.Name == unitName {
			return u, unitRelations(u, snap.Relations), true
		}
	}
	return nil, nil, false
}

func unitRelations(u *storepb.Unit, rels []*storepb.Relation) []UnitRelation {
	principalApp := ""
	if u.Principal != "" {
		principalApp, _ = names.UnitApplication(u.Principal)
	}
	var out []UnitRelation
	for _, rel := range rels {
		own, other := relationSides(rel, u.Application)
		if own == nil {
			continue
		}
		ur := UnitRelation{Relation: rel, Own: own, Other: other, InScope: slices.Contains(u.Scopes, rel.Id)}
		ur.ShouldJoin = rel.Life == string(life.Alive) && u.Life == string(life.Alive)
		if own.Scope == string(charm.ScopeContainer) && u.Principal != "" && other.Application != principalApp {
			ur.ShouldJoin = false
		}
		out = append(out, ur)
	}
	return out
}

// RelationSettings returns the settings of every unit that ever joined a relation.
func (s *State) RelationSettings(ctx context.Context, uuid string, relID int64) (map[string]map[string]string, error) {
	prefix := settingsPrefix(uuid, relID)
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading settings of relation %d: %w", relID, err)
	}
	out := map[string]map[string]string{}
	for _, kv := range resp.Kvs {
		st := &storepb.Settings{}
		if err := unmarshal(kv, st); err != nil {
			return nil, err
		}
		out[string(kv.Key)[len(prefix):]] = st.Values
	}
	return out, nil
}

// ScopeUnits lists the units in a relation's scope.
func (s *State) ScopeUnits(ctx context.Context, uuid string, relID int64) ([]string, error) {
	return s.keysUnder(ctx, scopePrefix(uuid, relID))
}
