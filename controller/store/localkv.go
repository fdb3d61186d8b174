package store

import (
	"context"
	"errors"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	etcderrors "go.etcd.io/etcd/server/v3/etcdserver/errors"
	mvcctxn "go.etcd.io/etcd/server/v3/etcdserver/txn"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// localKV serves a controller member's reads and writes of its own embedded etcd member by
// function calls, where they went over a loopback TLS gRPC connection (issue 16: encoding,
// encryption and HTTP/2 framing on both sides were a sixth of jujud's CPU). Watches, leases
// and the cluster's calls still use that connection: etcd's in-process watch can deadlock
// when many watches are cancelled at once (newStore). What the connection's client did for
// KV calls is done here too: reads marked WithSerializableReads are made serializable, and a
// call refused because the member has no leader for a moment (an election) is made again,
// reads on any unavailability, as clientv3 retries them.
type localKV struct {
	srv *etcdserver.EtcdServer
	kvs pb.KVServer
}

func newLocalKV(e *embed.Etcd) pb.KVClient {
	return localKV{srv: e.Server, kvs: v3rpc.NewQuotaKVServer(e.Server)}
}

func (l localKV) Range(ctx context.Context, in *pb.RangeRequest, _ ...grpc.CallOption) (*pb.RangeResponse, error) {
	if SerializableReads(ctx) {
		in = serializable(in).(*pb.RangeRequest)
	}
	read := l.kvs.Range
	if uncountable(in) {
		read = l.rangeUncounted
	}
	return retryLocal(ctx, true, func() (*pb.RangeResponse, error) { return read(ctx, in) })
}

// uncountable: a read of at most Limit keys in key order, whose callers look at the keys and
// More, never at Count (the controller's reads with a limit: is anyone left in a scope, the
// next page of a drain). etcd counts every key of the range for Count, so that a read of one
// key of a 100,000-key range visited all of them: every unit leaving a relation's scope did,
// and a large removal was quadratic (issue 16).
func uncountable(in *pb.RangeRequest) bool {
	return in.Limit > 0 && !in.CountOnly && in.Revision == 0 && len(in.RangeEnd) > 0 &&
		mvcctxn.IsDefaultOrdering(in.SortTarget, in.SortOrder) && !mvcctxn.HasRevisionFilters(in)
}

// rangeUncounted is the member's Range without the total count (etcd's RangeStream reads its
// chunks the same way): linearizable unless asked otherwise, More still set.
func (l localKV) rangeUncounted(ctx context.Context, in *pb.RangeRequest) (*pb.RangeResponse, error) {
	if !in.Serializable {
		if err := l.srv.LinearizableReadNotify(ctx); err != nil {
			return nil, grpcError(err)
		}
	}
	resp, _, err := mvcctxn.Range(ctx, l.srv.Logger(), l.srv.KV(), in, false)
	if err != nil {
		return nil, grpcError(err)
	}
	resp.Count = int64(len(resp.Kvs)) // not the range's: uncounted
	return resp, nil
}

// grpcError gives the errors of a read made by function call the form the member's gRPC
// server gives them, which clientv3 and retryLocal know.
func grpcError(err error) error {
	for _, e := range []struct{ server, wire error }{
		{etcderrors.ErrNoLeader, rpctypes.ErrGRPCNoLeader},
		{etcderrors.ErrNotLeader, rpctypes.ErrGRPCNotLeader},
		{etcderrors.ErrLeaderChanged, rpctypes.ErrGRPCLeaderChanged},
		{etcderrors.ErrStopped, rpctypes.ErrGRPCStopped},
		{etcderrors.ErrCanceled, rpctypes.ErrGRPCCanceled},
		{etcderrors.ErrTimeout, rpctypes.ErrGRPCTimeout},
		{etcderrors.ErrTimeoutDueToLeaderFail, rpctypes.ErrGRPCTimeoutDueToLeaderFail},
		{etcderrors.ErrTimeoutDueToConnectionLost, rpctypes.ErrGRPCTimeoutDueToConnectionLost},
		{etcderrors.ErrTimeoutWaitAppliedIndex, rpctypes.ErrGRPCTimeoutWaitAppliedIndex},
		{mvcc.ErrCompacted, rpctypes.ErrGRPCCompacted},
		{mvcc.ErrFutureRev, rpctypes.ErrGRPCFutureRev},
	} {
		if errors.Is(err, e.server) {
			return e.wire
		}
	}
	return err // context errors, as the gRPC server passes them
}

func (l localKV) Put(ctx context.Context, in *pb.PutRequest, _ ...grpc.CallOption) (*pb.PutResponse, error) {
	return retryLocal(ctx, false, func() (*pb.PutResponse, error) { return l.kvs.Put(ctx, in) })
}

func (l localKV) DeleteRange(ctx context.Context, in *pb.DeleteRangeRequest, _ ...grpc.CallOption) (*pb.DeleteRangeResponse, error) {
	return retryLocal(ctx, false, func() (*pb.DeleteRangeResponse, error) { return l.kvs.DeleteRange(ctx, in) })
}

func (l localKV) Txn(ctx context.Context, in *pb.TxnRequest, _ ...grpc.CallOption) (*pb.TxnResponse, error) {
	if SerializableReads(ctx) {
		in = serializable(in).(*pb.TxnRequest)
	}
	readOnly := rangesOnly(in.Success) && rangesOnly(in.Failure)
	return retryLocal(ctx, readOnly, func() (*pb.TxnResponse, error) { return l.kvs.Txn(ctx, in) })
}

func (l localKV) Compact(ctx context.Context, in *pb.CompactionRequest, _ ...grpc.CallOption) (*pb.CompactionResponse, error) {
	return l.kvs.Compact(ctx, in)
}

// retryLocal makes call until it succeeds, fails for good, or ctx ends. Any unavailability is
// worth another try for a read; a write is tried again only when it was refused for want of
// a leader, which means it never reached the log (a timed-out write may have).
func retryLocal[T any](ctx context.Context, read bool, call func() (T, error)) (T, error) {
	wait := 25 * time.Millisecond
	for {
		resp, err := call()
		if err == nil || ctx.Err() != nil {
			return resp, err
		}
		again := errors.Is(err, rpctypes.ErrGRPCNoLeader) || read && status.Code(err) == codes.Unavailable
		if !again {
			return resp, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, err
		case <-t.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// RangeStream is not used by the controller (clientv3's GetStream).
func (l localKV) RangeStream(context.Context, *pb.RangeRequest, ...grpc.CallOption) (pb.KV_RangeStreamClient, error) {
	return nil, status.Error(codes.Unimplemented, "range streams are not served in process")
}
