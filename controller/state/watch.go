package state

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/storepb"
)

// Event says that a document changed; readers fetch what they need.
type Event struct {
	Kind     string
	ID       string
	Removed  bool
	Revision int64
}

// WatchKey is one key (or prefix, ending in "/") a Hub subscriber watches.
type WatchKey struct {
	Key string
	// LifeOnly reports only creations, removals and life changes: a unit agent watching its
	// application or the model's relations must not wake for every status or leader change,
	// or a 1,000-unit removal costs a million re-reads.
	LifeOnly bool
	// IgnoreOwnWrites does not report changes that a unit agent makes to its own documents
	// alone: a unit's agent and workload status, its address and the relation scopes it is in,
	// an application's status. An agent does not wake for its own writes, which would cost it
	// a re-read of its world after each (issue 16). Others change a unit's scopes only along
	// with a change the agent hears of: a forced removal makes the unit dying, a forced
	// relation's units leave once the relation is dying.
	IgnoreOwnWrites bool
}

// filter is how much of a key's changes a subscriber hears of, from every change to life
// changes only.
type filter uint8

const (
	filterNone filter = iota
	filterOwnWrites
	filterLife
)

func (k WatchKey) filter() filter {
	switch {
	case k.LifeOnly:
		return filterLife
	case k.IgnoreOwnWrites:
		return filterOwnWrites
	}
	return filterNone
}

// sameness compares an event's document before and after, decoding each at most once for
// all of the event's subscribers.
type sameness struct {
	lifeDone, lifeSame bool
	ownDone, ownSame   bool
}

// of reports whether the change is nothing the filter lets through.
func (s *sameness) of(kind string, before, after []byte, f filter) bool {
	switch f {
	case filterLife:
		if !s.lifeDone {
			s.lifeSame, s.lifeDone = lifeOf(kind, before) == lifeOf(kind, after), true
		}
		return s.lifeSame
	case filterOwnWrites:
		if !s.ownDone {
			s.ownSame, s.ownDone = sameSansOwnWrites(kind, before, after), true
		}
		return s.ownSame
	}
	return false
}

// sameSansOwnWrites reports whether two versions of a unit or application document differ in
// what the unit's agent writes only (statuses, address, scopes). Other kinds always differ.
func sameSansOwnWrites(kind string, before, after []byte) bool {
	var a, b proto.Message
	switch kind {
	case KindUnit:
		ua, ub := &storepb.Unit{}, &storepb.Unit{}
		if proto.Unmarshal(before, ua) != nil || proto.Unmarshal(after, ub) != nil {
			return false
		}
		for _, u := range []*storepb.Unit{ua, ub} {
			u.AgentStatus, u.WorkloadStatus, u.PublicAddress, u.Scopes = nil, nil, "", nil
		}
		a, b = ua, ub
	case KindApplication:
		aa, ab := &storepb.Application{}, &storepb.Application{}
		if proto.Unmarshal(before, aa) != nil || proto.Unmarshal(after, ab) != nil {
			return false
		}
		aa.Status, ab.Status = nil, nil
		a, b = aa, ab
	default:
		return false
	}
	return proto.Equal(a, b)
}

// lifeOf decodes the life of a document of the given kind ("" for kinds without one).
func lifeOf(kind string, value []byte) string {
	var doc interface {
		proto.Message
		GetLife() string
	}
	switch kind {
	case KindMachine:
		doc = &storepb.Machine{}
	case KindApplication:
		doc = &storepb.Application{}
	case KindUnit:
		doc = &storepb.Unit{}
	case KindRelation:
		doc = &storepb.Relation{}
	case KindMachineUnits:
		return string(value) // the index value is the unit's life
	default:
		return ""
	}
	if proto.Unmarshal(value, doc) != nil {
		return ""
	}
	return doc.GetLife()
}

// classify maps a key back to its kind and id.
func classify(key, prefix string) (string, string) {
	if !strings.HasPrefix(key, prefix) {
		return "", ""
	}
	rest := key[len(prefix):]
	kind, id, _ := strings.Cut(rest, "/")
	switch kind {
	case "model":
		return KindModel, ""
	case "machines":
		return KindMachine, id
	case "applications":
		return KindApplication, id
	case "units":
		return KindUnit, id
	case "relations":
		return KindRelation, id
	case "machineunits":
		_, unit, _ := strings.Cut(id, "/")
		return KindMachineUnits, unit
	case "charms":
		return KindCharm, id
	case "scopes", "settings":
		// scopes/<relation>/<unit>: the event names the relation, which is what is watched.
		rel, _, _ := strings.Cut(id, "/")
		if kind == "scopes" {
			return KindScope, rel
		}
		return KindSettings, rel
	case "leases":
		return KindLeadership, id
	case "leadersettings":
		return KindLeaderSettings, id
	case "tasks", "taskqueue":
		return classifyTaskKey(kind, id)
	}
	return "", ""
}

// ModelUUIDs lists every model's UUID (for workers that serve all models).
func (s *State) ModelUUIDs(ctx context.Context) ([]string, error) {
	resp, err := s.kv.Get(ctx, modelNamePrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Value))
	}
	return out, nil
}

// WatchModels streams model creations and changes across the controller.
func (s *State) WatchModels(ctx context.Context) clientv3.WatchChan {
	return s.kv.Watch(ctx, modelNamePrefix, clientv3.WithPrefix())
}

// Revision is the store's current revision: a watch from Revision()+1 misses nothing that
// changes after this call.
func (s *State) Revision(ctx context.Context) (int64, error) {
	resp, err := s.kv.Get(ctx, controllerKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// Deleted names a deleted document: its model, kind and id.
type Deleted struct {
	Model, Kind, ID string
}

// WatchRemovals streams every deletion of a model document until ctx ends, so caches keyed by
// entity (the API server's credential cache) forget removed entities at once.
func (s *State) WatchRemovals(ctx context.Context) <-chan Deleted {
	out := make(chan Deleted, 64)
	wc := s.kv.Watch(ctx, modelsPrefix, clientv3.WithPrefix(), clientv3.WithFilterPut())
	go func() {
		defer close(out)
		for resp := range wc {
			for _, ev := range resp.Events {
				key := string(ev.Kv.Key)
				uuid, _, _ := strings.Cut(strings.TrimPrefix(key, modelsPrefix), "/")
				kind, id := classify(key, ModelPrefix(uuid))
				if kind == "" {
					continue
				}
				select {
				case out <- Deleted{Model: uuid, Kind: kind, ID: id}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}
