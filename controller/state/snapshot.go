package state

import (
	"context"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
)

// Snapshot is a whole model as of one store revision.
type Snapshot struct {
	Revision     int64
	Model        *storepb.Model
	Machines     []*storepb.Machine
	Applications []*storepb.Application
	Units        []*storepb.Unit
	Relations    []*storepb.Relation
	Charms       map[string]*storepb.Charm
	// Leaders maps each application that has a leader to its leading unit (leases/<app>).
	Leaders map[string]string
}

// Snapshot reads a model with one range read: one consistent view, never a query per entity.
func (s *State) Snapshot(ctx context.Context, uuid string) (*Snapshot, error) {
	prefix := ModelPrefix(uuid)
	// One read-only transaction of several ranges is one revision, and skips the index and
	// sequence keys status has no use for.
	var ops []clientv3.Op
	for _, kind := range []string{"model", "machines/", "applications/", "units/", "relations/", "charms/", "leases/"} {
		ops = append(ops, clientv3.OpGet(prefix+kind, clientv3.WithPrefix()))
	}
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("reading model %q: %w", uuid, err)
	}
	snap := &Snapshot{Revision: resp.Header.Revision, Charms: map[string]*storepb.Charm{}, Leaders: map[string]string{}}
	var kvs []*mvccpb.KeyValue
	for _, r := range resp.Responses {
		kvs = append(kvs, r.GetResponseRange().Kvs...)
	}
	for _, kv := range kvs {
		rest := string(kv.Key)[len(prefix):]
		kind, _, _ := strings.Cut(rest, "/")
		var msg proto.Message
		switch kind {
		case "model":
			snap.Model = &storepb.Model{}
			msg = snap.Model
		case "machines":
			m := &storepb.Machine{}
			snap.Machines = append(snap.Machines, m)
			msg = m
		case "applications":
			a := &storepb.Application{}
			snap.Applications = append(snap.Applications, a)
			msg = a
		case "units":
			u := &storepb.Unit{}
			snap.Units = append(snap.Units, u)
			msg = u
		case "relations":
			r := &storepb.Relation{}
			snap.Relations = append(snap.Relations, r)
			msg = r
		case "charms":
			c := &storepb.Charm{}
			snap.Charms[rest[len("charms/"):]] = c
			msg = c
		case "leases":
			snap.Leaders[rest[len("leases/"):]] = string(kv.Value)
			continue
		default:
			continue
		}
		if err := unmarshal(kv, msg); err != nil {
			return nil, err
		}
	}
	if snap.Model == nil {
		return nil, apierr.Errorf(apierr.NotFound, "model %q not found", uuid)
	}
	return snap, nil
}

func unmarshal(kv *mvccpb.KeyValue, msg proto.Message) error {
	if err := proto.Unmarshal(kv.Value, msg); err != nil {
		return fmt.Errorf("decoding %s: %w", kv.Key, err)
	}
	return nil
}
