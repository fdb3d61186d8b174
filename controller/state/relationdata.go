package state

import (
	"context"
	"fmt"
	"maps"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/names"
)

// mergeSettings applies changes to current (an empty value deletes its key) and reports
// whether anything changed. current is not modified.
func mergeSettings(current, changes map[string]string) (map[string]string, bool) {
	merged := maps.Clone(current)
	if merged == nil {
		merged = map[string]string{}
	}
	changed := false
	for k, v := range changes {
		old, ok := merged[k]
		switch {
		case v == "" && ok:
			delete(merged, k)
			changed = true
		case v != "" && (!ok || old != v):
			merged[k] = v
			changed = true
		}
	}
	return merged, changed
}

// mergeInto reads the settings document at key and returns the write of values merged into it
// (an empty value deletes its key), or nil when that changes nothing: every write wakes
// whoever watches the settings.
func (r *reader) mergeInto(ctx context.Context, key string, values map[string]string) (*writes, error) {
	st := &storepb.Settings{}
	if _, err := r.get(ctx, key, st); err != nil {
		return nil, err
	}
	merged, changed := mergeSettings(st.Values, values)
	if !changed {
		return nil, nil
	}
	w := &writes{}
	w.put(key, &storepb.Settings{Values: merged})
	return w, nil
}

// SetRelationSettings merges values into a unit's settings in a relation (relation-set); an
// empty value deletes its key. Only a unit in the relation's scope may (L-R2, L-R3), asserted in
// the same transaction. Nothing is written when nothing changes: every write wakes the
// counterparts' relation-changed hooks.
func (s *State) SetRelationSettings(ctx context.Context, uuid string, relID int64, unit string, values map[string]string) (bool, error) {
	what := fmt.Sprintf("unit %q cannot set its settings in relation %d", unit, relID)
	var changed bool
	err := s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		changed = false
		if err := r.prefetch(ctx, scopeKey(uuid, relID, unit), settingsKey(uuid, relID, unit)); err != nil {
			return nil, err
		}
		inScope, err := r.get(ctx, scopeKey(uuid, relID, unit), nil)
		if err != nil {
			return nil, err
		}
		if !inScope {
			if _, err := s.Relation(ctx, uuid, relID); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			return nil, apierr.Errorf(apierr.NotValid, "%s: unit is not in the relation's scope", what)
		}
		w, err := r.mergeInto(ctx, settingsKey(uuid, relID, unit), values)
		changed = w != nil
		return w, err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// UnitRelationSettings returns one unit's settings in a relation (relation-get) and the store
// revision of their last change. They stay readable after the unit left the scope, until the
// relation's settings are cleaned up (L-R3, L-R7).
func (s *State) UnitRelationSettings(ctx context.Context, uuid string, relID int64, unit string) (map[string]string, int64, error) {
	values, rev, found, err := s.readSettings(ctx, settingsKey(uuid, relID, unit), fmt.Sprintf("%q in relation %d", unit, relID))
	if err == nil && !found {
		return nil, 0, apierr.Errorf(apierr.NotFound, "unit %q has no settings in relation %d", unit, relID)
	}
	return values, rev, err
}

// readSettings reads one settings document (empty, revision 0, not found when there is none).
func (s *State) readSettings(ctx context.Context, key, what string) (map[string]string, int64, bool, error) {
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil, 0, false, fmt.Errorf("reading settings of %s: %w", what, err)
	}
	if len(resp.Kvs) == 0 {
		return map[string]string{}, 0, false, nil
	}
	st := &storepb.Settings{}
	if err := unmarshal(resp.Kvs[0], st); err != nil {
		return nil, 0, false, err
	}
	if st.Values == nil {
		st.Values = map[string]string{}
	}
	return st.Values, resp.Kvs[0].ModRevision, true, nil
}

// Member is a counterpart in a relation's scope that a unit observes, with the store revision
// of its settings: a new revision means relation-changed (L-R2).
type Member struct {
	Unit             string
	SettingsRevision int64
}

// observes reports whether u, on its endpoint own, observes unit other in a relation whose
// counterpart endpoint is on otherApp (L-R2): providers observe requirers, requirers providers,
// peers each other, never itself; in a container-scoped relation only the units beside it (its
// own subordinate of that application, or its own principal).
func observes(u *storepb.Unit, own *storepb.Endpoint, otherApp, other string) bool {
	if other == u.Name {
		return false
	}
	if app, err := names.UnitApplication(other); err != nil || app != otherApp {
		return false
	}
	if own.Scope == string(charm.ScopeContainer) {
		return other == u.Principal || slices.Contains(u.Subordinates, other)
	}
	return true
}

// addMembers fills the Members of the relations u is in scope of. The scope records and
// settings of each are read with range reads (keys only: the revisions are what matters), all
// in one read-only transaction at rev, so they agree with each other and with u: never one read
// per member. A container-scoped relation reads only the keys of the units beside u.
func (s *State) addMembers(ctx context.Context, uuid string, rev int64, u *storepb.Unit, rels []UnitRelation, membersOf func(string) bool) error {
	var ops []clientv3.Op
	type span struct{ rel, scopes, settings int }
	var spans []span
	for i, ur := range rels {
		if !ur.InScope || (membersOf != nil && !membersOf(ur.Own.Name)) {
			continue
		}
		sp := span{rel: i, scopes: len(ops)}
		id := ur.Relation.Id
		if ur.Own.Scope == string(charm.ScopeContainer) {
			var beside []string
			if u.Principal != "" {
				beside = append(beside, u.Principal)
			}
			beside = append(beside, u.Subordinates...)
			for _, b := range beside {
				if observes(u, ur.Own, ur.Other.Application, b) {
					ops = append(ops, clientv3.OpGet(scopeKey(uuid, id, b), clientv3.WithKeysOnly(), clientv3.WithRev(rev)))
				}
			}
			sp.settings = len(ops)
			for _, b := range beside {
				if observes(u, ur.Own, ur.Other.Application, b) {
					ops = append(ops, clientv3.OpGet(settingsKey(uuid, id, b), clientv3.WithKeysOnly(), clientv3.WithRev(rev)))
				}
			}
			ops = append(ops, clientv3.OpGet(settingsKey(uuid, id, ur.Other.Application), clientv3.WithKeysOnly(), clientv3.WithRev(rev)))
		} else {
			ops = append(ops, clientv3.OpGet(scopePrefix(uuid, id), clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(rev)))
			sp.settings = len(ops)
			ops = append(ops, clientv3.OpGet(settingsPrefix(uuid, id), clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(rev)))
		}
		spans = append(spans, sp)
	}
	if len(ops) == 0 {
		return nil
	}
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("reading scopes of unit %q: %w", u.Name, err)
	}
	for n, sp := range spans {
		end := len(ops)
		if n+1 < len(spans) {
			end = spans[n+1].scopes
		}
		ur := &rels[sp.rel]
		id := ur.Relation.Id
		revs := map[string]int64{}
		for _, res := range resp.Responses[sp.settings:end] {
			for _, kv := range res.GetResponseRange().GetKvs() {
				revs[string(kv.Key)[len(settingsPrefix(uuid, id)):]] = kv.ModRevision
			}
		}
		for _, res := range resp.Responses[sp.scopes:sp.settings] {
			for _, kv := range res.GetResponseRange().GetKvs() {
				other := string(kv.Key)[len(scopePrefix(uuid, id)):]
				if observes(u, ur.Own, ur.Other.Application, other) {
					ur.Members = append(ur.Members, Member{Unit: other, SettingsRevision: revs[other]})
				}
			}
		}
		// The other application's own settings sit beside its units' (no "/" in the name).
		ur.RemoteAppSettingsRevision = revs[ur.Other.Application]
		slices.SortFunc(ur.Members, func(a, b Member) int { return names.NaturalCompare(a.Unit, b.Unit) })
	}
	return nil
}
