package state

import (
	"context"
	"fmt"
	"slices"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
)

// Application relation data (relation-set --app): each side of a relation has settings of its
// own application, kept at settings/<relation>/<application> beside its units' settings
// (settings/<relation>/<app>/<n>). Being under the relation's settings prefix, they are watched
// with the units' settings (a change runs relation-changed on the other side) and cleaned up
// with them when the relation goes (L-R7).

// SetApplicationRelationSettings merges values into the settings of unit's application in a
// relation; an empty value deletes its key. Only the application's leader may, asserted in the
// same transaction, and only while the relation is alive. Writing nothing new writes nothing.
func (s *State) SetApplicationRelationSettings(ctx context.Context, uuid string, relID int64, unit string, values map[string]string) (bool, error) {
	what := fmt.Sprintf("unit %q cannot set its application's settings in relation %d", unit, relID)
	var changed bool
	err := s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		changed = false
		app, err := r.requireLeader(ctx, uuid, unit, what)
		if err != nil {
			return nil, err
		}
		if err := r.prefetch(ctx, relationKey(uuid, relID), settingsKey(uuid, relID, app)); err != nil {
			return nil, err
		}
		rel := &storepb.Relation{}
		ok, err := r.get(ctx, relationKey(uuid, relID), rel)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "%s: relation not found", what)
		}
		if !slices.ContainsFunc(rel.Endpoints, func(ep *storepb.Endpoint) bool { return ep.Application == app }) {
			return nil, apierr.Errorf(apierr.PermissionDenied, "%s: application %q is not in the relation", what, app)
		}
		if rel.Life != string(life.Alive) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: relation is %s", what, rel.Life)
		}
		w, err := r.mergeInto(ctx, settingsKey(uuid, relID, app), values)
		changed = w != nil
		return w, err
	})
	return changed, err
}

// ApplicationRelationSettings returns an application's settings in a relation (empty when it
// never wrote any) and the store revision of their last change (0 then).
func (s *State) ApplicationRelationSettings(ctx context.Context, uuid string, relID int64, app string) (map[string]string, int64, error) {
	values, rev, _, err := s.readSettings(ctx, settingsKey(uuid, relID, app), fmt.Sprintf("application %q in relation %d", app, relID))
	return values, rev, err
}

// charmStateKey holds the state a unit's charm keeps in the controller (state-get/-set); it
// goes with the unit.
func charmStateKey(uuid, unit string) string { return ModelPrefix(uuid) + "charmstate/" + unit }

// maxCharmState bounds one unit's charm state: it is one etcd value.
const maxCharmState = 512 << 10

// CharmState returns the state unit's charm keeps in the controller.
func (s *State) CharmState(ctx context.Context, uuid, unit string) (map[string]string, error) {
	resp, err := s.kv.Get(ctx, charmStateKey(uuid, unit))
	if err != nil {
		return nil, fmt.Errorf("reading charm state of %q: %w", unit, err)
	}
	st := &storepb.CharmState{}
	if len(resp.Kvs) > 0 {
		if err := unmarshal(resp.Kvs[0], st); err != nil {
			return nil, err
		}
	}
	if st.Values == nil {
		st.Values = map[string]string{}
	}
	return st.Values, nil
}

// SetCharmState merges values into unit's charm state (an empty value deletes its key), while
// the unit exists and is not dead.
func (s *State) SetCharmState(ctx context.Context, uuid, unit string, values map[string]string) error {
	what := fmt.Sprintf("cannot set charm state of %q", unit)
	return s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if err := r.prefetch(ctx, unitKey(uuid, unit), charmStateKey(uuid, unit)); err != nil {
			return nil, err
		}
		u, err := r.unit(ctx, uuid, unit)
		if err != nil {
			return nil, err
		}
		if u.Life == string(life.Dead) {
			return nil, apierr.Errorf(apierr.NotAlive, "%s: unit is dead", what)
		}
		st := &storepb.CharmState{}
		if _, err := r.get(ctx, charmStateKey(uuid, unit), st); err != nil {
			return nil, err
		}
		merged, changed := mergeSettings(st.Values, values)
		if !changed {
			return nil, nil
		}
		size := 0
		for k, v := range merged {
			size += len(k) + len(v)
		}
		if size > maxCharmState {
			return nil, apierr.Errorf(apierr.NotValid, "%s: %d bytes is more than the %d a unit may keep", what, size, maxCharmState)
		}
		w := &writes{}
		w.put(charmStateKey(uuid, unit), &storepb.CharmState{Values: merged})
		return w, nil
	})
}

// deleteCharmState is the write that removes a unit's charm state with the unit.
func deleteCharmState(w *writes, uuid, unit string) { w.del(charmStateKey(uuid, unit)) }
