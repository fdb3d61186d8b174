package state

import (
	"context"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/status"
)

// MachineParams describe a machine added on its own.
type MachineParams struct {
	Base        string
	Constraints string
}

// AddMachine adds one machine (AddMachines).
func (s *State) AddMachine(ctx context.Context, uuid string, p MachineParams) (string, error) {
	ids, err := s.AddMachines(ctx, uuid, []MachineParams{p})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// CheckMachineCount refuses a call for no machines or for more than limits.MaxMachinesPerCall.
func CheckMachineCount(n int) error {
	if n < 1 {
		return apierr.Errorf(apierr.NotValid, "must add at least one machine")
	}
	if n > limits.MaxMachinesPerCall {
		return apierr.Errorf(apierr.NotValid, "cannot add %d machines: at most %d per call", n, limits.MaxMachinesPerCall)
	}
	return nil
}

// AddMachines adds machines with the host-units job, all in one transaction: a refused or
// interrupted call adds none (at most limits.MaxMachinesPerCall). Their constraints are the
// model's merged with the given ones (L-C3); their base defaults to the model's default base,
// then the controller's model default, then the default LTS.
func (s *State) AddMachines(ctx context.Context, uuid string, params []MachineParams) ([]string, error) {
	if err := CheckMachineCount(len(params)); err != nil {
		return nil, err
	}
	cons := make([]string, len(params))
	for i, p := range params {
		c, err := canonicalConstraints(p.Constraints)
		if err != nil {
			return nil, err
		}
		cons[i] = c
	}
	var ids []string
	err := s.run(ctx, "cannot add machine", func(ctx context.Context, r *reader) (*writes, error) {
		m, err := r.model(ctx, uuid)
		if err != nil {
			return nil, err
		}
		defaultBase := m.DefaultBase
		for _, p := range params {
			if p.Base != "" || defaultBase != "" {
				continue
			}
			c := &storepb.Controller{}
			if _, err := r.get(ctx, controllerKey, c); err != nil {
				return nil, err
			}
			if defaultBase = c.ModelDefaults[modelconfig.DefaultBase]; defaultBase == "" {
				defaultBase = base.DefaultLTS.DisplayString()
			}
			break
		}
		w := &writes{bulk: true}
		ids = ids[:0]
		for i, p := range params {
			b := p.Base
			if b == "" {
				b = defaultBase
			}
			parsed, err := base.Parse(b)
			if err != nil {
				return nil, apierr.Errorf(apierr.NotValid, "%v", err)
			}
			merged, err := mergeConstraints(m.Constraints, cons[i])
			if err != nil {
				return nil, err
			}
			id, err := r.newMachine(ctx, w, s, uuid, parsed.DisplayString(), merged)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// newMachine writes a new alive machine, waiting for the provisioner.
func (r *reader) newMachine(ctx context.Context, w *writes, s *State, uuid, base, cons string) (string, error) {
	seq, err := r.nextSequence(ctx, uuid, "machine")
	if err != nil {
		return "", err
	}
	id := strconv.FormatInt(seq, 10)
	w.put(machineKey(uuid, id), &storepb.Machine{
		Id: id, Life: string(life.Alive), Base: base, Constraints: cons, Jobs: []string{JobHostUnits},
		AgentStatus:    s.status(string(status.Pending), ""),
		InstanceStatus: s.status(string(status.Pending), ""),
	})
	return id, nil
}

// Machine returns a machine document.
func (s *State) Machine(ctx context.Context, uuid, id string) (*storepb.Machine, error) {
	m := &storepb.Machine{}
	ok, err := s.getDoc(ctx, machineKey(uuid, id), m)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "machine %s not found", id)
	}
	return m, nil
}

// Machines lists a model's machines.
func (s *State) Machines(ctx context.Context, uuid string) ([]*storepb.Machine, error) {
	resp, err := s.kv.Get(ctx, ModelPrefix(uuid)+"machines/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing machines: %w", err)
	}
	out := make([]*storepb.Machine, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		m := &storepb.Machine{}
		if err := unmarshal(kv, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// updateMachine applies fn to a machine in one guarded transaction.
func (s *State) updateMachine(ctx context.Context, uuid, id, what string, fn func(m *storepb.Machine) error) error {
	return s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		m := &storepb.Machine{}
		ok, err := r.get(ctx, machineKey(uuid, id), m)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "machine %s not found", id)
		}
		if err := fn(m); err != nil {
			return nil, err
		}
		w := &writes{}
		w.put(machineKey(uuid, id), m)
		return w, nil
	})
}

// SetMachineStatus sets the machine agent's status.
func (s *State) SetMachineStatus(ctx context.Context, uuid, id, value, message string) error {
	return s.updateMachine(ctx, uuid, id, "setting machine status", func(m *storepb.Machine) error {
		m.AgentStatus = s.status(value, message)
		return nil
	})
}

// Instance is what the provider reports for a started instance.
type Instance struct {
	ID, Hardware, DNSName, Hostname string
}

// SetProvisioned records a started instance and the agent's credential. Only an alive machine
// without an instance can be provisioned.
func (s *State) SetProvisioned(ctx context.Context, uuid, id string, inst Instance, passwordHash string) error {
	return s.updateMachine(ctx, uuid, id, "setting machine instance", func(m *storepb.Machine) error {
		if m.Life != string(life.Alive) {
			return apierr.Errorf(apierr.NotAlive, "machine %s is not alive", id)
		}
		if m.InstanceId != "" {
			return apierr.Errorf(apierr.AlreadyExists, "machine %s already provisioned", id)
		}
		m.InstanceId = inst.ID
		m.Hardware = inst.Hardware
		m.DnsName = inst.DNSName
		m.Hostname = inst.Hostname
		m.PasswordHash = passwordHash
		m.ProvisioningError = ""
		m.InstanceStatus = s.status(string(status.Running), "Running")
		return nil
	})
}

// SetProvisioningError records why an instance could not be started (L-M5): no instance id,
// an error status with the reason, visible in status. As in Juju, the error is the instance's
// ("provisioning error"); the machine agent, which never started, stays pending.
func (s *State) SetProvisioningError(ctx context.Context, uuid, id, reason string) error {
	return s.updateMachine(ctx, uuid, id, "setting provisioning error", func(m *storepb.Machine) error {
		m.InstanceId = ""
		m.ProvisioningError = reason
		m.AgentStatus = s.status(string(status.Pending), "")
		m.InstanceStatus = s.status(string(status.ProvisioningError), reason)
		return nil
	})
}

// MachineUnits returns the principal units assigned to a machine, read at one revision.
func (s *State) MachineUnits(ctx context.Context, uuid, id string) ([]*storepb.Unit, error) {
	idx, err := s.kv.Get(ctx, machineUnitsPrefix(uuid, id), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("listing units of machine %s: %w", id, err)
	}
	return s.machineUnitsAt(ctx, uuid, id, idx.Kvs, idx.Header.Revision)
}

// machineUnitsAt reads the units of a machine's index (its keys, read at rev) as of rev.
func (s *State) machineUnitsAt(ctx context.Context, uuid, id string, idx []*mvccpb.KeyValue, rev int64) ([]*storepb.Unit, error) {
	if len(idx) == 0 {
		return nil, nil
	}
	ops := make([]clientv3.Op, 0, len(idx))
	prefix := machineUnitsPrefix(uuid, id)
	for _, kv := range idx {
		ops = append(ops, clientv3.OpGet(unitKey(uuid, string(kv.Key)[len(prefix):]), clientv3.WithRev(rev)))
	}
	var out []*storepb.Unit
	// Batches keep each read transaction under etcd's operation limit.
	for start := 0; start < len(ops); start += maxOps {
		end := min(start+maxOps, len(ops))
		resp, err := s.kv.Txn(ctx).Then(ops[start:end]...).Commit()
		if err != nil {
			return nil, fmt.Errorf("reading units of machine %s: %w", id, err)
		}
		for _, r := range resp.Responses {
			for _, kv := range r.GetResponseRange().Kvs {
				u := &storepb.Unit{}
				if err := unmarshal(kv, u); err != nil {
					return nil, err
				}
				out = append(out, u)
			}
		}
	}
	return out, nil
}
