package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/core/life"
)

// The force operations do, for an agent that is not making progress, what the agent would have
// done (L-F1): each step is its own ordinary transaction (L-G4), so every count and reference
// stays as right as when agents do the work.

// ForceRemoveUnit removes a unit whatever its agent does: sets it dying, force-removes its
// subordinates, leaves its scopes (which may remove relations and applications, L-R4), sets it
// dead and removes it (L-U3). A unit already gone is not an error.
func (s *State) ForceRemoveUnit(ctx context.Context, uuid, name string, forceAfter int64) error {
	u, err := s.Unit(ctx, uuid, name)
	if errors.Is(err, apierr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if u.Life == string(life.Alive) {
		if err := s.run(ctx, fmt.Sprintf("cannot destroy unit %q", name), func(ctx context.Context, r *reader) (*writes, error) {
			u, err := r.unit(ctx, uuid, name)
			if err != nil || u.Life != string(life.Alive) {
				return nil, err
			}
			w := &writes{}
			return w, r.setUnitDying(ctx, w, uuid, u, forceAfter)
		}); err != nil {
			return ignoreNotFound(err)
		}
	}
	for _, sub := range u.Subordinates {
		if err := s.ForceRemoveUnit(ctx, uuid, sub, forceAfter); err != nil {
			return err
		}
	}
	// Each step goes on past what something else removed meanwhile (a relation, the unit):
	// stopping early would leave the rest undone with the deadline already passed.
	for _, rel := range u.Scopes {
		if err := ignoreNotFound(s.LeaveScope(ctx, uuid, rel, name)); err != nil {
			return err
		}
	}
	if _, err := s.EnsureUnitDead(ctx, uuid, name); ignoreNotFound(err) != nil {
		return err
	}
	return s.RemoveUnit(ctx, uuid, name)
}

// ForceRemoveMachine removes a machine's units, then sets it dead; the provisioner releases its
// instance and removes it (L-M3).
func (s *State) ForceRemoveMachine(ctx context.Context, uuid, id string, forceAfter int64) error {
	units, err := s.machineUnits(ctx, uuid, id)
	if err != nil {
		return err
	}
	for _, u := range units {
		if err := s.ForceRemoveUnit(ctx, uuid, u, forceAfter); err != nil {
			return err
		}
	}
	_, err = s.EnsureMachineDead(ctx, uuid, id)
	return ignoreNotFound(err)
}

// DestroyMachineUnits sets a forced machine's units dying with its deadline, one transaction
// each, so their agents get the grace period to leave cleanly.
func (s *State) DestroyMachineUnits(ctx context.Context, uuid, id string, forceAfter int64) error {
	units, err := s.machineUnits(ctx, uuid, id)
	if err != nil {
		return err
	}
	for _, u := range units {
		if _, err := s.DestroyUnit(ctx, uuid, u, DestroyOptions{ForceAfter: forceAfter}); ignoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// ForceRemoveApplicationUnits force-removes every unit of a forced, dying application; the last
// one out removes the application (L-U3, L-A3).
func (s *State) ForceRemoveApplicationUnits(ctx context.Context, uuid, app string, forceAfter int64) error {
	units, err := s.applicationUnitNames(ctx, uuid, app)
	if err != nil {
		return err
	}
	// Subordinates too: on their own they leave their scopes and are removed like any unit.
	for _, u := range units {
		if err := s.ForceRemoveUnit(ctx, uuid, u, forceAfter); err != nil {
			return err
		}
	}
	return nil
}

// ForceLeaveRelation takes every unit out of a forced, dying relation's scope; the last one out
// removes it (L-R4).
func (s *State) ForceLeaveRelation(ctx context.Context, uuid string, relID int64) error {
	units, err := s.ScopeUnits(ctx, uuid, relID)
	if err != nil {
		return err
	}
	for _, u := range units {
		if err := ignoreNotFound(s.LeaveScope(ctx, uuid, relID, u)); err != nil {
			return err
		}
	}
	return nil
}

func (s *State) machineUnits(ctx context.Context, uuid, id string) ([]string, error) {
	return s.keysUnder(ctx, machineUnitsPrefix(uuid, id))
}

// ignoreNotFound: something else finished the job first.
func ignoreNotFound(err error) error {
	if errors.Is(err, apierr.NotFound) {
		return nil
	}
	return err
}
