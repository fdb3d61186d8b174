package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// fakeCompletion answers CompleteNames with the request's fields, so the test sees what was sent.
type fakeCompletion struct {
	jujupb.UnimplementedCompletionServiceServer
}

func (fakeCompletion) CompleteNames(_ context.Context, req *jujupb.CompleteNamesRequest) (*jujupb.CompleteNamesResponse, error) {
	if req.GetPrefix() == "bad" {
		return nil, apierr.ToStatus(apierr.Errorf(apierr.NotValid, "bad prefix"))
	}
	return &jujupb.CompleteNamesResponse{
		Names:     []string{req.GetModel(), req.GetKind().String(), req.GetPrefix()},
		Truncated: req.GetLimit() == 1,
	}, nil
}

func TestCompleteNames(t *testing.T) {
	ca := newTestCA(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.server}})))
	jujupb.RegisterControllerServiceServer(srv, &fakeController{})
	jujupb.RegisterCompletionServiceServer(srv, fakeCompletion{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cfg := userConfig(lis.Addr().String(), ca)
	cfg.Model = "own-model"
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	got, truncated, err := c.CompleteNames(ctx, "", NameUnit, "mysql/", 1)
	if err != nil || !slices.Equal(got, []string{"own-model", "NAME_KIND_UNIT", "mysql/"}) || !truncated {
		t.Errorf("units = %q %v %v", got, truncated, err)
	}
	got, _, err = c.CompleteNames(ctx, "other", NameEndpoint, "mysql:", 0)
	if err != nil || !slices.Equal(got, []string{"other", "NAME_KIND_ENDPOINT", "mysql:"}) {
		t.Errorf("endpoints = %q %v", got, err)
	}
	// Models belong to no model: none is sent.
	got, truncated, err = c.CompleteNames(ctx, "other", NameModel, "d", -5)
	if err != nil || !slices.Equal(got, []string{"", "NAME_KIND_MODEL", "d"}) || truncated {
		t.Errorf("models = %q %v %v", got, truncated, err)
	}
	if _, _, err := c.CompleteNames(ctx, "", NameApplication, "bad", 0); !errors.Is(err, apierr.NotValid) {
		t.Errorf("bad prefix = %v, want NotValid", err)
	}
}

// A controller that accepts connections but never answers must not hold the caller past its
// deadline, even with a connection that was never checked (as shell completion uses).
func TestCompleteNamesSilentController(t *testing.T) {
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
	cfg := userConfig(lis.Addr().String(), ca)
	conn, err := NewConn(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := NewFromConn(conn, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := c.CompleteNames(ctx, "default", NameUnit, "", 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("CompleteNames of a silent controller succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CompleteNames hangs on a silent controller")
	}
}
