package state

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
