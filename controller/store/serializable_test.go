package store

import (
	"context"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// The interceptor rewrites what etcd would otherwise serve through the leader, only for a
// marked context, and never touches writes or the caller's own request.
func TestSerializableReadsRewrite(t *testing.T) {
	rng := func() *pb.RequestOp {
		return &pb.RequestOp{Request: &pb.RequestOp_RequestRange{RequestRange: &pb.RangeRequest{Key: []byte("/k")}}}
	}
	put := &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: []byte("/k")}}}
	cmp := []*pb.Compare{{Key: []byte("/k"), Target: pb.Compare_MOD, Result: pb.Compare_EQUAL}}
	tests := []struct {
		name   string
		req    proto.Message
		marked bool
		want   proto.Message // nil: sent as it is
	}{
		{"range", &pb.RangeRequest{Key: []byte("/k")}, true, &pb.RangeRequest{Key: []byte("/k"), Serializable: true}},
		{"range unmarked", &pb.RangeRequest{Key: []byte("/k")}, false, nil},
		{"txn of ranges with compares", &pb.TxnRequest{Compare: cmp, Success: []*pb.RequestOp{rng(), rng()}, Failure: []*pb.RequestOp{rng()}}, true,
			&pb.TxnRequest{Compare: cmp, Success: []*pb.RequestOp{serial(rng()), serial(rng())}, Failure: []*pb.RequestOp{serial(rng())}}},
		{"txn with a put", &pb.TxnRequest{Compare: cmp, Success: []*pb.RequestOp{rng(), put}}, true, nil},
		{"txn with a put on failure", &pb.TxnRequest{Success: []*pb.RequestOp{rng()}, Failure: []*pb.RequestOp{put}}, true, nil},
		{"txn unmarked", &pb.TxnRequest{Success: []*pb.RequestOp{rng()}}, false, nil},
		{"member list", &pb.MemberListRequest{Linearizable: true}, true, &pb.MemberListRequest{}},
		{"put", &pb.PutRequest{Key: []byte("/k")}, true, nil},
		{"delete", &pb.DeleteRangeRequest{Key: []byte("/k")}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.marked {
				ctx = WithSerializableReads(ctx)
			}
			before := proto.Clone(tt.req)
			var sent any
			invoker := func(_ context.Context, _ string, req, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				sent = req
				return nil
			}
			if err := serializableReads(ctx, "/etcdserverpb.KV/X", tt.req, nil, nil, invoker); err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == nil {
				want = before
			}
			if !proto.Equal(sent.(proto.Message), want) {
				t.Errorf("sent %v, want %v", sent, want)
			}
			if !proto.Equal(tt.req, before) {
				t.Errorf("the caller's request changed to %v", tt.req)
			}
		})
	}
}

func serial(op *pb.RequestOp) *pb.RequestOp {
	op.GetRequestRange().Serializable = true
	return op
}

// A marked context reads through the real client and server: a Get, a read-only Txn and the
// member list; writes with a marked context still happen.
func TestSerializableReadsOnEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	marked := WithSerializableReads(ctx)
	if _, err := s.Client.Put(marked, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client.Get(marked, "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("serializable get: %v %v", resp, err)
	}
	txn, err := s.Client.Txn(marked).
		If(clientv3.Compare(clientv3.ModRevision("/k"), "=", resp.Kvs[0].ModRevision)).
		Then(clientv3.OpGet("/k"), clientv3.OpGet("/none")).Commit()
	if err != nil || !txn.Succeeded || len(txn.Responses[0].GetResponseRange().Kvs) != 1 {
		t.Fatalf("serializable txn: %v %v", txn, err)
	}
	members, err := s.Client.MemberList(marked)
	if err != nil || len(members.Members) != 1 {
		t.Fatalf("member list: %v %v", members, err)
	}
}

// With the quorum lost, a marked read is still answered from the member's copy while an
// unmarked one is not. The quorum is lost the cheap way: the single member adds a second
// voting member that never starts, so one of two is no majority.
func TestSerializableReadsWithoutQuorum(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	ghost, err := freeLoopbackURL()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.etcd.Server.Cfg.StrictReconfigCheck = false // else etcd refuses a member it cannot reach
	if _, err := s.etcd.Server.AddMember(ctx, *membership.NewMember("ghost", types.URLs{ghost}, "", &now)); err != nil {
		t.Fatal(err)
	}
	// Served at once when they work; the deadline only ends a failing test sooner.
	readCtx, cancelRead := context.WithTimeout(ctx, 5*time.Second)
	defer cancelRead()
	marked := WithSerializableReads(readCtx)
	resp, err := s.Client.Get(marked, "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("serializable get without quorum: %v %v", resp, err)
	}
	if _, err := s.Client.Txn(marked).Then(clientv3.OpGet("/k")).Commit(); err != nil {
		t.Fatalf("serializable txn without quorum: %v", err)
	}
	if members, err := s.Client.MemberList(marked); err != nil || len(members.Members) != 2 {
		t.Fatalf("member list without quorum: %v %v", members, err)
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	if _, err := s.Client.Get(short, "/k"); err == nil {
		t.Fatal("a linearizable read was answered without a quorum")
	}
}
