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

// Watch streams changes to the given keys and key prefixes of one model until ctx ends or the
// watch fails; the channel is then closed. Agents react to these, never poll (design: State).
func (s *State) Watch(ctx context.Context, uuid string, prefixes []string, fromRev int64) <-chan Event {
	keys := make([]WatchKey, 0, len(prefixes))
	for _, p := range prefixes {
		keys = append(keys, WatchKey{Key: p})
	}
	return s.WatchKeys(ctx, uuid, keys, fromRev)
}

// WatchKey is one key (or prefix, ending in "/") to watch.
type WatchKey struct {
	Key string
	// LifeOnly reports only creations, removals and life changes: a unit agent watching its
	// application or the model's relations must not wake for every unit count or scope change,
	// or a 1,000-unit removal costs a million re-reads.
	LifeOnly bool
}

type taggedResponse struct {
	resp     clientv3.WatchResponse
	lifeOnly bool
}

// WatchKeys is Watch with per-key options.
func (s *State) WatchKeys(ctx context.Context, uuid string, keys []WatchKey, fromRev int64) <-chan Event {
	out := make(chan Event, 64)
	ctx, cancel := context.WithCancel(ctx)
	merged := make(chan taggedResponse)
	for _, k := range keys {
		// A prefix ends in "/" (every document of a kind); anything else is one document's key,
		// watched exactly so that "units/mysql/1" does not also see "units/mysql/10".
		var opts []clientv3.OpOption
		if strings.HasSuffix(k.Key, "/") {
			opts = append(opts, clientv3.WithPrefix())
		}
		if fromRev > 0 {
			opts = append(opts, clientv3.WithRev(fromRev))
		}
		if k.LifeOnly {
			opts = append(opts, clientv3.WithPrevKV())
		}
		wc := s.kv.Watch(clientv3.WithRequireLeader(ctx), k.Key, opts...)
		go func() {
			defer cancel()
			for resp := range wc {
				select {
				case merged <- taggedResponse{resp, k.LifeOnly}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(out)
		prefix := ModelPrefix(uuid)
		for {
			select {
			case <-ctx.Done():
				return
			case tr := <-merged:
				if tr.resp.Err() != nil {
					cancel()
					return
				}
				for _, ev := range tr.resp.Events {
					kind, id := classify(string(ev.Kv.Key), prefix)
					if kind == "" {
						continue
					}
					if tr.lifeOnly && ev.Type == clientv3.EventTypePut && ev.PrevKv != nil &&
						lifeOf(kind, ev.PrevKv.Value) == lifeOf(kind, ev.Kv.Value) {
						continue
					}
					select {
					case out <- Event{Kind: kind, ID: id, Removed: ev.Type == clientv3.EventTypeDelete, Revision: ev.Kv.ModRevision}:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	return out
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
