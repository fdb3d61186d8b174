package cmdutil_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/deadaddr"
	"github.com/jujuclone/juju/output"
)

// The CLI reaches a controller through any address controllers.yaml knows for it: dead first
// endpoints cost a moment, not the 5 s per-address deadline each.
func TestConnectFallsOverToALiveEndpoint(t *testing.T) {
	ctrl := cmdtest.StartController(t)
	refused, silent := deadaddr.Refused(t), deadaddr.Silent(t)
	for _, tt := range []struct {
		name      string
		endpoints []string
	}{
		{"refused first", []string{refused, ctrl.Info.APIAddr}},
		{"silent first", []string{silent, ctrl.Info.APIAddr}},
		{"both dead first", []string{silent, refused, ctrl.Info.APIAddr}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := ctrl.UseStore(t)
			d, err := store.ControllerByName("local")
			if err != nil {
				t.Fatal(err)
			}
			d.APIEndpoints = tt.endpoints
			if err := store.UpdateController("local", *d); err != nil {
				t.Fatal(err)
			}
			ios, _, _ := output.TestStreams()
			f := cmdutil.NewFactory(ios)
			defer f.Close()
			start := time.Now()
			c, err := f.Client(context.Background())
			if err != nil {
				t.Fatalf("Client: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("connecting took %v", d)
			}
			if c.Endpoint() != ctrl.Info.APIAddr {
				t.Errorf("connected to %s, want the live %s", c.Endpoint(), ctrl.Info.APIAddr)
			}
			if _, err := c.ListModels(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// With every address dead the error is one line that names each address and why.
func TestConnectAllEndpointsDead(t *testing.T) {
	ctrl := cmdtest.StartController(t)
	store := ctrl.UseStore(t)
	refused := deadaddr.Refused(t)
	other := deadaddr.Refused(t)
	d, err := store.ControllerByName("local")
	if err != nil {
		t.Fatal(err)
	}
	d.APIEndpoints = []string{refused, other}
	if err := store.UpdateController("local", *d); err != nil {
		t.Fatal(err)
	}
	ios, _, _ := output.TestStreams()
	f := cmdutil.NewFactory(ios)
	defer f.Close()
	_, err = f.Client(context.Background())
	want := "cannot connect to controller at any of its addresses: " + refused + " (connect: connection refused), " +
		other + " (connect: connection refused)"
	if !errors.Is(err, apierr.Unavailable) || err.Error() != want || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Client = %v\nwant %s", err, want)
	}
}

// A throttled login is one clear error, and it is not retried on the controller's other
// addresses.
func TestConnectThrottledLogin(t *testing.T) {
	ctrl := cmdtest.StartController(t)
	store := ctrl.UseStore(t)
	if err := store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin", Password: "not-the-password"}); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 10 {
		ios, _, _ := output.TestStreams()
		f := cmdutil.NewFactory(ios)
		_, err = f.Client(context.Background())
		f.Close()
		if !errors.Is(err, apierr.Unauthenticated) {
			break
		}
	}
	want := "logging in to controller at " + ctrl.Info.APIAddr + ": too many failed logins of user-admin from 127.0.0.1, retry in "
	if !errors.Is(err, apierr.Throttled) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Client after failed logins = %v\nwant %s...", err, want)
	}
}
