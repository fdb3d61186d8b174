package state

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// WatchedModels is how many models the hub holds an etcd watch for.
func (h *Hub) WatchedModels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.models)
}

// MaxBulkOps is the bound on a bulk transaction, for the test that it fits the store.
const MaxBulkOps = maxBulkOps

// LowerMaxBulkBytes makes bulk transactions refused past n bytes until the test ends.
func LowerMaxBulkBytes(t interface{ Cleanup(func()) }, n int) {
	old := maxBulkBytes
	maxBulkBytes = n
	t.Cleanup(func() { maxBulkBytes = old })
}

// KeysWatchers is how many watchers share the etcd watch of uuid's keys (-1: no watch, or
// one that is ending).
func (s *State) KeysWatchers(uuid string) int {
	s.keys.mu.Lock()
	m := s.keys.models[uuid]
	s.keys.mu.Unlock()
	if m == nil {
		return -1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return -1
	}
	return len(m.subs)
}

// SettingsPrefix is where a relation's settings are kept.
var SettingsPrefix = settingsPrefix

// CleanupBatch is how many settings one cleanup transaction deletes.
const CleanupBatch = cleanupBatch

// PutRaw writes key as it is, for tests of what reads keys in bulk.
func (s *State) PutRaw(ctx context.Context, key, value string) error {
	_, err := s.kv.Put(ctx, key, value)
	return err
}

// CountRaw is how many keys there are under prefix.
func (s *State) CountRaw(ctx context.Context, prefix string) (int64, error) {
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}

// LowerSharedKeep makes shared snapshots dropped d after their last use until the test ends.
func LowerSharedKeep(t interface{ Cleanup(func()) }, d time.Duration) {
	old := sharedKeep
	sharedKeep = d
	t.Cleanup(func() { sharedKeep = old })
}

// SharedSnapshotKept says whether a shared snapshot of the model is kept.
func (s *State) SharedSnapshotKept(uuid string) bool {
	s.shared.mu.Lock()
	defer s.shared.mu.Unlock()
	return s.shared.snaps[uuid] != nil
}
