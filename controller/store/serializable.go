package store

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// clientDialOptions are the gRPC options of every etcd client the controller makes.
//
// A chained interceptor, not grpc.WithUnaryInterceptor: clientv3 sets its own (retries) with
// that option, and a second one would replace it.
func clientDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(serializableReads)}
}

type serializableKey struct{}

// WithSerializableReads marks ctx so that the store's reads made with it are served by the
// member the client talks to from its own copy, without asking the cluster's leader: they
// still answer when that member has lost the quorum, and may then be stale. Writes are not
// changed (they need the quorum whatever the context says). The API server uses this for the
// calls it serves while the controller is degraded.
func WithSerializableReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, serializableKey{}, true)
}

// SerializableReads reports whether ctx was marked by WithSerializableReads.
func SerializableReads(ctx context.Context) bool {
	marked, _ := ctx.Value(serializableKey{}).(bool)
	return marked
}

// serializableReads rewrites, for a marked context, the read requests of an etcd client into
// their serializable form: a Range, a Txn of Ranges only (etcd serves a Txn locally only when
// every one of its operations is a serializable Range, and any comparisons), and MemberList.
// The caller's request is left as it is: clientv3 retries with it.
func serializableReads(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if SerializableReads(ctx) {
		req = serializable(req)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// serializable returns req's serializable form, or req itself when it has none.
func serializable(req any) any {
	switch r := req.(type) {
	case *pb.RangeRequest:
		if r.Serializable {
			return r
		}
		c := proto.Clone(r).(*pb.RangeRequest)
		c.Serializable = true
		return c
	case *pb.TxnRequest:
		if !rangesOnly(r.Success) || !rangesOnly(r.Failure) {
			return r
		}
		c := proto.Clone(r).(*pb.TxnRequest)
		for _, ops := range [][]*pb.RequestOp{c.Success, c.Failure} {
			for _, op := range ops {
				op.GetRequestRange().Serializable = true
			}
		}
		return c
	case *pb.MemberListRequest:
		if !r.Linearizable {
			return r
		}
		c := proto.Clone(r).(*pb.MemberListRequest)
		c.Linearizable = false
		return c
	}
	return req
}

func rangesOnly(ops []*pb.RequestOp) bool {
	for _, op := range ops {
		if op.GetRequestRange() == nil {
			return false
		}
	}
	return true
}
