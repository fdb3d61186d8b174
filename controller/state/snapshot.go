package state

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

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

	// blockers is Blockers, worked out once: a shared snapshot answers many status calls.
	blockersOnce sync.Once
	blockers     Blockers
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

// sharedKeep is how long a shared snapshot is kept after its last use: long enough for a
// script that polls status every second or two, short enough that an idle controller does not
// carry a large model twice.
var sharedKeep = 20 * time.Second

// sharedSnapshots holds, per model, the snapshot SharedSnapshot last read.
type sharedSnapshots struct {
	mu    sync.Mutex
	snaps map[string]*sharedSnapshot
}

type sharedSnapshot struct {
	snap *Snapshot
	drop *time.Timer
}

// SharedSnapshot is Snapshot, read again only when the store has changed: while its revision
// is the one the last snapshot of the model was read at, that same snapshot is returned. A
// status of 10,000 units spends a third of the controller's work reading and decoding the
// model, and scripts (jubilant's wait, dashboards) ask for it every second or so while nothing
// changes. The snapshot is shared: callers must not modify it.
func (s *State) SharedSnapshot(ctx context.Context, uuid string) (*Snapshot, error) {
	rev, err := s.Revision(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading model %q: %w", uuid, err)
	}
	if snap := s.shared.get(uuid, rev); snap != nil {
		return snap, nil
	}
	snap, err := s.Snapshot(ctx, uuid)
	if err != nil {
		return nil, err
	}
	s.shared.put(uuid, snap)
	return snap, nil
}

// get returns the model's kept snapshot if it was read at rev, and keeps it a while longer.
func (c *sharedSnapshots) get(uuid string, rev int64) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.snaps[uuid]
	if e == nil || e.snap.Revision != rev {
		return nil
	}
	e.drop.Reset(sharedKeep)
	return e.snap
}

// put keeps snap as the model's, unless a newer one is kept already (two status calls crossed).
func (c *sharedSnapshots) put(uuid string, snap *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snaps == nil {
		c.snaps = map[string]*sharedSnapshot{}
	}
	if e := c.snaps[uuid]; e != nil {
		if e.snap.Revision > snap.Revision {
			return
		}
		e.snap = snap
		e.drop.Reset(sharedKeep)
		return
	}
	e := &sharedSnapshot{snap: snap}
	e.drop = time.AfterFunc(sharedKeep, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.snaps[uuid] == e {
			delete(c.snaps, uuid)
		}
	})
	c.snaps[uuid] = e
}
