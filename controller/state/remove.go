package state

import (
	"context"
	"errors"
	"fmt"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
)

// Removal is what one destroy call did or, for a dry run, would do.
type Removal struct {
	Outcome Outcome
	// Units that go with the entity: an application's units, a unit's subordinates, a forced
	// machine's units.
	Units []string
	// RequiresForce: the removal is refused without force (a machine with units).
	RequiresForce bool
}

// DestroyOptions tune a destroy call.
type DestroyOptions struct {
	// ForceAfter, when non-zero (Unix nanoseconds), is when the controller starts doing the
	// agents' duties itself (L-F1).
	ForceAfter int64
	// DryRun checks and reports without writing.
	DryRun bool
	// KeepInstance (machines) leaves the provider instance running.
	KeepInstance bool
}

// escalate records a force deadline on an entity that is already being removed: force on a
// stuck entity is how a user unblocks it (L-F1). It reports whether anything changed.
func escalate(current *int64, forceAfter int64) bool {
	if forceAfter == 0 || (*current != 0 && *current <= forceAfter) {
		return false
	}
	*current = forceAfter
	return true
}

// DestroyUnit is remove-unit (L-U1): principal units only; not alive is a no-op; otherwise the
// unit goes dying, and its subordinates with it (L-U5). A unit whose machine never got an
// instance was never deployed, so nothing else can remove it: it goes at once (L-M5).
func (s *State) DestroyUnit(ctx context.Context, uuid, name string, opts DestroyOptions) (Removal, error) {
	var res Removal
	err := s.run(ctx, fmt.Sprintf("cannot destroy unit %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		res = Removal{}
		u, err := r.unit(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		if u.Principal != "" {
			app, _ := names.UnitApplication(name)
			return nil, apierr.Errorf(apierr.NotSupported,
				"unit %q is a subordinate, to remove use remove-relation. Note: this will remove all units of %q", name, app)
		}
		res.Units = slices.Clone(u.Subordinates)
		w := &writes{}
		if u.Life != string(life.Alive) {
			res.Outcome = OutcomeNone
			if escalate(&u.ForceAfter, opts.ForceAfter) && !opts.DryRun {
				w.put(unitKey(uuid, name), u)
			}
			return w, nil
		}
		if never, err := r.neverDeployed(ctx, uuid, u); err != nil {
			return nil, err
		} else if never {
			res.Outcome = OutcomeRemoved
			if opts.DryRun {
				return nil, nil
			}
			return w, r.removeUnit(ctx, w, uuid, u)
		}
		res.Outcome = OutcomeDying
		if opts.DryRun {
			return nil, nil
		}
		if err := r.setUnitDying(ctx, w, uuid, u, opts.ForceAfter); err != nil {
			return nil, err
		}
		return w, nil
	})
	return res, err
}

// neverDeployed reports whether principal unit u was never deployed and cannot be while its
// machine has no instance: no machine agent exists to deploy it, so it has no credential, scope
// or subordinate (L-M5). The machine is read through r, so an instance recorded meanwhile fails
// the commit.
func (r *reader) neverDeployed(ctx context.Context, uuid string, u *storepb.Unit) (bool, error) {
	if u.Principal != "" || u.MachineId == "" || u.PasswordHash != "" || len(u.Subordinates) > 0 || len(u.Scopes) > 0 {
		return false, nil
	}
	m := &storepb.Machine{}
	found, err := r.get(ctx, machineKey(uuid, u.MachineId), m)
	if err != nil {
		return false, err
	}
	return !found || m.InstanceId == "", nil
}

// RemoveUndeployedUnits is the provisioner's duty, in place of the machine agent there is not,
// for a machine that has no instance and is not getting one (its provisioning failed, or it is
// not alive; L-M5). Its units were never deployed, so no agent follows their dying application
// (L-U6) or removes them (L-U3). Each unit that is not alive, or whose application is not alive,
// is removed at once, as remove-unit does (L-M5), one transaction each (L-G4); the last unit of
// a dying application takes the application with it (L-A3), so nothing stays dying for an
// agent that will never run (L-F2). Units still wanted stay, waiting for the machine to be
// provisioned. It returns the units it removed.
//
// It costs one range read of the machine's unit index and one read per application found
// there, so the provisioner can call it for every such machine on each pass.
func (s *State) RemoveUndeployedUnits(ctx context.Context, uuid, machineID string) ([]string, error) {
	prefix := machineUnitsPrefix(uuid, machineID)
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing units of machine %s: %w", machineID, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	appAlive := map[string]bool{}
	var removed []string
	for _, kv := range resp.Kvs {
		name := string(kv.Key)[len(prefix):]
		app, err := names.UnitApplication(name)
		if err != nil {
			continue
		}
		if string(kv.Value) == string(life.Alive) {
			alive, ok := appAlive[app]
			if !ok {
				a := &storepb.Application{}
				found, err := s.getDoc(ctx, applicationKey(uuid, app), a)
				if err != nil {
					return removed, err
				}
				alive = found && a.Life == string(life.Alive)
				appAlive[app] = alive
			}
			if alive {
				continue
			}
		}
		done, err := s.RemoveUndeployedUnit(ctx, uuid, name)
		if err != nil {
			return removed, err
		}
		if done {
			removed = append(removed, name)
		}
	}
	return removed, nil
}

// RemoveUndeployedUnit removes one principal unit that was never deployed and never will be
// (see RemoveUndeployedUnits), in one transaction that checks it all again. It reports whether
// it removed the unit: a unit that is still wanted, or that was deployed after all (its machine
// got an instance), stays.
func (s *State) RemoveUndeployedUnit(ctx context.Context, uuid, name string) (bool, error) {
	var removed bool
	err := s.run(ctx, fmt.Sprintf("cannot remove unit %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		removed = false
		app, err := names.UnitApplication(name)
		if err != nil {
			return nil, apierr.Errorf(apierr.NotValid, "%q is not a valid unit name", name)
		}
		if err := r.prefetch(ctx, unitKey(uuid, name), applicationKey(uuid, app), leaseKey(uuid, app)); err != nil {
			return nil, err
		}
		u := &storepb.Unit{}
		if found, err := r.get(ctx, unitKey(uuid, name), u); err != nil || !found {
			return nil, err
		}
		if never, err := r.neverDeployed(ctx, uuid, u); err != nil || !never {
			return nil, err
		}
		if u.Life == string(life.Alive) {
			a, err := r.application(ctx, uuid, u.Application)
			if err != nil {
				return nil, err
			}
			if a.Life == string(life.Alive) {
				return nil, nil
			}
		}
		removed = true
		w := &writes{}
		return w, r.removeUnit(ctx, w, uuid, u)
	})
	return removed, err
}

// putUnitLife writes a unit whose life changed and, for a principal, the copy of its life in
// its machine's index, which is what the machine agent watches (L-S machine agent).
func (w *writes) putUnitLife(uuid string, u *storepb.Unit) {
	w.put(unitKey(uuid, u.Name), u)
	if u.Principal == "" {
		w.putRaw(machineUnitKey(uuid, u.MachineId, u.Name), u.Life)
	}
}

// setUnitDying sets u dying with its subordinates (L-U5: a subordinate follows its principal).
func (r *reader) setUnitDying(ctx context.Context, w *writes, uuid string, u *storepb.Unit, forceAfter int64) error {
	u.Life = string(life.Dying)
	u.ForceAfter = forceAfter
	w.putUnitLife(uuid, u)
	for _, name := range u.Subordinates {
		sub, err := r.unit(ctx, uuid, name)
		if err != nil {
			return err
		}
		if sub.Life == string(life.Alive) {
			sub.Life = string(life.Dying)
			sub.ForceAfter = forceAfter
			w.put(unitKey(uuid, name), sub)
		}
	}
	return nil
}

// SetUnitDying is what a unit's agent does when its application is dying (L-U6) or, for a
// subordinate, when its principal relation is gone (L-R5). It returns the unit's life.
func (s *State) SetUnitDying(ctx context.Context, uuid, name string) (string, error) {
	var result string
	err := s.run(ctx, fmt.Sprintf("cannot set unit %q dying", name), func(ctx context.Context, r *reader) (*writes, error) {
		if app, err := names.UnitApplication(name); err == nil {
			if err := r.prefetch(ctx, unitKey(uuid, name), applicationKey(uuid, app)); err != nil {
				return nil, err
			}
		}
		u, err := r.unit(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		result = u.Life
		if u.Life != string(life.Alive) {
			return nil, nil
		}
		w := &writes{}
		// A unit of a forced application inherits the deadline.
		app, err := r.application(ctx, uuid, u.Application)
		if err != nil {
			return nil, err
		}
		result = string(life.Dying)
		return w, r.setUnitDying(ctx, w, uuid, u, app.ForceAfter)
	})
	return result, err
}

// EnsureUnitDead sets a dying unit dead when nothing holds it any more: no relation scope and no
// subordinate (L-U4). It returns the unit's life; a unit still held stays dying, without error.
func (s *State) EnsureUnitDead(ctx context.Context, uuid, name string) (string, error) {
	var result string
	err := s.run(ctx, fmt.Sprintf("cannot set unit %q dead", name), func(ctx context.Context, r *reader) (*writes, error) {
		u, err := r.unit(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		result = u.Life
		switch {
		case u.Life == string(life.Alive):
			return nil, apierr.Errorf(apierr.NotValid, "unit %q is alive", name)
		case u.Life == string(life.Dead), len(u.Scopes) > 0, len(u.Subordinates) > 0:
			return nil, nil
		}
		result = string(life.Dead)
		u.Life = string(life.Dead)
		w := &writes{}
		w.putUnitLife(uuid, u)
		return w, nil
	})
	return result, err
}

// RemoveUnit is the deployer's last step (L-U3): it removes a dead unit, or a unit that is not
// alive and was never deployed (nothing else will ever hold it).
func (s *State) RemoveUnit(ctx context.Context, uuid, name string) error {
	return s.run(ctx, fmt.Sprintf("cannot remove unit %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		if app, err := names.UnitApplication(name); err == nil {
			if err := r.prefetch(ctx, unitKey(uuid, name), applicationKey(uuid, app), leaseKey(uuid, app)); err != nil {
				return nil, err
			}
		}
		u := &storepb.Unit{}
		found, err := r.get(ctx, unitKey(uuid, name), u)
		if err != nil || !found {
			return nil, err
		}
		undeployed := u.PasswordHash == "" && u.Life != string(life.Alive) && len(u.Scopes) == 0 && len(u.Subordinates) == 0
		if u.Life != string(life.Dead) && !undeployed {
			return nil, apierr.Errorf(apierr.NotValid, "unit %q is %s, not dead", name, u.Life)
		}
		w := &writes{}
		return w, r.removeUnit(ctx, w, uuid, u)
	})
}

// removeUnit writes L-U3: unassign from machine or principal, delete the unit, and decrement
// its application's unit count or, when nothing else holds a dying application, remove it.
func (r *reader) removeUnit(ctx context.Context, w *writes, uuid string, u *storepb.Unit) error {
	if u.Principal != "" {
		p := &storepb.Unit{}
		found, err := r.get(ctx, unitKey(uuid, u.Principal), p)
		if err != nil {
			return err
		}
		if found {
			p.Subordinates = slices.DeleteFunc(p.Subordinates, func(n string) bool { return n == u.Name })
			w.put(unitKey(uuid, p.Name), p)
		}
	} else {
		w.del(machineUnitKey(uuid, u.MachineId, u.Name))
	}
	w.del(unitKey(uuid, u.Name))
	deleteCharmState(w, uuid, u.Name)
	w.deleteUnitResources(uuid, u.Name)
	// Nothing will run the unit's queued tasks any more: cancelled with it, as Juju does.
	if err := r.cancelRemovedReceiverTasks(ctx, w, uuid, u.Name, msgUnitRemoved); err != nil {
		return err
	}
	app, err := r.application(ctx, uuid, u.Application)
	if err != nil {
		return err
	}
	// L-U3: the unit's record going is the unit count going down; the application goes too
	// when it is dying and nothing else holds it (L-A3).
	keep := app.Life == string(life.Alive) || app.RelationCount >= 1
	if !keep {
		if keep, err = r.othersUnder(ctx, applicationUnitsPrefix(uuid, app.Name), unitKey(uuid, u.Name)); err != nil {
			return err
		}
	}
	if !keep {
		w.deleteApplication(uuid, app.Name)
		return nil
	}
	// A leader going frees the lease at once: another unit's agent, watching the key,
	// claims it.
	return r.releaseLeadership(ctx, w, uuid, u)
}

// DestroyApplication is remove-application (L-A1), one transaction: relations nobody is in go at
// once, the others go dying; the application goes at once when nothing would still hold it,
// else it goes dying and its units follow through their agents (L-A2, L-U6).
func (s *State) DestroyApplication(ctx context.Context, uuid, name string, opts DestroyOptions) (Removal, error) {
	var res Removal
	err := s.run(ctx, fmt.Sprintf("cannot destroy application %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		app, err := r.application(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		// Listed after reading the application, on every attempt: every transaction that adds
		// or removes one of its relations also writes the application document, so a change
		// after this read fails the commit and brings us back here with a fresh list.
		rels, err := s.Relations(ctx, uuid)
		if err != nil {
			return nil, err
		}
		units, err := s.applicationUnitNames(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		res = Removal{Units: units}
		w := &writes{}
		if app.Life != string(life.Alive) {
			res.Outcome = OutcomeNone
			if escalate(&app.ForceAfter, opts.ForceAfter) && !opts.DryRun {
				w.put(applicationKey(uuid, name), app)
			}
			return w, nil
		}
		// Counterpart applications are read once each: several relations may share one.
		others := map[string]*storepb.Application{}
		removed := int32(0)
		for _, listed := range rels {
			if own, _ := relationSides(listed, name); own == nil {
				continue
			}
			rel, err := r.relation(ctx, uuid, listed.Id)
			if errors.Is(err, apierr.NotFound) {
				// Removed since the listing: that changed our application document too, so
				// the commit fails and the next attempt lists afresh.
				continue
			}
			if err != nil {
				return nil, err
			}
			if rel.Life != string(life.Alive) {
				continue
			}
			occupied, err := r.occupied(ctx, uuid, rel.Id)
			if err != nil {
				return nil, err
			}
			if occupied {
				rel.Life = string(life.Dying)
				rel.ForceAfter = opts.ForceAfter
				w.put(relationKey(uuid, rel.Id), rel)
				continue
			}
			// L-R1 caused by application removal: only the counterpart's count changes here.
			removed++
			for _, ep := range rel.Endpoints {
				if ep.Application == name {
					continue
				}
				other, ok := others[ep.Application]
				if !ok {
					if other, err = r.application(ctx, uuid, ep.Application); err != nil {
						return nil, err
					}
					others[ep.Application] = other
				}
				other.RelationCount--
				w.put(applicationKey(uuid, other.Name), other)
			}
			if err := r.deleteRelation(ctx, w, uuid, rel); err != nil {
				return nil, err
			}
		}
		hasUnits, err := r.othersUnder(ctx, applicationUnitsPrefix(uuid, name), "")
		if err != nil {
			return nil, err
		}
		if hasUnits || removed < app.RelationCount {
			res.Outcome = OutcomeDying
			app.Life = string(life.Dying)
			app.RelationCount -= removed
			app.ForceAfter = opts.ForceAfter
			w.put(applicationKey(uuid, name), app)
		} else {
			res.Outcome = OutcomeRemoved
			w.deleteApplication(uuid, name)
		}
		if opts.DryRun {
			return nil, nil
		}
		return w, nil
	})
	return res, err
}

// applicationUnitNames lists an application's units in natural order.
func (s *State) applicationUnitNames(ctx context.Context, uuid, app string) ([]string, error) {
	numbers, err := s.keysUnder(ctx, applicationUnitsPrefix(uuid, app))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(numbers))
	for _, n := range numbers {
		out = append(out, app+"/"+n)
	}
	slices.SortFunc(out, names.NaturalCompare)
	return out, nil
}

// DestroyMachine is remove-machine (L-M1): not alive is a no-op; the controller machine, or a
// machine with units, is refused (with force, a machine with units goes dying and the force
// worker removes its units first); otherwise the machine goes dying.
func (s *State) DestroyMachine(ctx context.Context, uuid, id string, opts DestroyOptions) (Removal, error) {
	var res Removal
	err := s.run(ctx, fmt.Sprintf("cannot destroy machine %s", id), func(ctx context.Context, r *reader) (*writes, error) {
		res = Removal{}
		m := &storepb.Machine{}
		found, err := r.get(ctx, machineKey(uuid, id), m)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, apierr.Errorf(apierr.NotFound, "machine %s not found", id)
		}
		// The names are for the report; whether any unit is assigned is decided, and asserted
		// for the commit, by othersUnder (a unit placed meanwhile fails the commit).
		units, err := s.machineUnits(ctx, uuid, id)
		if err != nil {
			return nil, err
		}
		res.Units = units
		w := &writes{}
		if m.Life != string(life.Alive) {
			res.Outcome = OutcomeNone
			if escalate(&m.ForceAfter, opts.ForceAfter) && !opts.DryRun {
				w.put(machineKey(uuid, id), m)
			}
			return w, nil
		}
		if hasJob(m, JobManageModel) {
			return nil, apierr.Errorf(apierr.NotValid, "machine %s is required by the model", id)
		}
		hasUnits, err := r.othersUnder(ctx, machineUnitsPrefix(uuid, id), "")
		if err != nil {
			return nil, err
		}
		if hasUnits && len(units) == 0 {
			return nil, errRetry // assigned since the listing
		}
		if hasUnits && opts.ForceAfter == 0 {
			res.RequiresForce = true
			if opts.DryRun {
				return nil, nil
			}
			return nil, apierr.Errorf(apierr.HasAssignedUnits, "machine %s has unit %q assigned", id, units[0])
		}
		res.Outcome = OutcomeDying
		if opts.DryRun {
			return nil, nil
		}
		m.Life = string(life.Dying)
		m.ForceAfter = opts.ForceAfter
		m.KeepInstance = opts.KeepInstance
		w.put(machineKey(uuid, id), m)
		return w, nil
	})
	return res, err
}

// EnsureMachineDead is the machine agent's duty for a dying machine (L-M2): dead once no unit
// is assigned. It returns the machine's life; a machine still holding units stays dying.
func (s *State) EnsureMachineDead(ctx context.Context, uuid, id string) (string, error) {
	var result string
	err := s.run(ctx, fmt.Sprintf("cannot set machine %s dead", id), func(ctx context.Context, r *reader) (*writes, error) {
		m := &storepb.Machine{}
		found, err := r.get(ctx, machineKey(uuid, id), m)
		if err != nil {
			return nil, err
		}
		if !found {
			result = ""
			return nil, nil
		}
		result = m.Life
		switch {
		case m.Life == string(life.Alive):
			return nil, apierr.Errorf(apierr.NotValid, "machine %s is alive", id)
		case m.Life == string(life.Dead):
			return nil, nil
		case hasJob(m, JobManageModel):
			return nil, apierr.Errorf(apierr.NotValid, "machine %s is required by the model", id)
		}
		if hasUnits, err := r.othersUnder(ctx, machineUnitsPrefix(uuid, id), ""); err != nil || hasUnits {
			return nil, err
		}
		result = string(life.Dead)
		m.Life = string(life.Dead)
		w := &writes{}
		w.put(machineKey(uuid, id), m)
		return w, nil
	})
	return result, err
}

// RemoveMachine deletes a dead machine's document once its instance is released (L-M3).
func (s *State) RemoveMachine(ctx context.Context, uuid, id string) error {
	return s.run(ctx, fmt.Sprintf("cannot remove machine %s", id), func(ctx context.Context, r *reader) (*writes, error) {
		m := &storepb.Machine{}
		found, err := r.get(ctx, machineKey(uuid, id), m)
		if err != nil || !found {
			return nil, err
		}
		if m.Life != string(life.Dead) {
			return nil, apierr.Errorf(apierr.NotValid, "machine %s is %s, not dead", id, m.Life)
		}
		w := &writes{}
		w.del(machineKey(uuid, id))
		// Where the machine's sshd listened goes with it.
		w.del(sshHostKey(uuid, id))
		return w, r.cancelRemovedReceiverTasks(ctx, w, uuid, id, msgMachineRemoved)
	})
}
