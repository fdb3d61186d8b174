package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
)

// Hook kinds. Relation hooks are named "<endpoint>-relation-<kind>".
const (
	hookInstall               = "install"
	hookLeaderElected         = "leader-elected"
	hookLeaderSettingsChanged = "leader-settings-changed"
	hookConfigChanged         = "config-changed"
	hookStart                 = "start"
	hookStop                  = "stop"
	hookRemove                = "remove"
	hookUpdateStatus          = "update-status"
	hookUpgradeCharm          = "upgrade-charm"
	hookCreated               = "created"
	hookJoined                = "joined"
	hookChanged               = "changed"
	hookDeparted              = "departed"
	hookBroken                = "broken"
)

// hookSpec is one hook to run, with what it means for the local record once it ran.
type hookSpec struct {
	Kind       string `json:"kind"`
	RelationID int64  `json:"relation-id,omitempty"`
	RemoteUnit string `json:"remote-unit,omitempty"`
	// Revision: the member's settings revision (changed), the leader settings revision
	// (leader-settings-changed), the application's charm_modified_version (install).
	Revision int64 `json:"revision,omitempty"`
	// ConfigHash and Trust: the config and trust (Juju's application config) a config-changed
	// hook saw.
	ConfigHash string `json:"config-hash,omitempty"`
	Trust      bool   `json:"trust,omitempty"`
	// Endpoint and the remote side, for the hook's name and the failure message.
	Endpoint       string `json:"endpoint,omitempty"`
	RemoteApp      string `json:"remote-application,omitempty"`
	RemoteEndpoint string `json:"remote-endpoint,omitempty"`
	// SelfDeparting: a departed hook run because this unit leaves (JUJU_DEPARTING_UNIT names
	// it rather than the remote unit).
	SelfDeparting bool `json:"self-departing,omitempty"`
}

// relation: a relation hook (relation ids start at 0, so the endpoint tells).
func (h *hookSpec) relation() bool { return h.Endpoint != "" }

// Name is the hook's file name under hooks/.
func (h *hookSpec) Name() string {
	if h.relation() {
		return h.Endpoint + "-relation-" + h.Kind
	}
	return h.Kind
}

// failure is the workload message of a failed hook, as Juju words it.
func (h *hookSpec) failure() string {
	msg := fmt.Sprintf("hook failed: %q", h.Name())
	if h.relation() {
		msg += fmt.Sprintf(" for %s:%s", h.RemoteApp, h.RemoteEndpoint)
	}
	return msg
}

// step is the agent's next move: a hook, or entering or leaving a relation's scope.
type step struct {
	hook  *hookSpec
	enter *pb.AgentRelation
	// leave the scope of relation id; forget drops the local record of a relation that is
	// already gone from the store.
	leave, forget bool
	id            int64
	// upgrade: put this charm (its URL) in place of the unit's and tell the controller
	// (juju refresh); upgrade-charm is owed then.
	upgrade string
}

// snapshot is what the agent read of the store for one pass.
type snapshot struct {
	unit   *pb.AgentUnit
	app    *pb.AgentApplication
	rels   []*pb.AgentRelation
	leader bool
	// hooks the charm has, by file name; nil means every hook (tests).
	hooks map[string]bool
}

// passive: the charm has no hook for this endpoint's relations, so its counterparts' comings
// and goings need no steps (running no hooks, they would change nothing but the record of
// who is known, which relation-list then reads from the snapshot). A thousand-unit peer
// relation costs a charm without peer hooks nothing.
func (s *snapshot) passive(endpoint string) bool { return passive(s.hooks, endpoint) }

func passive(hooks map[string]bool, endpoint string) bool {
	if hooks == nil {
		return false
	}
	for _, kind := range []string{hookCreated, hookJoined, hookChanged, hookDeparted, hookBroken} {
		if hooks[endpoint+"-relation-"+kind] {
			return false
		}
	}
	return true
}

func (s *snapshot) relation(id int64) *pb.AgentRelation {
	for _, r := range s.rels {
		if r.Id == id {
			return r
		}
	}
	return nil
}

func (s *snapshot) alive() bool { return s.unit.Life == string(life.Alive) }

func configHash(configJSON string) string {
	sum := sha256.Sum256([]byte(configJSON))
	return hex.EncodeToString(sum[:8])
}

// nextStep decides what the unit does next, in Juju's order: install; relation-created for
// every relation there is then (peers included); leader-elected, config-changed, start; then
// relations (L-R2 joining: relation-created, then joined and changed per counterpart, changed
// again when the other application's data changes; L-R3 departing); when dying, every relation
// departs and then stop and remove run (L-U2). nil: nothing to do.
func nextStep(st *uniterState, s *snapshot) *step {
	dying := !s.alive()
	if dying && !st.Installed {
		return departingSteps(st, s) // never installed: nothing to stop
	}
	if !st.Installed {
		// The unit is in the relations there are before its first hook, as in Juju: a peer
		// relation's data can be read and written from install on.
		if s := enterSteps(s); s != nil {
			return s
		}
		// The charm installed is the application's as of this version (upgradeSteps).
		return &step{hook: &hookSpec{Kind: hookInstall, Revision: s.app.GetCharmModifiedVersion()}}
	}
	if !dying {
		if s := upgradeSteps(st, s); s != nil {
			return s
		}
	}
	if !dying && !st.Started {
		if s := createdSteps(st, s); s != nil {
			return s
		}
	}
	switch hash := configHash(s.app.GetConfigJson()); {
	case s.leader && !st.LeaderElected && !dying:
		return &step{hook: &hookSpec{Kind: hookLeaderElected}}
	case (st.ConfigHash != hash || st.Trust != s.app.GetTrust()) && !dying:
		// As in Juju, trust is application config: changing it runs config-changed too.
		return &step{hook: &hookSpec{Kind: hookConfigChanged, ConfigHash: hash, Trust: s.app.GetTrust()}}
	case !st.Started && !dying:
		return &step{hook: &hookSpec{Kind: hookStart}}
	}
	if dying {
		if s := departingSteps(st, s); s != nil {
			return s
		}
		switch {
		case !st.Stopped:
			return &step{hook: &hookSpec{Kind: hookStop}}
		case !st.Removed:
			return &step{hook: &hookSpec{Kind: hookRemove}}
		}
		return nil
	}
	if s := relationSteps(st, s); s != nil {
		return s
	}
	if !s.leader && s.app.GetLeaderSettingsRevision() != st.LeaderSettings {
		return &step{hook: &hookSpec{Kind: hookLeaderSettingsChanged, Revision: s.app.GetLeaderSettingsRevision()}}
	}
	return nil
}

// departingSteps: for each relation the unit is leaving (all of them when the unit is dying),
// departed for each known counterpart, then broken, then leave the scope (L-R3).
func departingSteps(st *uniterState, s *snapshot) *step {
	for _, id := range relationIDs(st) {
		rs := st.Relations[id]
		r := s.relation(id)
		gone := r == nil || !r.InScope
		if !gone && s.alive() && r.Life == string(life.Alive) {
			continue
		}
		if s.passive(rs.Endpoint) {
			if gone {
				return &step{forget: true, id: id}
			}
			return &step{leave: true, id: id}
		}
		if m := firstMember(rs.Members); m != "" {
			h := rs.hook(id, hookDeparted, m, 0)
			h.SelfDeparting = !s.alive()
			return &step{hook: h}
		}
		if !rs.Broken {
			return &step{hook: rs.hook(id, hookBroken, "", 0)}
		}
		if gone {
			return &step{forget: true, id: id}
		}
		return &step{leave: true, id: id}
	}
	if s.alive() {
		return nil
	}
	// In scope in the store without a local record (the record was lost): just leave.
	for _, r := range s.rels {
		if r.InScope && st.Relations[r.Id] == nil {
			return &step{leave: true, id: r.Id}
		}
	}
	return nil
}

// enterSteps: the unit enters the scope of each alive relation it should be in.
func enterSteps(s *snapshot) *step {
	for _, r := range s.rels {
		if !r.InScope && r.ShouldJoin && r.Life == string(life.Alive) {
			return &step{enter: r}
		}
	}
	return nil
}

// createdSteps: before start, the unit enters every relation it should be in and runs
// relation-created for each, as Juju does for the relations that exist at install.
func createdSteps(st *uniterState, s *snapshot) *step {
	if s := enterSteps(s); s != nil {
		return s
	}
	for _, r := range s.rels {
		if rs := st.Relations[r.Id]; rs != nil && !rs.Created && !s.passive(r.Endpoint) {
			return &step{hook: rs.hook(r.Id, hookCreated, "", 0)}
		}
	}
	return nil
}

// relationSteps: an alive unit joins relations it should be in, runs relation-created once,
// joined/changed for each counterpart it observes, departed for those gone (L-R2), and changed
// (with no remote unit) when the other application's data changes.
func relationSteps(st *uniterState, s *snapshot) *step {
	if s := departingSteps(st, s); s != nil {
		return s
	}
	for _, r := range s.rels {
		rs := st.Relations[r.Id]
		switch {
		case !r.InScope && r.ShouldJoin && r.Life == string(life.Alive):
			return &step{enter: r}
		case !r.InScope:
			continue
		case rs == nil:
			// In scope but unknown locally (entered by an earlier run whose record was
			// lost): adopt it; its counterparts get joined hooks.
			st.Relations[r.Id] = newRelationState(r)
			rs = st.Relations[r.Id]
		}
		if s.passive(r.Endpoint) {
			continue
		}
		if !rs.Created {
			return &step{hook: rs.hook(r.Id, hookCreated, "", 0)}
		}
		current := map[string]int64{}
		for _, m := range r.Members {
			current[m.Unit] = m.SettingsRevision
		}
		for _, u := range sortedKeys(rs.Members) {
			if _, ok := current[u]; !ok {
				return &step{hook: rs.hook(r.Id, hookDeparted, u, 0)}
			}
		}
		for _, u := range sortedKeys(current) {
			seen, known := rs.Members[u]
			switch {
			case !known:
				return &step{hook: rs.hook(r.Id, hookJoined, u, 0)}
			case seen != current[u]:
				return &step{hook: rs.hook(r.Id, hookChanged, u, current[u])}
			}
		}
		if r.RemoteAppSettingsRevision != rs.AppSettings {
			return &step{hook: rs.hook(r.Id, hookChanged, "", r.RemoteAppSettingsRevision)}
		}
	}
	return nil
}

func newRelationState(r *pb.AgentRelation) *relationState {
	return &relationState{Endpoint: r.Endpoint, RemoteApp: r.RemoteApplication, RemoteEndpoint: r.RemoteEndpoint,
		Members: map[string]int64{}}
}

func (rs *relationState) hook(id int64, kind, unit string, rev int64) *hookSpec {
	return &hookSpec{Kind: kind, RelationID: id, RemoteUnit: unit, Revision: rev,
		Endpoint: rs.Endpoint, RemoteApp: rs.RemoteApp, RemoteEndpoint: rs.RemoteEndpoint}
}

// commit records that a hook ran (or was skipped by `juju resolved --no-retry`).
func (st *uniterState) commit(h *hookSpec) {
	switch h.Kind {
	case hookInstall:
		st.Installed, st.CharmModifiedVersion = true, h.Revision
	case hookLeaderElected:
		st.LeaderElected = true
	case hookConfigChanged:
		st.ConfigHash, st.Trust = h.ConfigHash, h.Trust
	case hookStart:
		st.Started = true
	case hookStop:
		st.Stopped = true
	case hookRemove:
		st.Removed = true
	case hookLeaderSettingsChanged:
		st.LeaderSettings = h.Revision
	case hookUpgradeCharm:
		// Juju runs config-changed after upgrade-charm, whether the config changed or not.
		st.UpgradeCharm, st.ConfigHash = false, ""
	}
	rs := st.Relations[h.RelationID]
	if rs == nil {
		return
	}
	switch h.Kind {
	case hookCreated:
		rs.Created = true
	case hookJoined:
		rs.Members[h.RemoteUnit] = 0
	case hookChanged:
		if h.RemoteUnit == "" {
			rs.AppSettings = h.Revision // the other application's data changed
			return
		}
		rs.Members[h.RemoteUnit] = h.Revision
	case hookDeparted:
		delete(rs.Members, h.RemoteUnit)
	case hookBroken:
		rs.Broken = true
	}
}

// knownUnits is what relation-list shows in a hook: the counterparts joined and not departed,
// counting the hook's own remote unit as joined in its joined hook and gone in its departed.
func (st *uniterState) knownUnits(id int64, running *hookSpec, s *snapshot) []string {
	rs := st.Relations[id]
	if rs == nil {
		return nil
	}
	units := sortedKeys(rs.Members)
	if r := s.relation(id); r != nil && s.passive(rs.Endpoint) {
		units = units[:0]
		for _, m := range r.Members {
			units = append(units, m.Unit)
		}
		slices.SortFunc(units, names.NaturalCompare)
	}
	if running != nil && running.RelationID == id {
		switch running.Kind {
		case hookJoined:
			if !slices.Contains(units, running.RemoteUnit) {
				units = append(units, running.RemoteUnit)
				slices.SortFunc(units, names.NaturalCompare)
			}
		case hookDeparted:
			units = slices.DeleteFunc(units, func(u string) bool { return u == running.RemoteUnit })
		}
	}
	return units
}

func relationIDs(st *uniterState) []int64 {
	ids := make([]int64, 0, len(st.Relations))
	for id := range st.Relations {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func firstMember(m map[string]int64) string {
	if keys := sortedKeys(m); len(keys) > 0 {
		return keys[0]
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, names.NaturalCompare)
	return keys
}
