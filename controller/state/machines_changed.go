package state

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/storepb"
)

// Reads for the workers that follow a model by its changes (the provisioner): what one event
// names, read alone, so that the cost of a change does not grow with the model (issue 16).

// MachinesByID reads the named machines of a model, in batches that keep each read under
// etcd's operation limit; a machine that does not exist is left out. Each machine is read as
// it is now: the caller acts on its current state, not on the event that named it.
func (s *State) MachinesByID(ctx context.Context, uuid string, ids []string) ([]*storepb.Machine, error) {
	return getDocs(ctx, s, ids, func(id string) string { return machineKey(uuid, id) }, func() *storepb.Machine { return &storepb.Machine{} })
}

// UnitsByName reads the named units of a model as MachinesByID reads machines.
func (s *State) UnitsByName(ctx context.Context, uuid string, names []string) ([]*storepb.Unit, error) {
	return getDocs(ctx, s, names, func(name string) string { return unitKey(uuid, name) }, func() *storepb.Unit { return &storepb.Unit{} })
}

// ApplicationsByName reads the named applications of a model as MachinesByID reads machines.
func (s *State) ApplicationsByName(ctx context.Context, uuid string, names []string) ([]*storepb.Application, error) {
	return getDocs(ctx, s, names, func(name string) string { return applicationKey(uuid, name) }, func() *storepb.Application { return &storepb.Application{} })
}

func getDocs[T proto.Message](ctx context.Context, s *State, ids []string, key func(string) string, newDoc func() T) ([]T, error) {
	out := make([]T, 0, len(ids))
	for start := 0; start < len(ids); start += maxOps {
		batch := ids[start:min(start+maxOps, len(ids))]
		ops := make([]clientv3.Op, 0, len(batch))
		for _, id := range batch {
			ops = append(ops, clientv3.OpGet(key(id)))
		}
		resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, fmt.Errorf("reading %d documents: %w", len(batch), err)
		}
		for _, r := range resp.Responses {
			for _, kv := range r.GetResponseRange().Kvs {
				doc := newDoc()
				if err := unmarshal(kv, doc); err != nil {
					return nil, err
				}
				out = append(out, doc)
			}
		}
	}
	return out, nil
}

// ApplicationMachineIDs returns the machines that host an application's units, each once:
// its principals' machines, or for a subordinate application its principals'. It reads that
// application's units (and a subordinate's principals), never the model's.
func (s *State) ApplicationMachineIDs(ctx context.Context, uuid, app string) ([]string, error) {
	resp, err := s.kv.Get(ctx, applicationUnitsPrefix(uuid, app), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing units of application %s: %w", app, err)
	}
	var out, principals []string
	seen := map[string]bool{}
	add := func(machine string) {
		if machine != "" && !seen[machine] {
			seen[machine] = true
			out = append(out, machine)
		}
	}
	for _, kv := range resp.Kvs {
		u := &storepb.Unit{}
		if err := unmarshal(kv, u); err != nil {
			return nil, err
		}
		if u.Principal != "" {
			principals = append(principals, u.Principal)
		} else {
			add(u.MachineId)
		}
	}
	if len(principals) > 0 {
		units, err := s.UnitsByName(ctx, uuid, principals)
		if err != nil {
			return nil, err
		}
		for _, u := range units {
			add(u.MachineId)
		}
	}
	return out, nil
}

// MachineUnitsIndexPrefix is the prefix of every machine's unit index in a model: a key under
// it names a machine and one of its principal units (MachineOfUnitIndexKey); its value is the
// unit's life. A unit assigned or removed creates or deletes its key, which is what frees a
// machine (EnsureMachineDead).
func MachineUnitsIndexPrefix(uuid string) string { return ModelPrefix(uuid) + "machineunits/" }

// MachineOfUnitIndexKey returns the machine a key under MachineUnitsIndexPrefix(uuid) belongs
// to. A unit's name ("app/N") holds one slash and a machine id may hold several (containers),
// so the machine is what precedes the unit's two segments.
func MachineOfUnitIndexKey(uuid, key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, MachineUnitsIndexPrefix(uuid))
	if !ok {
		return "", false
	}
	unitSlash := strings.LastIndexByte(rest, '/')
	if unitSlash <= 0 {
		return "", false
	}
	machineEnd := strings.LastIndexByte(rest[:unitSlash], '/')
	if machineEnd <= 0 {
		return "", false
	}
	return rest[:machineEnd], true
}
