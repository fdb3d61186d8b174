package client

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// fakeLogAndResolve answers the log, resolve, config and retry-provisioning calls, recording
// the requests.
type fakeLogAndResolve struct {
	jujupb.UnimplementedLogServiceServer
	jujupb.UnimplementedApplicationServiceServer
	jujupb.UnimplementedMachineServiceServer

	resolve *jujupb.ResolveUnitErrorsRequest
	retry   *jujupb.RetryProvisioningRequest
	set     *jujupb.SetConfigRequest
}

func (f *fakeLogAndResolve) DebugLog(req *jujupb.DebugLogRequest, stream grpc.ServerStreamingServer[jujupb.LogRecord]) error {
	if req.GetLevel() == "loud" {
		return apierr.ToStatus(apierr.Errorf(apierr.NotValid, `level "loud" not valid`))
	}
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	for _, m := range []string{req.GetModel(), "second"} {
		if err := stream.Send(&jujupb.LogRecord{Entity: "unit-mysql-0", Message: m}); err != nil {
			return err
		}
	}
	if req.GetNoTail() {
		return nil
	}
	<-stream.Context().Done()
	return nil
}

func (f *fakeLogAndResolve) ResolveUnitErrors(_ context.Context, req *jujupb.ResolveUnitErrorsRequest) (*jujupb.ResolveUnitErrorsResponse, error) {
	f.resolve = req
	return &jujupb.ResolveUnitErrorsResponse{Results: []*jujupb.ResolveResult{{Name: "mysql/0", Next: `will re-run "install" hook`}}}, nil
}

func (f *fakeLogAndResolve) RetryProvisioning(_ context.Context, req *jujupb.RetryProvisioningRequest) (*jujupb.RemoveResponse, error) {
	f.retry = req
	return &jujupb.RemoveResponse{Results: []*jujupb.RemoveResult{{Name: "14"}}}, nil
}

func (f *fakeLogAndResolve) GetConfig(_ context.Context, req *jujupb.ApplicationRef) (*jujupb.ApplicationConfig, error) {
	if req.GetApplication() != "mysql" {
		return nil, apierr.ToStatus(apierr.Errorf(apierr.NotFound, "application %q not found", req.GetApplication()))
	}
	return &jujupb.ApplicationConfig{Application: "mysql", Charm: "mysql", Options: []*jujupb.ConfigOption{{Name: "port", Type: "int"}}}, nil
}

func (f *fakeLogAndResolve) SetConfig(_ context.Context, req *jujupb.SetConfigRequest) (*jujupb.SetConfigResponse, error) {
	f.set = req
	return &jujupb.SetConfigResponse{}, nil
}

func startLogServer(t *testing.T, ca testCA) (*Client, *fakeLogAndResolve) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.server}})))
	fake := &fakeLogAndResolve{}
	jujupb.RegisterControllerServiceServer(srv, &fakeController{})
	jujupb.RegisterLogServiceServer(srv, fake)
	jujupb.RegisterApplicationServiceServer(srv, fake)
	jujupb.RegisterMachineServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cfg := userConfig(lis.Addr().String(), ca)
	cfg.Model = "model-uuid"
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, fake
}

func TestDebugLogStream(t *testing.T) {
	c, _ := startLogServer(t, newTestCA(t))
	ctx := context.Background()

	// NoTail: the backlog, then io.EOF. The client's model fills an empty one.
	s, err := c.DebugLog(ctx, &jujupb.DebugLogRequest{NoTail: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model-uuid", "second"} {
		r, err := s.Next()
		if err != nil || r.GetMessage() != want {
			t.Fatalf("Next = %v %v, want %q", r, err, want)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("end of backlog = %v, want io.EOF", err)
	}
	s.Close()

	// Following: Close ends it with Canceled.
	s, err = c.DebugLog(ctx, &jujupb.DebugLogRequest{Model: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.Next(); err != nil || r.GetMessage() != "other" {
		t.Fatalf("Next = %v %v", r, err)
	}
	s.Next()
	s.Close()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after Close = %v, want Canceled", err)
	}

	// A refused request fails DebugLog itself, as a sentinel.
	if _, err := c.DebugLog(ctx, &jujupb.DebugLogRequest{Level: "loud"}); !errors.Is(err, apierr.NotValid) {
		t.Errorf("bad level = %v, want NotValid", err)
	}
}

func TestResolveAndConfigCalls(t *testing.T) {
	c, fake := startLogServer(t, newTestCA(t))
	ctx := context.Background()
	res, err := c.ResolveUnitErrors(ctx, &jujupb.ResolveUnitErrorsRequest{Units: []string{"mysql/0"}, Retry: true})
	if err != nil || len(res) != 1 || res[0].GetNext() != `will re-run "install" hook` {
		t.Fatalf("ResolveUnitErrors = %v %v", res, err)
	}
	if fake.resolve.GetModel() != "model-uuid" || !fake.resolve.GetRetry() {
		t.Errorf("resolve request = %v", fake.resolve)
	}
	rp, err := c.RetryProvisioning(ctx, &jujupb.RetryProvisioningRequest{Model: "m", Machines: []string{"14"}, Constraints: "mem=2048M", ReplaceConstraints: true})
	if err != nil || len(rp) != 1 || rp[0].GetName() != "14" {
		t.Fatalf("RetryProvisioning = %v %v", rp, err)
	}
	if fake.retry.GetModel() != "m" || fake.retry.GetConstraints() != "mem=2048M" {
		t.Errorf("retry request = %v", fake.retry)
	}
	cfg, err := c.GetConfig(ctx, "", "mysql")
	if err != nil || cfg.GetOptions()[0].GetName() != "port" {
		t.Fatalf("GetConfig = %v %v", cfg, err)
	}
	if _, err := c.GetConfig(ctx, "", "nope"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("GetConfig of a missing application = %v", err)
	}
	if err := c.SetConfig(ctx, &jujupb.SetConfigRequest{Application: "mysql", Values: map[string]string{"port": "1"}}); err != nil {
		t.Fatal(err)
	}
	if fake.set.GetModel() != "model-uuid" || fake.set.GetValues()["port"] != "1" {
		t.Errorf("set request = %v", fake.set)
	}
}
