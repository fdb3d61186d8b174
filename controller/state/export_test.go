package state

// WatchedModels is how many models the hub holds an etcd watch for.
func (h *Hub) WatchedModels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.models)
}
