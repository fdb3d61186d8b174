package state

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/storepb"
)

// cleanupBatch bounds how many settings one cleanup transaction deletes (L-R7, L-G4).
const cleanupBatch = 64

// Cleanup is one pending cleanup document.
type Cleanup struct {
	ID  int64
	Doc *storepb.Cleanup
}

// CleanupsPrefix is the key prefix of a model's cleanup documents, for the cleanup worker's watch.
func CleanupsPrefix(uuid string) string { return ModelPrefix(uuid) + "cleanups/" }

// Cleanups lists a model's pending cleanups.
func (s *State) Cleanups(ctx context.Context, uuid string) ([]Cleanup, error) {
	prefix := CleanupsPrefix(uuid)
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing cleanups: %w", err)
	}
	out := make([]Cleanup, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		doc := &storepb.Cleanup{}
		if err := unmarshal(kv, doc); err != nil {
			return nil, err
		}
		id, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), prefix), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cleanup key %s: %w", kv.Key, err)
		}
		out = append(out, Cleanup{ID: id, Doc: doc})
	}
	return out, nil
}

// RunCleanup does one cleanup: it deletes a removed relation's settings in bounded batches,
// then the cleanup document itself (L-R7). The settings are unreferenced once the relation is
// gone (its id is never reused), so the batches need no guards.
func (s *State) RunCleanup(ctx context.Context, uuid string, c Cleanup) error {
	if c.Doc.Kind == CleanupReceiverTasks {
		if err := s.cancelLeftoverTasks(ctx, uuid, c.Doc.Receiver); err != nil {
			return err
		}
	}
	if c.Doc.Kind == CleanupRelationSettings {
		prefix := settingsPrefix(uuid, c.Doc.RelationId)
		// Each batch reads on from the last key deleted, not from the prefix: the store keeps
		// what a batch deleted as tombstones until it compacts, and a read from the prefix
		// would step over all of them, batch after batch (a relation of 100,000 units has
		// 1,563 batches of settings).
		from, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
		for {
			resp, err := s.kv.Get(ctx, from, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(cleanupBatch))
			if err != nil {
				return fmt.Errorf("cleaning up relation %d: %w", c.Doc.RelationId, err)
			}
			if len(resp.Kvs) == 0 {
				if from == prefix {
					break
				}
				from = prefix // once more from the start, for any written behind the batches
				continue
			}
			ops := make([]clientv3.Op, 0, len(resp.Kvs))
			for _, kv := range resp.Kvs {
				ops = append(ops, clientv3.OpDelete(string(kv.Key)))
			}
			if _, err := s.kv.Txn(ctx).Then(ops...).Commit(); err != nil {
				return fmt.Errorf("cleaning up relation %d: %w", c.Doc.RelationId, err)
			}
			from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
	}
	if _, err := s.kv.Delete(ctx, cleanupKey(uuid, c.ID)); err != nil {
		return fmt.Errorf("removing cleanup %d: %w", c.ID, err)
	}
	return nil
}
