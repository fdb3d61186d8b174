package cmdutil_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/output"
)

// degradedController answers as a controller without quorum: reads with the degraded
// header, writes refused with NoQuorum.
type degradedController struct {
	jujupb.UnimplementedControllerServiceServer
	why string
}

func (d *degradedController) Version(ctx context.Context, _ *jujupb.VersionRequest) (*jujupb.VersionResponse, error) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(client.MetadataDegraded, d.why))
	return &jujupb.VersionResponse{Version: "3.6.0"}, nil
}

func (d *degradedController) ListModels(ctx context.Context, _ *jujupb.ListModelsRequest) (*jujupb.ListModelsResponse, error) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(client.MetadataDegraded, d.why))
	return &jujupb.ListModelsResponse{}, nil
}

func (d *degradedController) AddModel(context.Context, *jujupb.AddModelRequest) (*jujupb.Model, error) {
	return nil, apierr.ToStatus(apierr.Errorf(apierr.NoQuorum, "controller has no quorum: %s; writes are refused until a majority of its members is back", d.why))
}

// A command talking to a degraded controller warns once on stderr, however many calls it
// makes; its login alone does not warn, and a write fails with NoQuorum.
func TestDegradedControllerWarnsOncePerCommand(t *testing.T) {
	cert, caPEM, err := bootstrap.EnsureCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	why := "this controller member cannot reach a majority of the store's members: context deadline exceeded"
	jujupb.RegisterControllerServiceServer(srv, &degradedController{why: why})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	t.Setenv("JUJU_DATA", t.TempDir())
	ios, _, stderr := output.TestStreams()
	f := cmdutil.NewFactory(ios)
	defer f.Close()
	if err := f.Store.AddController("ha", cmdutil.ControllerDetails{APIEndpoints: []string{lis.Addr().String()}, CACert: string(caPEM)}); err != nil {
		t.Fatal(err)
	}
	if err := f.Store.UpdateAccount("ha", cmdutil.AccountDetails{User: "admin", Password: "secret"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Store.SetCurrentController("ha"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := f.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Fatalf("login warned: %q", stderr)
	}
	if _, err := c.AddModel(ctx, "m", "", nil); !errors.Is(err, apierr.NoQuorum) || !strings.HasPrefix(err.Error(), "controller has no quorum: "+why) {
		t.Errorf("write: %v, want NoQuorum", err)
	}
	for range 2 {
		if _, err := c.ListModels(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := stderr.String(), "WARNING controller degraded: "+why+"\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}
