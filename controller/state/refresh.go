package state

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
)

// SetApplicationCharm switches an alive application to an uploaded charm (juju refresh), in
// one transaction (L-G3) that writes the application document and the peer relations of
// peer endpoints the new charm adds (as deploy does, L-D2). It refuses, writing nothing:
// a dying or dead application; a charm of another name (Juju needs --switch for that, which
// there is no charm store to need); a change of subordinacy; a charm without an endpoint an
// existing relation of the application uses, with the same interface and role. Config values
// of options the new charm still has, with a value of the option's new type, are kept; the
// others are dropped. Units keep their own charm until their agents upgrade (SetUnitCharm).
// It returns the application's previous charm URL; switching to the charm it already has
// changes nothing.
func (s *State) SetApplicationCharm(ctx context.Context, uuid, name, charmURL string) (string, error) {
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
		if app.CharmUrl == charmURL {
			return nil, nil
		}
		what := fmt.Sprintf("cannot upgrade application %q to charm %q", name, charmURL)
		if app.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: application is not alive", what)
		}
		// A charm document never changes once stored: read without a guard.
		oldDoc, err := s.Charm(ctx, uuid, app.CharmUrl)
		if err != nil {
			return nil, err
		}
		if oldDoc.Name != newDoc.Name {
			return nil, apierr.Errorf(apierr.NotValid, "%s: charm name %q differs from the application's charm %q", what, newDoc.Name, oldDoc.Name)
		}
		if newMeta.Subordinate != app.Subordinate {
			return nil, apierr.Errorf(apierr.NotValid, "%s: cannot change an application's subordinacy", what)
		}
		rels, err := s.Relations(ctx, uuid)
		if err != nil {
			return nil, err
		}
		peerRelations := map[string]bool{}
		for _, rel := range rels {
			own, _ := relationSides(rel, name)
			if own == nil {
				continue
			}
			if !endpointImplemented(newMeta, own) {
				return nil, apierr.Errorf(apierr.NotValid, "%s: would break relation %q", what, rel.Key)
			}
			if len(rel.Endpoints) == 1 {
				peerRelations[own.Name] = true
			}
		}
		w := &writes{}
		// L-D2, as at deploy: a peer endpoint the new charm adds gets its peer relation.
		for _, ep := range newMeta.PeerEndpoints() {
			if peerRelations[ep.Name] {
				continue
			}
			if _, err := r.addRelation(ctx, w, uuid, []*storepb.Endpoint{endpointDoc(name, ep)}); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			app.RelationCount++
		}
		app.CharmUrl = charmURL
		app.Config = keptConfig(newConfig, app.Config)
		w.put(applicationKey(uuid, name), app)
		return w, nil
	})
	if err != nil {
		return "", err
	}
	return previous, nil
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
