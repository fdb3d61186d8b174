package state

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
)

// SetCharmArgs is what juju refresh changes besides the charm.
type SetCharmArgs struct {
	// CharmURL is the uploaded charm to switch to.
	CharmURL string
	// ForceUnits (refresh --force-units): units in error upgrade at once too (force_charm).
	ForceUnits bool
	// Config values as typed on the command line (refresh --config), checked against the new
	// charm's options and set with the switch; "trust" sets the application's trust.
	Config map[string]string
	// Resources are uploads kept aside (UploadResource with Pending) that become the
	// application's next revisions with the switch: resource name -> pending id.
	Resources map[string]string
}

// SetApplicationCharm switches an alive application to an uploaded charm (juju refresh), in
// one transaction (L-G3) that writes the application document and the peer relations of
// peer endpoints the new charm adds (as deploy does, L-D2). It refuses, writing nothing:
// a dying or dead application; a charm of another name (Juju needs --switch for that, which
// there is no charm store to need); a change of subordinacy; a charm without an endpoint an
// existing relation of the application uses, with the same interface and role; config values
// the new charm's options do not accept. Config values of options the new charm still has,
// with a value of the option's new type, are kept; the others are dropped, and options the
// new charm adds take their defaults (defaults are never stored); then args.Config is set.
// The switch grows charm_modified_version, which tells the unit agents to upgrade, and sets
// force_charm as args.ForceUnits says. Units keep their own charm until their agents upgrade
// (SetUnitCharm). It returns the application's previous charm URL. Switching to the charm it
// already has changes only force_charm, and config and trust when given.
func (s *State) SetApplicationCharm(ctx context.Context, uuid, name string, args SetCharmArgs) (string, error) {
	charmURL := args.CharmURL
	newDoc, err := s.Charm(ctx, uuid, charmURL)
	if err != nil {
		return "", err
	}
	newMeta, err := CharmMeta(newDoc)
	if err != nil {
		return "", err
	}
	newConfig, err := CharmConfig(newDoc)
	if err != nil {
		return "", err
	}
	what := fmt.Sprintf("cannot upgrade application %q to charm %q", name, charmURL)
	values, trust, setTrust, err := SplitTrust(args.Config)
	if err != nil {
		return "", apierr.Errorf(apierr.NotValid, "%s: validating config settings: %v", what, err)
	}
	settings, err := encodeSettings(newConfig, values)
	if err != nil {
		return "", apierr.Errorf(apierr.NotValid, "%s: validating config settings: %v", what, err)
	}
	var previous string
	err = s.run(ctx, fmt.Sprintf("setting charm of %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		// Read first, and guarded: every relation added to or removed from the application
		// writes its document (the relation count), so the listing below, taken after this
		// read, cannot miss a relation that the commit would not notice.
		app, err := r.application(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		previous = app.CharmUrl
		if app.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: application is not alive", what)
		}
		before := proto.Clone(app).(*storepb.Application)
		w := &writes{}
		if app.CharmUrl != charmURL {
			if err := s.switchCharm(ctx, r, w, uuid, app, newDoc, newMeta, what); err != nil {
				return nil, err
			}
			app.CharmUrl = charmURL
			app.Config = keptConfig(newConfig, app.Config)
			app.CharmModifiedVersion++
		}
		// New resource revisions (refresh --resource) come in the same transaction; with the
		// charm unchanged they alone make the units run upgrade-charm.
		added, err := r.usePendingResources(ctx, w, uuid, name, newMeta, args.Resources)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if added && app.CharmModifiedVersion == before.CharmModifiedVersion {
			app.CharmModifiedVersion++
		}
		app.ForceCharm = args.ForceUnits
		if len(settings) > 0 {
			if app.Config == nil {
				app.Config = map[string]string{}
			}
			maps.Copy(app.Config, settings)
			if err := checkConfigSize(app.Config); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		if setTrust {
			app.Trust = trust
		}
		if proto.Equal(before, app) {
			return nil, nil
		}
		w.put(applicationKey(uuid, name), app)
		return w, nil
	})
	if err != nil {
		return "", err
	}
	return previous, nil
}

// switchCharm checks the new charm against the application's and its relations, and adds
// the peer relations of peer endpoints the new charm adds (as deploy does, L-D2).
func (s *State) switchCharm(ctx context.Context, r *reader, w *writes, uuid string, app *storepb.Application,
	newDoc *storepb.Charm, newMeta *charm.Meta, what string) error {
	// A charm document never changes once stored: read without a guard.
	oldDoc, err := s.Charm(ctx, uuid, app.CharmUrl)
	if err != nil {
		return err
	}
	if oldDoc.Name != newDoc.Name {
		return apierr.Errorf(apierr.NotValid, "%s: charm name %q differs from the application's charm %q", what, newDoc.Name, oldDoc.Name)
	}
	if newMeta.Subordinate != app.Subordinate {
		return apierr.Errorf(apierr.NotValid, "%s: cannot change an application's subordinacy", what)
	}
	rels, err := s.Relations(ctx, uuid)
	if err != nil {
		return err
	}
	peerRelations := map[string]bool{}
	for _, rel := range rels {
		own, _ := relationSides(rel, app.Name)
		if own == nil {
			continue
		}
		if !endpointImplemented(newMeta, own) {
			return apierr.Errorf(apierr.NotValid, "%s: would break relation %q", what, rel.Key)
		}
		if len(rel.Endpoints) == 1 {
			peerRelations[own.Name] = true
		}
	}
	for _, ep := range newMeta.PeerEndpoints() {
		if peerRelations[ep.Name] {
			continue
		}
		if _, err := r.addRelation(ctx, w, uuid, []*storepb.Endpoint{endpointDoc(app.Name, ep)}); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		app.RelationCount++
	}
	return nil
}

// endpointImplemented: the new charm still has the relation's endpoint under the same name,
// role and interface, and a globally scoped relation does not meet a container-scoped
// endpoint (its units would stop seeing each other). The implicit juju-info is always there.
func endpointImplemented(meta *charm.Meta, ep *storepb.Endpoint) bool {
	for _, e := range meta.Endpoints() {
		if e.Name != ep.Name || string(e.Role) != ep.Role || e.Interface != ep.Interface {
			continue
		}
		return ep.Scope == string(charm.ScopeContainer) || e.Scope != charm.ScopeContainer
	}
	return false
}

// keptConfig is the user's config carried to a new charm: values of options the charm still
// has, and only those the option's (possibly new) type still accepts.
func keptConfig(cfg *charm.Config, values map[string]string) map[string]string {
	out := map[string]string{}
	for name, v := range values {
		opt, err := cfg.Option(name)
		if err != nil || !fitsOption(opt, v) {
			continue
		}
		out[name] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// fitsOption: the stored JSON value v is of the option's type.
func fitsOption(opt charm.Option, v string) bool {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return false
	}
	switch opt.Type {
	case charm.TypeString, "":
		_, ok := x.(string)
		return ok
	case charm.TypeInt:
		f, ok := x.(float64)
		return ok && f == math.Trunc(f)
	case charm.TypeFloat:
		_, ok := x.(float64)
		return ok
	case charm.TypeBoolean:
		_, ok := x.(bool)
		return ok
	}
	return false
}

// SetUnitCharm records that a unit's agent runs charmURL now, which must be its application's
// charm: an agent that lags behind a second refresh is refused and upgrades again.
func (s *State) SetUnitCharm(ctx context.Context, uuid, unit, charmURL string) error {
	return s.run(ctx, fmt.Sprintf("setting charm of unit %q", unit), func(ctx context.Context, r *reader) (*writes, error) {
		u, err := r.unit(ctx, uuid, unit)
		if err != nil {
			return nil, err
		}
		if u.CharmUrl == charmURL {
			return nil, nil
		}
		if u.Life == string(life.Dead) {
			return nil, apierr.Errorf(apierr.NotAlive, "unit %q is dead", unit)
		}
		app, err := r.application(ctx, uuid, u.Application)
		if err != nil {
			return nil, err
		}
		if app.CharmUrl != charmURL {
			return nil, apierr.Errorf(apierr.NotValid, "cannot set charm of unit %q to %q: application %q runs %q",
				unit, charmURL, app.Name, app.CharmUrl)
		}
		u.CharmUrl = charmURL
		w := &writes{}
		w.put(unitKey(uuid, unit), u)
		return w, nil
	})
}
