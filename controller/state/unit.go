package state

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
)

// Unit returns a unit document.
func (s *State) Unit(ctx context.Context, uuid, name string) (*storepb.Unit, error) {
	u := &storepb.Unit{}
	ok, err := s.getDoc(ctx, unitKey(uuid, name), u)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", name)
	}
	return u, nil
}

func (s *State) updateUnit(ctx context.Context, uuid, name, what string, fn func(u *storepb.Unit) error) error {
	return s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		u := &storepb.Unit{}
		ok, err := r.get(ctx, unitKey(uuid, name), u)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "unit %q not found", name)
		}
		if err := fn(u); err != nil {
			return nil, err
		}
		w := &writes{}
		w.put(unitKey(uuid, name), u)
		return w, nil
	})
}

// SetUnitPassword sets the unit agent's credential.
func (s *State) SetUnitPassword(ctx context.Context, uuid, name, passwordHash string) error {
	return s.updateUnit(ctx, uuid, name, "setting unit password", func(u *storepb.Unit) error {
		u.PasswordHash = passwordHash
		return nil
	})
}

// UnitStatus is a status change; nil fields are left alone.
type UnitStatus struct {
	Agent, Workload *storepb.Status
	PublicAddress   string
}

// SetUnitStatus updates a unit's agent and workload status.
func (s *State) SetUnitStatus(ctx context.Context, uuid, name string, st UnitStatus) error {
	now := s.now().UnixNano()
	return s.updateUnit(ctx, uuid, name, "setting unit status", func(u *storepb.Unit) error {
		if st.Agent != nil {
			u.AgentStatus = &storepb.Status{Status: st.Agent.Status, Message: st.Agent.Message, Since: now}
		}
		if st.Workload != nil {
			u.WorkloadStatus = &storepb.Status{Status: st.Workload.Status, Message: st.Workload.Message, Since: now}
		}
		if st.PublicAddress != "" {
			u.PublicAddress = st.PublicAddress
		}
		return nil
	})
}
