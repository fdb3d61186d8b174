package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// startFailingServer runs the fake controller behind an interceptor that answers the first
// calls with fail(srv) instead of the handler's answer; it counts every call.
func startFailingServer(t *testing.T, ca testCA, fail func(*grpc.Server) error) (string, *atomic.Int64) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	var srv *grpc.Server
	srv = grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.server}})),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			calls.Add(1)
			if err := fail(srv); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}))
	fake := &fakeController{}
	jujupb.RegisterAgentServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), &calls
}

func agentClient(t *testing.T, ca testCA, addrs ...string) *Client {
	t.Helper()
	conn, err := NewAgentConn(addrs, ca.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return NewFromConn(conn, Config{Tag: "unit-mysql-0", Password: "u", Model: "model-uuid"})
}

// A member killed in the middle of an agent's call: the call goes on to another member
// instead of failing (a hook's status-set would fail the hook, which would then run again).
func TestAgentCallOutlivesItsMember(t *testing.T) {
	ca := newTestCA(t)
	dying, dyingCalls := startFailingServer(t, ca, func(srv *grpc.Server) error {
		go srv.Stop() // the member dies with the call in flight
		time.Sleep(100 * time.Millisecond)
		return nil
	})
	alive, aliveCalls := startFailingServer(t, ca, func(*grpc.Server) error { return nil })
	c := agentClient(t, ca, dying, alive)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := c.GetUnit(ctx, "model-uuid", "mysql/0")
	if err != nil || u.GetName() != "mysql/0" {
		t.Fatalf("GetUnit = %v, %v; want the answer of the member still alive", u, err)
	}
	if dyingCalls.Load() != 1 || aliveCalls.Load() != 1 {
		t.Errorf("calls: %d to the dying member, %d to the other; want 1 and 1", dyingCalls.Load(), aliveCalls.Load())
	}
}

// A member without quorum refuses writes for a moment (an election); the agent's call waits
// for it, while an answer about the call itself comes back at once.
func TestAgentCallWaitsOutNoQuorumOnly(t *testing.T) {
	ca := newTestCA(t)
	var refusals atomic.Int64
	refusals.Store(2)
	addr, calls := startFailingServer(t, ca, func(*grpc.Server) error {
		if refusals.Add(-1) >= 0 {
			return apierr.ToStatus(apierr.Errorf(apierr.NoQuorum, "controller has no quorum"))
		}
		return nil
	})
	c := agentClient(t, ca, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.GetUnit(ctx, "model-uuid", "mysql/0"); err != nil {
		t.Fatalf("GetUnit after two refusals: %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 3 (two refused for want of a quorum)", calls.Load())
	}

	calls.Store(0)
	notFound, notFoundCalls := startFailingServer(t, ca, func(*grpc.Server) error {
		return apierr.ToStatus(apierr.Errorf(apierr.NotFound, "unit %q not found", "mysql/0"))
	})
	c = agentClient(t, ca, notFound)
	if _, err := c.GetUnit(ctx, "model-uuid", "mysql/0"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("GetUnit = %v, want not found", err)
	}
	if notFoundCalls.Load() != 1 {
		t.Errorf("a not-found answer was asked %d times, want once", notFoundCalls.Load())
	}
}

// A controller gone for good: the call ends at its deadline, not later.
func TestAgentCallRetriesUntilItsDeadline(t *testing.T) {
	ca := newTestCA(t)
	addr, _ := startFailingServer(t, ca, func(*grpc.Server) error {
		return apierr.ToStatus(apierr.Errorf(apierr.NoQuorum, "controller has no quorum"))
	})
	c := agentClient(t, ca, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetUnit(ctx, "model-uuid", "mysql/0")
	if !errors.Is(err, apierr.NoQuorum) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetUnit = %v, want the last refusal or the deadline", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the call took %s past its deadline of 300ms", took)
	}
}
