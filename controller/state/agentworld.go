package state

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/names"
)

// UnitWorld is what a unit agent reads on each wake-up: its unit, its application (nil once
// gone), the relations that concern the unit, and its task queue when asked for. Read in one
// transaction (issue 16: three calls and four reads of the store per wake-up before).
type UnitWorld struct {
	Unit        *storepb.Unit
	Application *AgentApplication
	Relations   []UnitRelation
	Tasks       []*storepb.Task
}

// ReadUnitWorld reads a unit's world at one revision; membersOf is as UnitRelations takes it.
func (s *State) ReadUnitWorld(ctx context.Context, uuid, unitName string, membersOf func(endpoint string) bool, withTasks bool) (*UnitWorld, error) {
	app, err := names.UnitApplication(unitName)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "invalid unit name %q", unitName)
	}
	ops := unitRelationsOps(uuid, unitName)
	appAt := len(ops)
	ops = append(ops, agentApplicationOps(uuid, app)...)
	tasksAt := len(ops)
	if withTasks {
		ops = append(ops, clientv3.OpGet(taskQueuePrefix(uuid, unitName), clientv3.WithPrefix()))
	}
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("reading the world of unit %q: %w", unitName, err)
	}
	rs := resp.Responses
	w := &UnitWorld{}
	if w.Unit, w.Relations, err = s.decodeUnitRelations(ctx, uuid, unitName, resp, membersOf); err != nil {
		return nil, err
	}
	w.Application, err = s.decodeAgentApplication(ctx, uuid, app, rs[appAt:tasksAt])
	if err != nil && !errors.Is(err, apierr.NotFound) {
		return nil, err
	}
	if withTasks {
		if w.Tasks, err = decodeTasks(rs[tasksAt].GetResponseRange().GetKvs()); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// MachineWorld is what a machine agent reads on a wake-up: its machine when asked for, the
// principal units assigned to it, and its task queue when asked for.
type MachineWorld struct {
	Machine *storepb.Machine
	Units   []*storepb.Unit
	Tasks   []*storepb.Task
}

// ReadMachineWorld reads a machine's world at one revision, in two reads of the store (the
// units' index, then the units) where the separate calls took four.
func (s *State) ReadMachineWorld(ctx context.Context, uuid, id string, withMachine, withTasks bool) (*MachineWorld, error) {
	ops := []clientv3.Op{clientv3.OpGet(machineUnitsPrefix(uuid, id), clientv3.WithPrefix(), clientv3.WithKeysOnly())}
	if withMachine {
		ops = append(ops, clientv3.OpGet(machineKey(uuid, id)))
	}
	if withTasks {
		ops = append(ops, clientv3.OpGet(taskQueuePrefix(uuid, id), clientv3.WithPrefix()))
	}
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("reading the world of machine %s: %w", id, err)
	}
	rs := resp.Responses
	w := &MachineWorld{}
	if withMachine {
		kvs := rs[1].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			return nil, apierr.Errorf(apierr.NotFound, "machine %s not found", id)
		}
		w.Machine = &storepb.Machine{}
		if err := unmarshal(kvs[0], w.Machine); err != nil {
			return nil, err
		}
	}
	if withTasks {
		if w.Tasks, err = decodeTasks(rs[len(rs)-1].GetResponseRange().GetKvs()); err != nil {
			return nil, err
		}
	}
	if w.Units, err = s.machineUnitsAt(ctx, uuid, id, rs[0].GetResponseRange().GetKvs(), resp.Header.Revision); err != nil {
		return nil, err
	}
	return w, nil
}
