package client

import (
	"context"
	"crypto/tls"
	"net"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// startDegradedServer runs the fake controller behind interceptors that mark every answer
// with the degraded header, as a controller without quorum does for the reads it serves.
func startDegradedServer(t *testing.T, ca testCA, reason string) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	md := metadata.Pairs(MetadataDegraded, reason)
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.server}})),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			_ = grpc.SetHeader(ctx, md)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			_ = ss.SetHeader(md)
			return h(srv, ss)
		}))
	fake := &fakeController{}
	jujupb.RegisterControllerServiceServer(srv, fake)
	jujupb.RegisterStatusServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

type reports struct {
	mu  sync.Mutex
	got []string
}

func (r *reports) add(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, reason)
}

// take returns what was reported since the last take.
func (r *reports) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// OnDegraded hears of every call a degraded controller answered, unary or stream, and only
// its own client's calls on a shared connection.
func TestOnDegradedReportsEveryCall(t *testing.T) {
	ca := newTestCA(t)
	why := "this controller member cannot reach a majority of the store's members: boom"
	addr := startDegradedServer(t, ca, why)
	var r reports
	cfg := userConfig(addr, ca)
	cfg.OnDegraded = r.add
	ctx := context.Background()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := r.take(); len(got) != 0 {
		t.Errorf("login reported %q: a write's NoQuorum error would say it twice", got)
	}
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.take(); !slices.Equal(got, []string{why}) {
		t.Errorf("unary call reported %q", got)
	}
	w, err := c.Watch(ctx, &jujupb.WatchRequest{Model: "model-uuid"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := w.Next(); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if got := r.take(); !slices.Equal(got, []string{why}) {
		t.Errorf("stream reported %q, want once", got)
	}

	quiet := NewFromConn(c.Conn(), userConfig(addr, ca))
	if _, err := quiet.Version(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.take(); len(got) != 0 {
		t.Errorf("another client's call reported %q", got)
	}
}

// A stream read before its header is asked for reports at its first message.
func TestReportingStreamOnFirstMessage(t *testing.T) {
	var r reports
	s := &reportingStream{ClientStream: headerStream{metadata.Pairs(MetadataDegraded, "why")}, report: r.add}
	for range 3 {
		if err := s.RecvMsg(nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Header(); err != nil {
		t.Fatal(err)
	}
	if got := r.take(); !slices.Equal(got, []string{"why"}) {
		t.Errorf("reported %q, want once", got)
	}
}

type headerStream struct {
	md metadata.MD
}

func (h headerStream) Header() (metadata.MD, error) { return h.md, nil }
func (headerStream) Trailer() metadata.MD           { return nil }
func (headerStream) CloseSend() error               { return nil }
func (headerStream) Context() context.Context       { return context.Background() }
func (headerStream) SendMsg(any) error              { return nil }
func (headerStream) RecvMsg(any) error              { return nil }

// A client whose first address is a member without quorum moves to one that has it, when one
// answers; with none, it stays where it logged in (its reads work, its writes are refused).
func TestDialAnyPrefersAMemberWithQuorum(t *testing.T) {
	ca := newTestCA(t)
	degraded := startDegradedServer(t, ca, "no majority")
	healthy, _ := startServer(t, ca)
	cfg := func(ep string) Config { return userConfig(ep, ca) }
	c, err := DialAny(context.Background(), []Config{cfg(degraded), cfg(healthy)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Endpoint() != healthy {
		t.Errorf("logged in to %s, want the member with quorum %s", c.Endpoint(), healthy)
	}
	alone, err := DialAny(context.Background(), []Config{cfg(degraded)})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	if alone.Endpoint() != degraded {
		t.Errorf("logged in to %s, want %s", alone.Endpoint(), degraded)
	}
}
