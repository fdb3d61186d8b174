package state

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// DeployArgs describe a new application.
type DeployArgs struct {
	Name        string
	CharmURL    string
	Base        string
	Constraints string
	Config      map[string]string
	// Trust is the application config option trust (deploy --trust).
	Trust bool
	// NumUnits and Placement are only checked here (L-D3); units come from AddUnits.
	NumUnits  int
	Placement bool
}

// Deploy creates an application and, in the same transaction, one peer relation per peer
// endpoint of its charm (L-D1, L-D2). Units are added afterwards by AddUnits, one transaction
// each, so no transaction grows with -n (L-G4).
func (s *State) Deploy(ctx context.Context, uuid string, args DeployArgs) (*storepb.Application, error) {
	if err := names.ValidateApplicationName(args.Name); err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	b, err := base.Parse(args.Base)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	cons, err := canonicalConstraints(args.Constraints)
	if err != nil {
		return nil, err
	}
	ch, err := s.Charm(ctx, uuid, args.CharmURL)
	if err != nil {
		return nil, err
	}
	meta, err := CharmMeta(ch)
	if err != nil {
		return nil, err
	}
	if meta.Subordinate && cons != "" {
		// L-C4
		return nil, apierr.Errorf(apierr.NotValid, "cannot use --constraints with subordinate application")
	}
	if meta.Subordinate && (args.NumUnits > 0 || args.Placement) {
		// L-D3: subordinate units come from their principals, never from deploy.
		return nil, apierr.Errorf(apierr.NotValid, "cannot use --num-units or --to with subordinate application")
	}
	app := &storepb.Application{
		Name: args.Name, CharmUrl: args.CharmURL, Base: b.DisplayString(), Life: string(life.Alive),
		Subordinate: meta.Subordinate, Constraints: cons, Config: args.Config, Created: s.now().UnixNano(),
		Trust: args.Trust,
	}
	peers := meta.PeerEndpoints()
	what := fmt.Sprintf("cannot add application %q", args.Name)
	err = s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		// L-G5: the document stays while dying or dead, so its presence alone blocks reuse.
		exists, err := r.get(ctx, applicationKey(uuid, args.Name), nil)
		if err != nil {
			return nil, err
		}
		if exists {
			return nil, apierr.Errorf(apierr.AlreadyExists, "%s: application already exists", what)
		}
		w := &writes{}
		app.RelationCount = 0
		for _, ep := range peers {
			if _, err := r.addRelation(ctx, w, uuid, []*storepb.Endpoint{endpointDoc(args.Name, ep)}); err != nil {
				return nil, err
			}
			app.RelationCount++
		}
		w.put(applicationKey(uuid, args.Name), app)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return app, nil
}

func endpointDoc(app string, ep charm.Relation) *storepb.Endpoint {
	return &storepb.Endpoint{
		Application: app, Name: ep.Name, Role: string(ep.Role), Interface: ep.Interface, Scope: string(ep.Scope),
	}
}

// RelationKey is the canonical key of a relation (L-D5): "<requirer> <provider>", or the one
// endpoint of a peer relation.
func RelationKey(eps []*storepb.Endpoint) string {
	if len(eps) == 1 {
		return eps[0].Application + ":" + eps[0].Name
	}
	a, b := eps[0], eps[1]
	if a.Role == string(charm.RoleProvider) {
		a, b = b, a
	}
	return a.Application + ":" + a.Name + " " + b.Application + ":" + b.Name
}

// addRelation writes a new relation document and its key index; the key must be unused (L-G5).
func (r *reader) addRelation(ctx context.Context, w *writes, uuid string, eps []*storepb.Endpoint) (*storepb.Relation, error) {
	key := RelationKey(eps)
	_, taken, err := r.getRaw(ctx, relationIndexKey(uuid, key))
	if err != nil {
		return nil, err
	}
	if taken {
		return nil, apierr.Errorf(apierr.AlreadyExists, "relation %q already exists", key)
	}
	id, err := r.nextSequence(ctx, uuid, "relation")
	if err != nil {
		return nil, err
	}
	rel := &storepb.Relation{Id: id, Key: key, Life: string(life.Alive), Endpoints: eps}
	w.put(relationKey(uuid, id), rel)
	w.putRaw(relationIndexKey(uuid, key), strconv.FormatInt(id, 10))
	return rel, nil
}

func (r *reader) model(ctx context.Context, uuid string) (*storepb.Model, error) {
	m := &storepb.Model{}
	ok, err := r.get(ctx, modelKey(uuid), m)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "model %q not found", uuid)
	}
	if m.Life != string(life.Alive) {
		return nil, apierr.Errorf(apierr.NotAlive, "model %q is being destroyed", m.Name)
	}
	return m, nil
}

// Placement says where a unit goes: Scope "#" with Directive a machine id for an existing
// machine; Scope "" and Directive "" for a new machine.
type Placement struct {
	Scope     string
	Directive string
}

// AddUnits adds n units to a principal, alive application (L-D3, L-D4), one transaction per unit
// (L-G4). Unit i goes where placements[i] says, or to a new machine. It returns the names of the
// units added; on error, the units added before it stay.
func (s *State) AddUnits(ctx context.Context, uuid, appName string, n int, placements []Placement) ([]string, error) {
	if n < 1 {
		return nil, apierr.Errorf(apierr.NotValid, "must add at least one unit")
	}
	var added []string
	for i := 0; i < n; i++ {
		var p Placement
		if i < len(placements) {
			p = placements[i]
		}
		name, err := s.addUnit(ctx, uuid, appName, p)
		if err != nil {
			return added, err
		}
		added = append(added, name)
	}
	return added, nil
}

func (s *State) addUnit(ctx context.Context, uuid, appName string, p Placement) (string, error) {
	var unitName string
	what := fmt.Sprintf("cannot add unit to application %q", appName)
	err := s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		m, err := r.model(ctx, uuid)
		if err != nil {
			return nil, err
		}
		app := &storepb.Application{}
		ok, err := r.get(ctx, applicationKey(uuid, appName), app)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "%s: application %q not found", what, appName)
		}
		if app.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: application is not alive", what) // L-D4
		}
		if app.Subordinate {
			return nil, apierr.Errorf(apierr.NotSupported, "%s: application is a subordinate", what) // L-D3
		}
		seq, err := r.nextSequence(ctx, uuid, "unit-"+appName)
		if err != nil {
			return nil, err
		}
		unitName = fmt.Sprintf("%s/%d", appName, seq)
		// L-C2: model and application constraints collapse into the unit's, once.
		cons, err := mergeConstraints(m.Constraints, app.Constraints)
		if err != nil {
			return nil, err
		}
		w := &writes{}
		machineID, err := r.placeUnit(ctx, w, s, uuid, app, cons, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		w.put(unitKey(uuid, unitName), &storepb.Unit{
			Name: unitName, Application: appName, Base: app.Base, Life: string(life.Alive),
			CharmUrl: app.CharmUrl, MachineId: machineID, Constraints: cons,
			AgentStatus:    s.status(string(status.Allocating), ""),
			WorkloadStatus: s.status(string(status.Waiting), "waiting for machine"),
		})
		// The index value is the unit's life, so the machine agent's watch of the index sees
		// its units go dying and dead (L-S machine agent).
		w.putRaw(machineUnitKey(uuid, machineID, unitName), string(life.Alive))
		// The unit's record is the application's unit count (L-G6): the application document
		// is only asserted alive. Leadership is claimed by the units' agents (leases/<app>).
		return w, nil
	})
	if err != nil {
		return "", err
	}
	return unitName, nil
}

// CheckPlacement refuses what the local provider can never do, whatever the model holds:
// containers and provider directives. Deploy checks its placements with it before creating the
// application, so that such a deploy changes nothing.
func CheckPlacement(p Placement) error {
	switch p.Scope {
	case "":
		if p.Directive != "" {
			return apierr.Errorf(apierr.NotSupported, "placement directive %q not supported by the local provider", p.Directive)
		}
	case "lxd", "kvm":
		return apierr.Errorf(apierr.NotSupported, "%s containers are not supported by the local provider", p.Scope)
	case "#":
	default:
		return apierr.Errorf(apierr.NotValid, "invalid placement scope %q", p.Scope)
	}
	return nil
}

// placeUnit picks (or creates, in w) the machine for a new principal unit.
func (r *reader) placeUnit(ctx context.Context, w *writes, s *State, uuid string, app *storepb.Application, cons string, p Placement) (string, error) {
	if err := CheckPlacement(p); err != nil {
		return "", err
	}
	switch p.Scope {
	case "":
		// L-C3: a machine added for a unit copies the unit's constraints.
		return r.newMachine(ctx, w, s, uuid, app.Base, cons)
	case "#":
		m := &storepb.Machine{}
		ok, err := r.get(ctx, machineKey(uuid, p.Directive), m)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", apierr.Errorf(apierr.NotFound, "machine %s not found", p.Directive)
		}
		if m.Life != string(life.Alive) {
			return "", apierr.Errorf(apierr.NotAlive, "machine %s is not alive", m.Id) // L-M4
		}
		if !hasJob(m, JobHostUnits) {
			return "", apierr.Errorf(apierr.NotValid, "machine %s cannot host units", m.Id) // L-M4
		}
		if !compatibleBases(m.Base, app.Base) {
			// L-C1
			return "", apierr.Errorf(apierr.NotValid, "machine %s has base %s, application %q needs %s", m.Id, m.Base, app.Name, app.Base)
		}
		return m.Id, nil
	}
	return "", apierr.Errorf(apierr.NotValid, "invalid placement scope %q", p.Scope)
}

func hasJob(m *storepb.Machine, job string) bool {
	for _, j := range m.Jobs {
		if j == job {
			return true
		}
	}
	return false
}

func compatibleBases(a, b string) bool {
	ba, err := base.Parse(a)
	if err != nil {
		return false
	}
	bb, err := base.Parse(b)
	if err != nil {
		return false
	}
	return ba.IsCompatible(bb)
}

// Application returns an application document.
func (s *State) Application(ctx context.Context, uuid, name string) (*storepb.Application, error) {
	app := &storepb.Application{}
	ok, err := s.getDoc(ctx, applicationKey(uuid, name), app)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", name)
	}
	return app, nil
}

// SetApplicationConstraints replaces an application's constraints; existing units keep theirs
// (L-C2) and subordinates take none (L-C4).
func (s *State) SetApplicationConstraints(ctx context.Context, uuid, name, cons string) error {
	canon, err := canonicalConstraints(cons)
	if err != nil {
		return err
	}
	return s.run(ctx, fmt.Sprintf("setting constraints of %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		app := &storepb.Application{}
		ok, err := r.get(ctx, applicationKey(uuid, name), app)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "application %q not found", name)
		}
		if app.Subordinate && canon != "" {
			return nil, apierr.Errorf(apierr.NotValid, "cannot set constraints on subordinate application %q", name)
		}
		if app.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "application %q is not alive", name)
		}
		app.Constraints = canon
		w := &writes{}
		w.put(applicationKey(uuid, name), app)
		return w, nil
	})
}
