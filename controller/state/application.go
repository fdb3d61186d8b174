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
	"github.com/jujuclone/juju/core/limits"
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
	// NumUnits units (at most limits.MaxUnitsPerCall) are added with the application: unit i
	// goes where Placements[i] says, the rest to new machines. Placements beyond NumUnits are
	// ignored, as in Juju.
	NumUnits   int
	Placements []Placement
	// Resources are uploads kept aside (UploadResource with Pending) that become the
	// application's first revisions: resource name -> pending id.
	Resources map[string]string
}

// Deploy is AddApplication for callers that need not the names of the units.
func (s *State) Deploy(ctx context.Context, uuid string, args DeployArgs) (*storepb.Application, error) {
	app, _, err := s.AddApplication(ctx, uuid, args)
	return app, err
}

// AddApplication creates an application, one peer relation per peer endpoint of its charm
// (L-D1, L-D2), its units and the machines they need (L-D3), in ONE transaction: everything is
// checked before anything is written, and a refused or interrupted deploy leaves nothing, so
// a retry finds no half-made application. The transaction grows with -n, which
// limits.MaxUnitsPerCall bounds, never with the model (L-G4). It returns the new units' names.
func (s *State) AddApplication(ctx context.Context, uuid string, args DeployArgs) (*storepb.Application, []string, error) {
	what := fmt.Sprintf("cannot add application %q", args.Name)
	if err := names.ValidateApplicationName(args.Name); err != nil {
		return nil, nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	b, err := base.Parse(args.Base)
	if err != nil {
		return nil, nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	cons, err := canonicalConstraints(args.Constraints)
	if err != nil {
		return nil, nil, err
	}
	ch, err := s.Charm(ctx, uuid, args.CharmURL)
	if err != nil {
		return nil, nil, err
	}
	meta, err := CharmMeta(ch)
	if err != nil {
		return nil, nil, err
	}
	if meta.Subordinate && cons != "" {
		// L-C4
		return nil, nil, apierr.Errorf(apierr.NotValid, "cannot use --constraints with subordinate application")
	}
	if meta.Subordinate && (args.NumUnits > 0 || len(args.Placements) > 0) {
		// L-D3: subordinate units come from their principals, never from deploy.
		return nil, nil, apierr.Errorf(apierr.NotValid, "cannot use --num-units or --to with subordinate application")
	}
	if args.NumUnits < 0 {
		return nil, nil, apierr.Errorf(apierr.NotValid, "--num-units must be a positive integer")
	}
	placements, err := checkUnitsRequest(args.NumUnits, args.Placements)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := checkConfigSize(args.Config); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	app := &storepb.Application{
		Name: args.Name, CharmUrl: args.CharmURL, Base: b.DisplayString(), Life: string(life.Alive),
		Subordinate: meta.Subordinate, Constraints: cons, Config: args.Config, Created: s.now().UnixNano(),
		Trust: args.Trust,
	}
	peers := meta.PeerEndpoints()
	var units []string
	err = s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if err := r.prefetch(ctx, append([]string{modelKey(uuid), applicationKey(uuid, args.Name)}, placementKeys(uuid, placements)...)...); err != nil {
			return nil, err
		}
		m, err := r.model(ctx, uuid)
		if err != nil {
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
		w := &writes{bulk: true}
		app.RelationCount = 0
		for _, ep := range peers {
			if _, err := r.addRelation(ctx, w, uuid, []*storepb.Endpoint{endpointDoc(args.Name, ep)}); err != nil {
				return nil, err
			}
			app.RelationCount++
		}
		w.put(applicationKey(uuid, args.Name), app)
		if _, err := r.usePendingResources(ctx, w, uuid, args.Name, meta, args.Resources); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if units, err = r.addUnits(ctx, w, s, uuid, m, app, args.NumUnits, placements); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return w, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return app, units, nil
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

// checkUnitsRequest checks what can be checked of n units and their placements before reading
// anything: the bound per call and what the local provider can never do. It returns the
// placements that apply (one per unit at most).
func checkUnitsRequest(n int, placements []Placement) ([]Placement, error) {
	if n > limits.MaxUnitsPerCall {
		return nil, apierr.Errorf(apierr.NotValid, "cannot add %d units: at most %d per call", n, limits.MaxUnitsPerCall)
	}
	if len(placements) > n {
		placements = placements[:n]
	}
	for _, p := range placements {
		if err := CheckPlacement(p); err != nil {
			return nil, err
		}
	}
	return placements, nil
}

// placementKeys are the machines placements name, to read in one round trip.
func placementKeys(uuid string, placements []Placement) []string {
	var keys []string
	seen := map[string]bool{}
	for _, p := range placements {
		if p.Scope == "#" && !seen[p.Directive] {
			seen[p.Directive] = true
			keys = append(keys, machineKey(uuid, p.Directive))
		}
	}
	return keys
}

// AddUnits adds n units to a principal, alive application (L-D3, L-D4), all in one
// transaction: unit i goes where placements[i] says, or to a new machine. Every placement is
// checked before anything is written; a refused call adds no unit and no machine. It returns
// the names of the units added.
func (s *State) AddUnits(ctx context.Context, uuid, appName string, n int, placements []Placement) ([]string, error) {
	what := fmt.Sprintf("cannot add unit to application %q", appName)
	if n < 1 {
		return nil, apierr.Errorf(apierr.NotValid, "must add at least one unit")
	}
	placements, err := checkUnitsRequest(n, placements)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var added []string
	err = s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if err := r.prefetch(ctx, append([]string{modelKey(uuid), applicationKey(uuid, appName)}, placementKeys(uuid, placements)...)...); err != nil {
			return nil, err
		}
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
		// The units' records are the application's unit count (L-G6): the application
		// document is only asserted alive.
		w := &writes{bulk: true}
		if added, err = r.addUnits(ctx, w, s, uuid, m, app, n, placements); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// addUnits writes n units of app (principal, alive) into w, with the machines they need.
func (r *reader) addUnits(ctx context.Context, w *writes, s *State, uuid string, m *storepb.Model, app *storepb.Application, n int, placements []Placement) ([]string, error) {
	if n == 0 {
		return nil, nil
	}
	// L-C2: model and application constraints collapse into the units', once.
	cons, err := mergeConstraints(m.Constraints, app.Constraints)
	if err != nil {
		return nil, err
	}
	machines := map[string]*storepb.Machine{} // read once each, however many units go there
	units := make([]string, 0, n)
	for i := 0; i < n; i++ {
		var p Placement
		if i < len(placements) {
			p = placements[i]
		}
		seq, err := r.nextSequence(ctx, uuid, "unit-"+app.Name)
		if err != nil {
			return nil, err
		}
		unitName := fmt.Sprintf("%s/%d", app.Name, seq)
		machineID, err := r.placeUnit(ctx, w, s, uuid, app, cons, p, machines)
		if err != nil {
			return nil, err
		}
		w.put(unitKey(uuid, unitName), &storepb.Unit{
			Name: unitName, Application: app.Name, Base: app.Base, Life: string(life.Alive),
			CharmUrl: app.CharmUrl, MachineId: machineID, Constraints: cons,
			AgentStatus:    s.status(string(status.Allocating), ""),
			WorkloadStatus: s.status(string(status.Waiting), "waiting for machine"),
		})
		// The index value is the unit's life, so the machine agent's watch of the index sees
		// its units go dying and dead (L-S machine agent). Leadership is claimed by the units'
		// agents (leases/<app>).
		w.putRaw(machineUnitKey(uuid, machineID, unitName), string(life.Alive))
		units = append(units, unitName)
	}
	return units, nil
}

// CheckPlacement refuses what the local provider can never do, whatever the model holds:
// containers and provider directives. AddApplication and AddUnits check every placement with it
// before they read anything.
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

// placeUnit picks (or creates, in w) the machine for a new principal unit; machines caches
// the existing machines already read by this transaction.
func (r *reader) placeUnit(ctx context.Context, w *writes, s *State, uuid string, app *storepb.Application, cons string, p Placement, machines map[string]*storepb.Machine) (string, error) {
	if err := CheckPlacement(p); err != nil {
		return "", err
	}
	switch p.Scope {
	case "":
		// L-C3: a machine added for a unit copies the unit's constraints.
		return r.newMachine(ctx, w, s, uuid, app.Base, cons)
	case "#":
		m, ok := machines[p.Directive]
		if !ok {
			m = &storepb.Machine{}
			found, err := r.get(ctx, machineKey(uuid, p.Directive), m)
			if err != nil {
				return "", err
			}
			if !found {
				return "", apierr.Errorf(apierr.NotFound, "machine %s not found", p.Directive)
			}
			machines[p.Directive] = m
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
