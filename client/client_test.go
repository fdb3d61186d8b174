package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// testCA is a CA and a server certificate for ServerName, made fresh for each test.
type testCA struct {
	caPEM  []byte
	server tls.Certificate
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "juju test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: ServerName},
		DNSNames:     []string{ServerName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{
		caPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		server: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
	}
}

// fakeController records the credentials of each call and answers a few methods.
type fakeController struct {
	jujupb.UnimplementedControllerServiceServer
	jujupb.UnimplementedStatusServiceServer
	jujupb.UnimplementedAgentServiceServer

	mu    sync.Mutex
	calls []metadata.MD
}

func (f *fakeController) record(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, md)
}

func (f *fakeController) last() metadata.MD {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[len(f.calls)-1]
}

func (f *fakeController) Version(ctx context.Context, _ *jujupb.VersionRequest) (*jujupb.VersionResponse, error) {
	f.record(ctx)
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get(MetadataPassword); len(got) != 1 || got[0] != "secret" {
		return nil, apierr.ToStatus(apierr.Unauthenticated)
	}
	return &jujupb.VersionResponse{Version: "0.1.0", ControllerUuid: "ctrl-uuid"}, nil
}

func (f *fakeController) GetModel(ctx context.Context, req *jujupb.ModelRef) (*jujupb.Model, error) {
	f.record(ctx)
	if req.GetModel() == "slow" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if req.GetModel() != "default" {
		return nil, apierr.ToStatus(apierr.Errorf(apierr.NotFound, "model %q not found", req.GetModel()))
	}
	return &jujupb.Model{Name: "default", Uuid: "model-uuid"}, nil
}

func (f *fakeController) GetUnit(ctx context.Context, req *jujupb.AgentEntity) (*jujupb.AgentUnit, error) {
	f.record(ctx)
	return &jujupb.AgentUnit{Name: req.GetId()}, nil
}

func (f *fakeController) Watch(req *jujupb.WatchRequest, stream grpc.ServerStreamingServer[jujupb.WatchEvent]) error {
	f.record(stream.Context())
	for i := range 2 {
		if err := stream.Send(&jujupb.WatchEvent{Kind: "unit", Id: "mysql/0", Revision: int64(i + 1)}); err != nil {
			return err
		}
	}
	<-stream.Context().Done()
	return nil
}

// startServer runs the fake controller on a loopback port and returns its address.
func startServer(t *testing.T, ca testCA) (string, *fakeController) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.server}})))
	fake := &fakeController{}
	jujupb.RegisterControllerServiceServer(srv, fake)
	jujupb.RegisterStatusServiceServer(srv, fake)
	jujupb.RegisterAgentServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), fake
}

func userConfig(addr string, ca testCA) Config {
	return Config{Endpoint: addr, CACert: ca.caPEM, Tag: "user-admin", Password: "secret"}
}

func TestDialSendsCredentials(t *testing.T) {
	ca := newTestCA(t)
	addr, fake := startServer(t, ca)
	c, err := Dial(context.Background(), userConfig(addr, ca))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	md := fake.last()
	if got := md.Get(MetadataTag); len(got) != 1 || got[0] != "user-admin" {
		t.Errorf("tag metadata = %q, want user-admin", got)
	}
	if got := md.Get(MetadataModel); len(got) != 0 {
		t.Errorf("model metadata = %q, want none for users", got)
	}
	m, err := c.GetModel(context.Background(), "default")
	if err != nil || m.GetUuid() != "model-uuid" {
		t.Fatalf("GetModel = %v, %v", m, err)
	}
}

func TestErrorsMapToSentinels(t *testing.T) {
	ca := newTestCA(t)
	addr, _ := startServer(t, ca)
	c, err := Dial(context.Background(), userConfig(addr, ca))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.GetModel(context.Background(), "nope")
	if !errors.Is(err, apierr.NotFound) {
		t.Errorf("errors.Is(%v, NotFound) = false", err)
	}
	if err.Error() != `model "nope" not found` {
		t.Errorf("message = %q", err.Error())
	}
}

func TestWrongPassword(t *testing.T) {
	ca := newTestCA(t)
	addr, _ := startServer(t, ca)
	cfg := userConfig(addr, ca)
	cfg.Password = "wrong"
	_, err := Dial(context.Background(), cfg)
	if !errors.Is(err, apierr.Unauthenticated) {
		t.Fatalf("Dial with a wrong password = %v, want Unauthenticated", err)
	}
}

func TestCallTimeout(t *testing.T) {
	ca := newTestCA(t)
	addr, _ := startServer(t, ca)
	cfg := userConfig(addr, ca)
	cfg.Timeout = 50 * time.Millisecond
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.GetModel(context.Background(), "slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetModel past its timeout = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timeout took %v", d)
	}
}

func TestDialDownController(t *testing.T) {
	ca := newTestCA(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	for _, tag := range []string{"user-admin", "machine-0"} {
		t.Run(tag, func(t *testing.T) {
			cfg := userConfig(addr, ca)
			cfg.Tag = tag
			start := time.Now()
			_, err := Dial(context.Background(), cfg)
			if !errors.Is(err, apierr.Unavailable) {
				t.Fatalf("Dial = %v, want Unavailable", err)
			}
			want := "cannot connect to controller at " + addr + ": connect: connection refused"
			if err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Dial took %v", d)
			}
		})
	}
}

func TestDialSilentController(t *testing.T) {
	// A listener that accepts but never speaks TLS: Dial must give up after DialTimeout.
	ca := newTestCA(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	for _, tag := range []string{"user-admin", "machine-0"} {
		t.Run(tag, func(t *testing.T) {
			cfg := userConfig(lis.Addr().String(), ca)
			cfg.Tag = tag
			cfg.DialTimeout = 200 * time.Millisecond
			start := time.Now()
			_, err := Dial(context.Background(), cfg)
			if !errors.Is(err, apierr.Unavailable) {
				t.Fatalf("Dial = %v, want Unavailable", err)
			}
			if !strings.HasPrefix(err.Error(), "cannot connect to controller at ") {
				t.Errorf("error = %q", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Dial took %v", d)
			}
		})
	}
}

func TestDialWrongCA(t *testing.T) {
	ca := newTestCA(t)
	addr, _ := startServer(t, ca)
	other := newTestCA(t)
	cfg := userConfig(addr, ca)
	cfg.CACert = other.caPEM
	_, err := Dial(context.Background(), cfg)
	if !errors.Is(err, apierr.Unavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Dial with the wrong CA = %v", err)
	}
}

func TestAgentsShareOneConnection(t *testing.T) {
	ca := newTestCA(t)
	addr, fake := startServer(t, ca)
	machine, err := Dial(context.Background(), Config{Endpoint: addr, CACert: ca.caPEM, Tag: "machine-0", Password: "m", Model: "model-uuid"})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer machine.Close()
	unit := NewFromConn(machine.Conn(), Config{Tag: "unit-mysql-0", Password: "u", Model: "model-uuid"})
	if _, err := unit.GetUnit(context.Background(), "", "mysql/0"); err != nil {
		t.Fatal(err)
	}
	md := fake.last()
	for key, want := range map[string]string{MetadataTag: "unit-mysql-0", MetadataPassword: "u", MetadataModel: "model-uuid"} {
		if got := md.Get(key); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if _, err := machine.GetUnit(context.Background(), "", "mysql/0"); err != nil {
		t.Fatal(err)
	}
	if got := fake.last().Get(MetadataTag); got[0] != "machine-0" {
		t.Errorf("tag after the unit's call = %q, want machine-0", got)
	}
	unit.Close() // must not close the shared connection
	if _, err := machine.GetUnit(context.Background(), "", "mysql/0"); err != nil {
		t.Fatalf("shared connection closed by a borrowing client: %v", err)
	}
}

func TestWatch(t *testing.T) {
	ca := newTestCA(t)
	addr, _ := startServer(t, ca)
	c, err := Dial(context.Background(), userConfig(addr, ca))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := c.Watch(context.Background(), &jujupb.WatchRequest{Model: "model-uuid"})
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 2; want++ {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetRevision() != want {
			t.Errorf("revision = %d, want %d", ev.GetRevision(), want)
		}
	}
	w.Close()
	if _, err := w.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after Close = %v, want Canceled", err)
	}
}
