package state

import "unsafe"

// MatchAttempts is how many index lookups and subscriber entries the hub has looked at.
func (h *Hub) MatchAttempts() int64 { return h.attempts.Load() }

// HoldModel takes uuid's model lock, as a long fan-out does, until release is called.
func (h *Hub) HoldModel(uuid string) (release func()) {
	h.mu.Lock()
	m := h.models[uuid]
	h.mu.Unlock()
	m.mu.Lock()
	return m.mu.Unlock
}

// KeyData is where the string of the subscription's key i lives.
func (s *Subscription) KeyData(i int) *byte { return unsafe.StringData(s.keys[i].Key) }
