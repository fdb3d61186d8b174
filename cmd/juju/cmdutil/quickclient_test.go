package cmdutil

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/apiserver"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/internal/testutil/deadaddr"
	"github.com/jujuclone/juju/output"
)

func TestCompletionSourceStore(t *testing.T) {
	src := seededFactory(t).CompletionSource()
	if got, err := src.Controllers(); err != nil || !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("Controllers = %q, %v", got, err)
	}
	if got, err := src.StoreModels("two"); err != nil || !slices.Equal(got, []string{"default", "other"}) {
		t.Errorf("StoreModels = %q, %v", got, err)
	}
	fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
	fs.StringP("model", "m", "", "")
	if err := fs.Parse([]string{"-m", "two:other"}); err != nil {
		t.Fatal(err)
	}
	if ctrl, model, err := src.Target(fs); err != nil || ctrl != "two" || model != "other" {
		t.Errorf("Target = %q %q %v", ctrl, model, err)
	}
}

func TestCompletionTimeout(t *testing.T) {
	for env, want := range map[string]time.Duration{"": 0, "1.5s": 1500 * time.Millisecond, "soon": 0} {
		t.Setenv("JUJU_COMPLETION_TIMEOUT", env)
		if got := seededFactory(t).CompletionSource().Timeout(); got != want {
			t.Errorf("JUJU_COMPLETION_TIMEOUT=%q: %v, want %v", env, got, want)
		}
	}
}

// QuickCall reaches a live endpoint behind dead ones (refused, or accepting and never answering)
// well within completion's budget, runs its call once, and gives up within ctx when every
// endpoint is dead.
func TestQuickCall(t *testing.T) {
	srv := startAPIServer(t, nil)
	refused, silent := deadaddr.Refused(t), deadaddr.Silent(t)
	for _, tt := range []struct {
		name      string
		endpoints []string
		wantErr   bool
	}{
		{"live", []string{srv.addr}, false},
		{"refused first", []string{refused, srv.addr}, false},
		{"silent first", []string{silent, srv.addr}, false},
		{"both dead first", []string{silent, refused, srv.addr}, false},
		{"all dead", []string{refused, silent}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := srv.factory(t, tt.endpoints)
			ctx, cancel := context.WithTimeout(context.Background(), completionBudget)
			defer cancel()
			// Success within ctx is the proof: a silent endpoint tried alone would take all of it.
			calls := 0
			var names []string
			err := f.QuickCall(ctx, "local", func(ctx context.Context, c *client.Client) error {
				calls++
				var err error
				names, _, err = c.CompleteNames(ctx, "", client.NameModel, "", 0)
				return err
			})
			if tt.wantErr {
				if err == nil || calls != 0 {
					t.Errorf("all dead: err %v after %d calls", err, calls)
				}
				return
			}
			if err != nil || calls != 1 || !slices.Equal(names, []string{"controller", "default"}) {
				t.Errorf("QuickCall: %v after %d calls, names %q", err, calls, names)
			}
		})
	}
	f := srv.factory(t, []string{srv.addr})
	if err := f.QuickCall(context.Background(), "nope", func(context.Context, *client.Client) error { return nil }); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown controller: %v", err)
	}
}

// completionBudget is what completion gives the controller (completion.Timeout): a Tab takes at
// most 300 ms, process start included.
const completionBudget = 200 * time.Millisecond

// Completion of remove-controller-member asks the controller for its members' ids.
func TestCompletionSourceControllerMembers(t *testing.T) {
	srv := startAPIServer(t, &fakeMembers{addrs: []string{"a:1"}, ids: []string{"0", "2"}})
	f := srv.factory(t, []string{deadaddr.Silent(t), srv.addr})
	ctx, cancel := context.WithTimeout(context.Background(), completionBudget)
	defer cancel()
	ids, err := f.CompletionSource().ControllerMembers(ctx, "local")
	if err != nil || !slices.Equal(ids, []string{"0", "2"}) {
		t.Errorf("ControllerMembers = %q, %v", ids, err)
	}
}

// apiServer is a real API server (TLS gRPC over a real embedded etcd) in this process, without
// the daemon's workers: enough to log in and answer calls.
type apiServer struct {
	addr  string
	caPEM string
}

// fakeMembers stands in for the daemon's member management: the API addresses Version reports
// and the members' ids.
type fakeMembers struct {
	addrs []string
	ids   []string
}

func (m *fakeMembers) EnableHA(context.Context, int) (*jujupb.EnableHAResponse, error) {
	return &jujupb.EnableHAResponse{}, nil
}

func (m *fakeMembers) RemoveMember(context.Context, string) error { return nil }

func (m *fakeMembers) Members(context.Context) ([]*jujupb.ControllerMember, string, error) {
	var members []*jujupb.ControllerMember
	for _, id := range m.ids {
		members = append(members, &jujupb.ControllerMember{Id: id, Health: "healthy"})
	}
	return members, "", nil
}

func (m *fakeMembers) APIAddresses(context.Context) []string { return m.addrs }

// startAPIServer starts an API server whose member management is members (nil: none).
func startAPIServer(t *testing.T, members apiserver.Members) *apiServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	es, err := store.StartEmbedded(ctx, filepath.Join(dir, "etcd"), store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	st := state.New(es.Client)
	if _, err := st.Bootstrap(ctx, state.BootstrapArgs{
		ControllerName: "local", AdminPasswordHash: state.HashPassword("pw"), Cloud: "localhost", Region: "localhost", Base: "ubuntu@22.04",
	}); err != nil {
		t.Fatal(err)
	}
	cert, caPEM, err := bootstrap.EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := apiserver.Config{
		State: st, ControllerName: "local", Cloud: "localhost", Region: "localhost", Context: ctx,
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	if members != nil {
		cfg.Members = members
	}
	srv := apiserver.New(cfg)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis) //nolint:errcheck // Stop ends it
	t.Cleanup(srv.Stop)
	return &apiServer{addr: lis.Addr().String(), caPEM: string(caPEM)}
}

// factory returns a CLI factory whose store knows the server as controller "local" (current)
// at endpoints.
func (s *apiServer) factory(t *testing.T, endpoints []string) *Factory {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("JUJU_DATA", dir)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	st := NewStore(dir)
	for _, err := range []error{
		st.AddController("local", ControllerDetails{UUID: "local-uuid", APIEndpoints: endpoints, CACert: s.caPEM, Cloud: "localhost"}),
		st.UpdateAccount("local", AccountDetails{User: "admin", Password: "pw"}),
		st.SetCurrentController("local"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ios, _, _ := output.TestStreams()
	f := NewFactory(ios)
	t.Cleanup(f.Close)
	return f
}
