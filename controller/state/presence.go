package state

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Agent presence shared by the controller's members. Each API server publishes, for every agent
// with a watch open on it (or closed within the grace), one record
// /juju/presence/<model>/<kind>/<id>/<member> on a lease it or its daemon keeps alive, so that
// a killed member's records vanish by themselves when the lease runs out. The records live
// outside the model's prefix: a model's snapshot (status, watches of the model) never reads
// them, and the constant churn of agents connecting wakes no watch of the model's documents.
const presencePrefix = "/juju/presence/"

// maxPresenceOps bounds one transaction of presence writes, well under etcd's 128 operations.
const maxPresenceOps = 100

// PresencePrefix is the prefix of every presence record of a model.
func PresencePrefix(uuid string) string { return presencePrefix + uuid + "/" }

func presenceKey(uuid, kind, id, member string) string {
	return PresencePrefix(uuid) + kind + "/" + id + "/" + member
}

// PresenceRecord says that an agent (kind "machine" or "unit", the machine id or unit name)
// has a watch open on a member, or had one within the grace.
type PresenceRecord struct {
	Kind, ID, Member string
}

// parsePresenceKey splits a record's key below prefix: the kind is the first segment, the
// member the last (member ids have no "/"), the id what lies between (unit names have one).
func parsePresenceKey(prefix, key string) (PresenceRecord, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return PresenceRecord{}, false
	}
	kind, rest, ok := strings.Cut(rest, "/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || kind == "" || i <= 0 || i == len(rest)-1 {
		return PresenceRecord{}, false
	}
	return PresenceRecord{Kind: kind, ID: rest[:i], Member: rest[i+1:]}, true
}

// PresenceWrite publishes (Present) or withdraws a member's record of one agent.
type PresenceWrite struct {
	Model, Kind, ID string
	Present         bool
}

// WritePresence applies a member's writes, its records put on lease, in transactions of at most
// maxPresenceOps operations: thousands of agents reconnecting at once cost tens of
// transactions, not thousands. The records are the member's alone, so nothing is asserted.
// It returns how many writes (a prefix of writes) were applied, all of them when err is nil;
// each transaction has timeout as its deadline.
func (s *State) WritePresence(ctx context.Context, member string, lease clientv3.LeaseID, timeout time.Duration, writes []PresenceWrite) (int, error) {
	if member == "" || strings.Contains(member, "/") {
		return 0, fmt.Errorf("writing presence: invalid member id %q", member)
	}
	done := 0
	for done < len(writes) {
		batch := writes[done:min(done+maxPresenceOps, len(writes))]
		ops := make([]clientv3.Op, 0, len(batch))
		for _, w := range batch {
			key := presenceKey(w.Model, w.Kind, w.ID, member)
			if w.Present {
				ops = append(ops, clientv3.OpPut(key, "", clientv3.WithLease(lease)))
			} else {
				ops = append(ops, clientv3.OpDelete(key))
			}
		}
		tctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := s.kv.Txn(tctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			return done, fmt.Errorf("writing the presence of %d agents: %w", len(batch), err)
		}
		done += len(batch)
	}
	return done, nil
}

// Presence reads every presence record of a model in one range read, and the store's revision
// at that read (a WatchPresence from the revision + 1 misses nothing).
func (s *State) Presence(ctx context.Context, uuid string) ([]PresenceRecord, int64, error) {
	prefix := PresencePrefix(uuid)
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, 0, fmt.Errorf("reading the presence of model %s: %w", uuid, err)
	}
	out := make([]PresenceRecord, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if r, ok := parsePresenceKey(prefix, string(kv.Key)); ok {
			out = append(out, r)
		}
	}
	return out, resp.Header.Revision, nil
}

// PresenceEvent is a record created (Created) or removed (Removed), or put again (neither:
// its member re-published it on another lease), at Revision.
type PresenceEvent struct {
	PresenceRecord
	Created, Removed bool
	Revision         int64
}

// WatchPresence streams the changes of a model's presence records from revision fromRev, in
// batches, until ctx ends or the watch fails (compaction, lost leader): the channel then
// closes, and the caller reads Presence again before watching again.
func (s *State) WatchPresence(ctx context.Context, uuid string, fromRev int64) <-chan []PresenceEvent {
	out := make(chan []PresenceEvent)
	prefix := PresencePrefix(uuid)
	go func() {
		defer close(out)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // ends the etcd watch when the receiver stops early
		wc := s.kv.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(fromRev))
		for resp := range wc {
			if resp.Err() != nil || resp.Canceled {
				return
			}
			batch := make([]PresenceEvent, 0, len(resp.Events))
			for _, ev := range resp.Events {
				r, ok := parsePresenceKey(prefix, string(ev.Kv.Key))
				if !ok {
					continue
				}
				batch = append(batch, PresenceEvent{PresenceRecord: r, Created: ev.IsCreate(),
					Removed: ev.Type == clientv3.EventTypeDelete, Revision: ev.Kv.ModRevision})
			}
			if len(batch) == 0 {
				continue
			}
			select {
			case out <- batch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// GrantPresenceLease grants a lease of ttl for a member's presence records (an API server
// whose daemon gives it none).
func (s *State) GrantPresenceLease(ctx context.Context, ttl time.Duration) (clientv3.LeaseID, error) {
	secs := int64((ttl + time.Second - 1) / time.Second)
	resp, err := s.kv.Grant(ctx, max(secs, 1))
	if err != nil {
		return 0, fmt.Errorf("granting a presence lease: %w", err)
	}
	return resp.ID, nil
}

// KeepPresenceLeaseAlive keeps lease alive until ctx ends; the channel closes when ctx ends or
// the lease is lost (it ran out while the store was out of reach, or was revoked).
func (s *State) KeepPresenceLeaseAlive(ctx context.Context, lease clientv3.LeaseID) (<-chan struct{}, error) {
	ka, err := s.kv.KeepAlive(ctx, lease)
	if err != nil {
		return nil, fmt.Errorf("keeping the presence lease alive: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ka {
		}
	}()
	return done, nil
}
