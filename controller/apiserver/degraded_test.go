package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

// Every method of every service says what a degraded controller does with it: a new method
// cannot be forgotten (it would be refused), nor a removed one linger.
func TestEveryMethodIsClassified(t *testing.T) {
	seen := map[string]bool{}
	protoregistry.GlobalFiles.RangeFilesByPackage("juju.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				name := "/" + string(sd.FullName()) + "/" + string(sd.Methods().Get(j).Name())
				seen[name] = true
				if _, ok := degradedMethods[name]; !ok {
					t.Errorf("%s is not in degradedMethods: say whether a degraded controller serves it (only reads the store) or refuses it", name)
				}
			}
		}
		return true
	})
	if len(seen) < 50 {
		t.Fatalf("found only %d methods in package juju.v1", len(seen))
	}
	for name := range degradedMethods {
		if !seen[name] {
			t.Errorf("degradedMethods names %s, which no service has", name)
		}
	}
	if MetaDegraded != client.MetadataDegraded {
		t.Errorf("server header %q, client reads %q", MetaDegraded, client.MetadataDegraded)
	}
}

// The verdict is taken once, before authentication: when degraded, the credential check and
// a read's handler read the store without its quorum, and a write never reaches its handler.
func TestDegradedGateMarksReadsAndRefusesWrites(t *testing.T) {
	var reason atomic.Value
	reason.Store("")
	g := newDegradedGate(func() string { return reason.Load().(string) })
	call := func(method string) (marked, ran bool, err error) {
		_, err = g.markUnary(context.Background(), nil, nil, func(ctx context.Context, req any) (any, error) {
			marked = store.SerializableReads(ctx) // what authentication reads with
			return g.unary(ctx, req, &grpc.UnaryServerInfo{FullMethod: method}, func(context.Context, any) (any, error) {
				ran = true
				return nil, nil
			})
		})
		return marked, ran, err
	}
	read, write := pb.StatusService_FullStatus_FullMethodName, pb.MachineService_AddMachines_FullMethodName
	for _, m := range []string{read, write} {
		if marked, ran, err := call(m); marked || !ran || err != nil {
			t.Errorf("healthy %s: marked %v, ran %v, %v", m, marked, ran, err)
		}
	}
	reason.Store("this controller member cannot reach a majority of the store's members: boom")
	if marked, ran, err := call(read); !marked || !ran || err != nil {
		t.Errorf("degraded read: marked %v, ran %v, %v", marked, ran, err)
	}
	if _, ran, err := call(write); ran || !errors.Is(apierr.FromStatus(err), apierr.NoQuorum) {
		t.Errorf("degraded write: ran %v, %v", ran, err)
	}
	if newDegradedGate(nil).degraded() != "" {
		t.Error("no Degraded func: degraded")
	}
}

// serveWithDegraded serves env's state on a second API server whose Degraded is degraded, and
// returns its address and CA.
func serveWithDegraded(t *testing.T, env *testEnv, degraded func() string) (string, []byte) {
	t.Helper()
	cert, caPEM, err := bootstrap.EnsureCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := New(Config{
		State: env.st, ControllerName: "test", Cloud: "localhost", Region: "localhost", Context: ctx,
		TLS:      &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Degraded: degraded,
	})
	for service, info := range srv.GetServiceInfo() {
		for _, m := range info.Methods {
			if _, ok := degradedMethods["/"+service+"/"+m.Name]; !ok {
				t.Errorf("registered method /%s/%s is not in degradedMethods", service, m.Name)
			}
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), caPEM
}

// A degraded controller refuses a write at once with NoQuorum (nothing written), serves reads,
// unary and streams, with the reason in a header the client reports, still authenticates
// first, and serves writes again once healthy.
func TestDegradedControllerRefusesWritesAndServesReads(t *testing.T) {
	env := startTestEnv(t)
	var current atomic.Value
	current.Store("")
	addr, caPEM := serveWithDegraded(t, env, func() string { return current.Load().(string) })
	var mu sync.Mutex
	var reports []string
	reported := func() []string {
		mu.Lock()
		defer mu.Unlock()
		r := slices.Clone(reports)
		reports = nil
		return r
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := client.Config{Endpoint: addr, CACert: caPEM, Tag: AdminTag, Password: "admin-secret",
		OnDegraded: func(r string) { mu.Lock(); reports = append(reports, r); mu.Unlock() }}
	c, err := client.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.AddModel(ctx, "while-healthy", "", nil); err != nil {
		t.Fatal(err)
	}
	if r := reported(); len(r) != 0 {
		t.Fatalf("healthy controller reported degraded: %q", r)
	}

	why := "this controller member cannot reach a majority of the store's members: context deadline exceeded"
	current.Store(why)
	start := time.Now()
	_, err = c.AddModel(ctx, "while-degraded", "", nil)
	if !errors.Is(err, apierr.NoQuorum) {
		t.Fatalf("write while degraded: %v, want NoQuorum", err)
	}
	if want := "controller has no quorum: " + why + "; writes are refused until a majority of its members is back"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusal took %v", d)
	}

	models, err := c.ListModels(ctx)
	if err != nil {
		t.Fatalf("read while degraded: %v", err)
	}
	for _, m := range models {
		if m.GetName() == "while-degraded" {
			t.Error("the refused write was made")
		}
	}
	if r := reported(); !slices.Equal(r, []string{why}) {
		t.Errorf("unary read reported %q, want the reason once", r)
	}
	w, err := c.Watch(ctx, &pb.WatchRequest{Model: env.model, Targets: []*pb.WatchTarget{{Kind: state.KindModel}}})
	if err != nil {
		t.Fatalf("watch while degraded: %v", err)
	}
	w.Close()
	if r := reported(); !slices.Equal(r, []string{why}) {
		t.Errorf("stream read reported %q, want the reason once", r)
	}

	// Authentication first: a wrong password is told so, not that writes are refused.
	bad := cfg
	bad.Password = "wrong-password"
	if _, err := client.Dial(ctx, bad); !errors.Is(err, apierr.Unauthenticated) {
		t.Errorf("wrong password while degraded: %v, want Unauthenticated", err)
	}

	current.Store("")
	if _, err := c.AddModel(ctx, "healthy-again", "", nil); err != nil {
		t.Fatalf("write once healthy again: %v", err)
	}
	if r := reported(); len(r) != 0 {
		t.Errorf("healthy again, reported %q", r)
	}
}
