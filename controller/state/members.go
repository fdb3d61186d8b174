package state

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
)

// Controller members (enable-ha). Each jujud of the controller has a record under
// membersPrefix and, while it runs, a heartbeat under membersAlivePrefix on a lease it keeps
// alive: a member killed outright loses its heartbeat when the lease runs out.
const (
	membersPrefix      = "/juju/members/"
	membersAlivePrefix = "/juju/members-alive/"
	memberSeqKey       = "/juju/member-seq"
	controllerCAKey    = "/juju/controller-ca"
)

// MemberAliveKey is the key of a member's heartbeat, which the member puts on its own lease.
func MemberAliveKey(id string) string { return membersAlivePrefix + id }

func memberKey(id string) string { return membersPrefix + id }

// NextMemberID reserves the next member id: "0" is the bootstrap member, then 1, 2, ... never
// reused, so a removed member's leftovers can never pass for a new member's.
func (s *State) NextMemberID(ctx context.Context) (string, error) {
	var id string
	err := s.run(ctx, "reserving a controller member id", func(ctx context.Context, r *reader) (*writes, error) {
		raw, _, err := r.getRaw(ctx, memberSeqKey)
		if err != nil {
			return nil, err
		}
		n := int64(0)
		if raw != "" {
			if n, err = strconv.ParseInt(raw, 10, 64); err != nil {
				return nil, fmt.Errorf("member sequence %q: %w", raw, err)
			}
		}
		id = strconv.FormatInt(n, 10)
		w := &writes{}
		w.putRaw(memberSeqKey, strconv.FormatInt(n+1, 10))
		return w, nil
	})
	return id, err
}

// PutMember records (or updates) a member.
func (s *State) PutMember(ctx context.Context, m *storepb.ControllerMember) error {
	if m.GetId() == "" {
		return apierr.Errorf(apierr.NotValid, "controller member without an id")
	}
	data, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, memberKey(m.GetId()), string(data)); err != nil {
		return fmt.Errorf("recording controller member %s: %w", m.GetId(), err)
	}
	return nil
}

// Member reads one member's record.
func (s *State) Member(ctx context.Context, id string) (*storepb.ControllerMember, error) {
	resp, err := s.kv.Get(ctx, memberKey(id))
	if err != nil {
		return nil, fmt.Errorf("reading controller member %s: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "controller member %q not found", id)
	}
	m := &storepb.ControllerMember{}
	if err := proto.Unmarshal(resp.Kvs[0].Value, m); err != nil {
		return nil, fmt.Errorf("decoding controller member %s: %w", id, err)
	}
	return m, nil
}

// MemberState is a member's record with its heartbeat.
type MemberState struct {
	*storepb.ControllerMember
	// Alive: the member's heartbeat lease is live. Message is what the member last said about
	// itself ("" when healthy).
	Alive   bool
	Message string
}

// Members lists the members, in id order, with their heartbeats, in one read.
func (s *State) Members(ctx context.Context) ([]MemberState, error) {
	resp, err := s.kv.Txn(ctx).Then(
		clientv3.OpGet(membersPrefix, clientv3.WithPrefix()),
		clientv3.OpGet(membersAlivePrefix, clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("listing controller members: %w", err)
	}
	alive := map[string]string{}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		alive[string(kv.Key[len(membersAlivePrefix):])] = string(kv.Value)
	}
	var out []MemberState
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		m := &storepb.ControllerMember{}
		if err := proto.Unmarshal(kv.Value, m); err != nil {
			return nil, fmt.Errorf("decoding controller member %s: %w", kv.Key, err)
		}
		msg, ok := alive[m.GetId()]
		out = append(out, MemberState{ControllerMember: m, Alive: ok, Message: msg})
	}
	slices.SortFunc(out, func(a, b MemberState) int {
		x, _ := strconv.Atoi(a.GetId())
		y, _ := strconv.Atoi(b.GetId())
		return x - y
	})
	return out, nil
}

// DeleteMember removes a member's record and heartbeat.
func (s *State) DeleteMember(ctx context.Context, id string) error {
	_, err := s.kv.Txn(ctx).Then(clientv3.OpDelete(memberKey(id)), clientv3.OpDelete(MemberAliveKey(id))).Commit()
	if err != nil {
		return fmt.Errorf("removing controller member %s: %w", id, err)
	}
	return nil
}

// PutControllerCA stores the CA unless one is stored already, and returns the stored one: the
// first member to start writes it, every later one reads it.
func (s *State) PutControllerCA(ctx context.Context, ca *storepb.ControllerCA) (*storepb.ControllerCA, error) {
	data, err := proto.Marshal(ca)
	if err != nil {
		return nil, err
	}
	resp, err := s.kv.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(controllerCAKey), "=", 0)).
		Then(clientv3.OpPut(controllerCAKey, string(data))).
		Else(clientv3.OpGet(controllerCAKey)).Commit()
	if err != nil {
		return nil, fmt.Errorf("storing the controller CA: %w", err)
	}
	if resp.Succeeded {
		return ca, nil
	}
	stored := &storepb.ControllerCA{}
	if err := proto.Unmarshal(resp.Responses[0].GetResponseRange().Kvs[0].Value, stored); err != nil {
		return nil, fmt.Errorf("decoding the controller CA: %w", err)
	}
	return stored, nil
}

// ControllerCA reads the stored CA (NotFound before the first member stored it).
func (s *State) ControllerCA(ctx context.Context) (*storepb.ControllerCA, error) {
	resp, err := s.kv.Get(ctx, controllerCAKey)
	if err != nil {
		return nil, fmt.Errorf("reading the controller CA: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "no controller CA in the store")
	}
	ca := &storepb.ControllerCA{}
	if err := proto.Unmarshal(resp.Kvs[0].Value, ca); err != nil {
		return nil, fmt.Errorf("decoding the controller CA: %w", err)
	}
	return ca, nil
}
