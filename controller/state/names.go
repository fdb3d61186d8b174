package state

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/core/names"
)

// NameKind is what ListNames lists.
type NameKind int

// Kinds of names.
const (
	NamesApplications NameKind = iota + 1
	NamesUnits
	NamesMachines
	NamesModels
	// NamesEndpoints lists "app:endpoint"; the prefix holds the "app:" part.
	NamesEndpoints
	// NamesConfigKeys lists "app:option" for the application's configuration options (its
	// charm's, and trust); the prefix holds the "app:" part.
	NamesConfigKeys
)

// MaxNames bounds one ListNames answer: shell completion asks on every Tab, so its cost follows
// the limit, not the size of the model.
const MaxNames = 1000

// ListNames lists the names of one kind that start with prefix, sorted naturally: at most limit
// of them (0 or more than MaxNames means MaxNames) and whether more matched. Applications,
// units, machines and models are the keys of one keys-only, limited range read, so no document
// is decoded; endpoints are read from the application's charm metadata. model is a name or
// UUID, unused for NamesModels. When more than limit match, the names returned are the first
// in key order, then sorted naturally.
func (s *State) ListNames(ctx context.Context, model string, kind NameKind, prefix string, limit int) ([]string, bool, error) {
	if limit <= 0 || limit > MaxNames {
		limit = MaxNames
	}
	if kind == NamesModels {
		return s.listKeys(ctx, "", modelNamePrefix, prefix, limit)
	}
	if model == "" {
		return nil, false, apierr.Errorf(apierr.NotValid, "no model specified")
	}
	uuid, err := s.modelUUID(ctx, model)
	if err != nil {
		return nil, false, err
	}
	switch kind {
	case NamesApplications:
		return s.listKeys(ctx, uuid, ModelPrefix(uuid)+"applications/", prefix, limit)
	case NamesUnits:
		return s.listKeys(ctx, uuid, ModelPrefix(uuid)+"units/", prefix, limit)
	case NamesMachines:
		return s.listKeys(ctx, uuid, ModelPrefix(uuid)+"machines/", prefix, limit)
	case NamesEndpoints:
		return s.listEndpoints(ctx, uuid, prefix, limit)
	case NamesConfigKeys:
		return s.listConfigKeys(ctx, uuid, prefix, limit)
	}
	return nil, false, apierr.Errorf(apierr.NotValid, "name kind %d not valid", kind)
}

// modelUUID resolves a model name to its UUID with one read of the name index; anything else is
// taken as a UUID, checked by the caller's read.
func (s *State) modelUUID(ctx context.Context, ref string) (string, error) {
	resp, err := s.kv.Get(ctx, modelNamePrefix+ref)
	if err != nil {
		return "", fmt.Errorf("reading model %q: %w", ref, err)
	}
	if len(resp.Kvs) > 0 {
		return string(resp.Kvs[0].Value), nil
	}
	return ref, nil
}

// listKeys lists the keys under dir that start with dir+prefix, without dir, in one
// transaction that also checks the model exists (uuid empty: no model to check).
func (s *State) listKeys(ctx context.Context, uuid, dir, prefix string, limit int) ([]string, bool, error) {
	ops := []clientv3.Op{clientv3.OpGet(dir+prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(int64(limit)))}
	if uuid != "" {
		ops = append(ops, clientv3.OpGet(modelKey(uuid), clientv3.WithCountOnly()))
	}
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, false, fmt.Errorf("listing %s: %w", dir, err)
	}
	if uuid != "" && resp.Responses[1].GetResponseRange().GetCount() == 0 {
		return nil, false, apierr.Errorf(apierr.NotFound, "model %q not found", uuid)
	}
	rng := resp.Responses[0].GetResponseRange()
	out := make([]string, 0, len(rng.Kvs))
	for _, kv := range rng.Kvs {
		out = append(out, string(kv.Key)[len(dir):])
	}
	slices.SortFunc(out, names.NaturalCompare)
	return out, rng.More, nil
}

// listEndpoints lists "app:endpoint" for the endpoints of app's charm, the implicit juju-info
// included, that start with prefix ("app:" or "app:partial").
func (s *State) listEndpoints(ctx context.Context, uuid, prefix string, limit int) ([]string, bool, error) {
	app, err := appOfPrefix(prefix, "endpoint")
	if err != nil {
		return nil, false, err
	}
	eps, err := s.applicationEndpoints(ctx, uuid, app)
	if err != nil {
		return nil, false, err
	}
	keys := make([]string, len(eps))
	for i, ep := range eps {
		keys[i] = ep.Name
	}
	return qualified(app, keys, prefix, limit)
}

// listConfigKeys lists "app:option" for an application's charm options and trust, from the
// charm's configuration (cached per charm).
func (s *State) listConfigKeys(ctx context.Context, uuid, prefix string, limit int) ([]string, bool, error) {
	app, err := appOfPrefix(prefix, "configuration option")
	if err != nil {
		return nil, false, err
	}
	a, err := s.Application(ctx, uuid, app)
	if err != nil {
		return nil, false, err
	}
	cfg, err := s.applicationCharmConfig(ctx, uuid, a)
	if err != nil {
		return nil, false, err
	}
	return qualified(app, append(cfg.Names(), TrustOption.Name), prefix, limit)
}

// appOfPrefix is the application of an "app:..." completion prefix.
func appOfPrefix(prefix, what string) (string, error) {
	app, _, ok := strings.Cut(prefix, ":")
	if !ok || !names.IsValidApplication(app) {
		return "", apierr.Errorf(apierr.NotValid, "%s prefix %q does not start with an application name and a colon", what, prefix)
	}
	return app, nil
}

// qualified returns "app:key" for the keys that match prefix, once each, sorted naturally, at
// most limit of them.
func qualified(app string, keys []string, prefix string, limit int) ([]string, bool, error) {
	var out []string
	for _, k := range keys {
		name := app + ":" + k
		if strings.HasPrefix(name, prefix) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.SortFunc(out, names.NaturalCompare)
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}
