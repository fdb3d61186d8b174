package state

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Event says that a document changed; readers fetch what they need.
type Event struct {
	Kind     string
	ID       string
	Removed  bool
	Revision int64
}

// Watch streams changes under the given key prefixes of one model until ctx ends or the watch
// fails; the channel is then closed. Agents react to these, never poll (design: State).
func (s *State) Watch(ctx context.Context, uuid string, prefixes []string, fromRev int64) <-chan Event {
	out := make(chan Event, 64)
	ctx, cancel := context.WithCancel(ctx)
	merged := make(chan clientv3.WatchResponse)
	for _, p := range prefixes {
		opts := []clientv3.OpOption{clientv3.WithPrefix()}
		if fromRev > 0 {
			opts = append(opts, clientv3.WithRev(fromRev))
		}
		wc := s.kv.Watch(clientv3.WithRequireLeader(ctx), p, opts...)
		go func() {
			defer cancel()
			for resp := range wc {
				select {
				case merged <- resp:
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
			case resp := <-merged:
				if resp.Err() != nil {
					cancel()
					return
				}
				for _, ev := range resp.Events {
					kind, id := classify(string(ev.Kv.Key), prefix)
					if kind == "" {
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
