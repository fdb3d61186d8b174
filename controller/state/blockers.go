package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
)

// Blockers says, for every entity of a snapshot that is not alive, what its removal is waiting
// for (L-F2: nothing stays dying without a reason the user can see).
type Blockers struct {
	Units        map[string][]string
	Applications map[string][]string
	Machines     map[string][]string
	Relations    map[int64][]string
	// ScopeUnits lists each relation's units in scope (from the units' scope records, L-R6).
	ScopeUnits map[int64][]string
}

// maxNamed bounds how many names one blocker line lists.
const maxNamed = 5

func nameList(list []string) string {
	if len(list) <= maxNamed {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(list)-maxNamed)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Blockers computes the removal blockers of a snapshot, once: the snapshot must not change
// after it is first called, and callers must not modify what it returns.
func (snap *Snapshot) Blockers() Blockers {
	snap.blockersOnce.Do(func() { snap.blockers = snap.computeBlockers() })
	return snap.blockers
}

func (snap *Snapshot) computeBlockers() Blockers {
	b := Blockers{
		Units: map[string][]string{}, Applications: map[string][]string{}, Machines: map[string][]string{},
		Relations: map[int64][]string{}, ScopeUnits: map[int64][]string{},
	}
	relKeys := map[int64]string{}
	for _, rel := range snap.Relations {
		relKeys[rel.Id] = rel.Key
	}
	// Machines without an instance, by id: whether the provisioner is done trying (a
	// provisioning error, or not alive), or still to start one.
	noInstance := map[string]bool{}
	for _, m := range snap.Machines {
		if m.InstanceId == "" {
			noInstance[m.Id] = m.ProvisioningError != "" || m.Life != string(life.Alive)
		}
	}
	// Only an entity that is not alive names its units: a model of 10,000 live units lists and
	// sorts none of them on every status.
	dyingApps, dyingMachines := map[string]bool{}, map[string]bool{}
	for _, app := range snap.Applications {
		if app.Life != string(life.Alive) {
			dyingApps[app.Name] = true
		}
	}
	for _, m := range snap.Machines {
		if m.Life != string(life.Alive) {
			dyingMachines[m.Id] = true
		}
	}
	appUnits := map[string][]string{}
	machineUnits := map[string][]string{}
	for _, u := range snap.Units {
		for _, id := range u.Scopes {
			b.ScopeUnits[id] = append(b.ScopeUnits[id], u.Name)
		}
		if dyingApps[u.Application] {
			appUnits[u.Application] = append(appUnits[u.Application], u.Name)
		}
		if u.Principal == "" && u.MachineId != "" && dyingMachines[u.MachineId] {
			machineUnits[u.MachineId] = append(machineUnits[u.MachineId], u.Name)
		}
	}
	for _, list := range [](map[string][]string){appUnits, machineUnits} {
		for _, units := range list {
			slices.SortFunc(units, names.NaturalCompare)
		}
	}
	for _, units := range b.ScopeUnits {
		slices.SortFunc(units, names.NaturalCompare)
	}
	// L-U2, L-F2: a failed hook suspends a unit's progress until `juju resolved`; whatever
	// waits for that unit says so.
	unitErrors := map[string]string{}
	for _, u := range snap.Units {
		if e := unitError(u); e != "" {
			unitErrors[u.Name] = e
		}
	}
	for _, u := range snap.Units {
		if u.Life == string(life.Alive) {
			continue
		}
		var why []string
		if e := unitErrors[u.Name]; e != "" {
			why = append(why, e)
		}
		for _, id := range u.Scopes {
			why = append(why, fmt.Sprintf("still in relation %d (%s)", id, relKeys[id]))
		}
		for _, sub := range u.Subordinates {
			why = append(why, fmt.Sprintf("waiting for subordinate %s to be removed", sub))
		}
		switch {
		case len(why) > 0:
		case u.Life == string(life.Dead) && u.Principal != "":
			why = append(why, fmt.Sprintf("dead; waiting for the agent of %s to remove it", u.Principal))
		case u.Life == string(life.Dead):
			why = append(why, fmt.Sprintf("dead; waiting for the agent of machine %s to remove it", u.MachineId))
		case u.Principal == "" && u.PasswordHash == "" && hasKey(noInstance, u.MachineId):
			// L-M5: it has no agent. The provisioner removes it, or the agent of the machine's
			// instance to come does.
			if noInstance[u.MachineId] {
				why = append(why, fmt.Sprintf("never deployed (machine %s has no instance); waiting for the provisioner to remove it", u.MachineId))
			} else {
				why = append(why, fmt.Sprintf("never deployed; waiting for machine %s to be provisioned", u.MachineId))
			}
		default:
			why = append(why, "waiting for its agent to set it dead")
		}
		b.Units[u.Name] = why
	}
	for _, app := range snap.Applications {
		if app.Life == string(life.Alive) {
			continue
		}
		var why []string
		if units := appUnits[app.Name]; len(units) > 0 {
			why = append(why, fmt.Sprintf("waiting for %s to be removed: %s", plural(len(units), "unit", "units"), nameList(units)))
			why = append(why, erroredUnits(units, unitErrors)...)
		}
		for _, rel := range snap.Relations {
			if own, _ := relationSides(rel, app.Name); own != nil {
				why = append(why, fmt.Sprintf("waiting for relation %d (%s) to be removed", rel.Id, rel.Key))
			}
		}
		b.Applications[app.Name] = why
	}
	for _, rel := range snap.Relations {
		if rel.Life == string(life.Alive) {
			continue
		}
		units := b.ScopeUnits[rel.Id]
		b.Relations[rel.Id] = append([]string{fmt.Sprintf("waiting for %s to leave its scope: %s",
			plural(len(units), "unit", "units"), nameList(units))}, erroredUnits(units, unitErrors)...)
	}
	for _, m := range snap.Machines {
		if m.Life == string(life.Alive) {
			continue
		}
		var why []string
		if units := machineUnits[m.Id]; len(units) > 0 {
			why = append(why, fmt.Sprintf("waiting for %s to be removed: %s", plural(len(units), "unit", "units"), nameList(units)))
			why = append(why, erroredUnits(units, unitErrors)...)
		}
		switch {
		case len(why) > 0:
		case m.Life == string(life.Dead) && m.InstanceId != "":
			why = append(why, fmt.Sprintf("dead; waiting for the provisioner to release instance %s", m.InstanceId))
		case m.InstanceId == "":
			why = append(why, "waiting for the provisioner to remove it")
		default:
			why = append(why, "waiting for its agent to set it dead")
		}
		b.Machines[m.Id] = why
	}
	return b
}

// unitError says how a unit in error holds things up: its failed hook and what to do about it,
// or "" when it is not in error.
func unitError(u *storepb.Unit) string {
	if !InError(u) {
		return ""
	}
	msg := u.GetWorkloadStatus().GetMessage()
	if msg == "" {
		msg = "workload in error"
	}
	switch u.Resolved {
	case ResolvedRetry:
		return msg + " (resolved; waiting for its agent to retry the hook)"
	case ResolvedNoRetry:
		return msg + " (resolved; waiting for its agent to skip the hook)"
	}
	return fmt.Sprintf("%s (run juju resolved %s)", msg, u.Name)
}

// erroredUnits names, for an entity waiting on units, those of them that are in error (at most
// maxNamed lines).
func erroredUnits(units []string, unitErrors map[string]string) []string {
	var out []string
	more := 0
	for _, name := range units {
		e := unitErrors[name]
		if e == "" {
			continue
		}
		if len(out) == maxNamed {
			more++
			continue
		}
		out = append(out, fmt.Sprintf("unit %s: %s", name, e))
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %s in error", plural(more, "more unit", "more units")))
	}
	return out
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}
