package client

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// MetadataDegraded is the response header of a call that a degraded controller served: the
// member that answered has lost its store's quorum, so it refuses writes (apierr.NoQuorum) and
// answers reads from its own copy, which may be stale. The value says why.
const MetadataDegraded = "x-juju-degraded"

// degradedReport carries Config.OnDegraded, as a call option, to the connection's
// interceptors: connections are shared between clients (NewFromConn), callbacks are not.
type degradedReport struct {
	grpc.EmptyCallOption
	report func(reason string)
}

func reportOf(opts []grpc.CallOption) func(string) {
	for _, o := range opts {
		if r, ok := o.(degradedReport); ok {
			return r.report
		}
	}
	return nil
}

func reportHeader(md metadata.MD, report func(string)) {
	if v := md.Get(MetadataDegraded); len(v) > 0 && v[0] != "" {
		report(v[0])
	}
}

type quietKey struct{}

// withoutDegradedReport keeps a call's degraded header unreported: Dial's login check, which
// shows the caller nothing. A command that then writes gets NoQuorum, whose message says it
// all; one that reads reports the header with its own calls.
func withoutDegradedReport(ctx context.Context) context.Context {
	return context.WithValue(ctx, quietKey{}, true)
}

// reportDegradedUnary reads the header of every unary call whose client has an OnDegraded.
func reportDegradedUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	report := reportOf(opts)
	if report == nil || ctx.Value(quietKey{}) != nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var md metadata.MD
	err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&md))...)
	reportHeader(md, report)
	return err
}

// reportDegradedStream reads the header of every stream whose client has an OnDegraded, when
// the caller first reads the stream or its header: before the caller sees any of its data.
func reportDegradedStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	report := reportOf(opts)
	if err != nil || report == nil {
		return cs, err
	}
	return &reportingStream{ClientStream: cs, report: report}, nil
}

type reportingStream struct {
	grpc.ClientStream
	report func(string)
	once   sync.Once
}

func (s *reportingStream) Header() (metadata.MD, error) {
	md, err := s.ClientStream.Header()
	s.once.Do(func() { reportHeader(md, s.report) })
	return md, err
}

func (s *reportingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	// Once RecvMsg has returned, the header has come (or the stream has ended): no wait.
	s.once.Do(func() {
		md, _ := s.ClientStream.Header()
		reportHeader(md, s.report)
	})
	return err
}
