package cmdutil

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/internal/testutil/deadaddr"
	"github.com/jujuclone/juju/output"
)

// seededFactory returns a real factory over a temporary $JUJU_DATA holding two controllers.
func seededFactory(t *testing.T) *Factory {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("JUJU_DATA", dir)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	s := NewStore(dir)
	for _, name := range []string{"one", "two"} {
		if err := s.AddController(name, ControllerDetails{UUID: name, APIEndpoints: []string{"127.0.0.1:1"}}); err != nil {
			t.Fatal(err)
		}
		_ = s.UpdateAccount(name, AccountDetails{User: "admin", Password: "pw"})
		_ = s.UpdateModel(name, "default", ModelDetails{UUID: name + "-default", Type: "iaas"})
		_ = s.UpdateModel(name, "other", ModelDetails{UUID: name + "-other", Type: "iaas"})
		_ = s.SetCurrentModel(name, "default")
	}
	_ = s.SetCurrentController("one")
	ios, _, _ := output.TestStreams()
	return NewFactory(ios)
}

func TestConfigPrecedence(t *testing.T) {
	tests := []struct {
		name                string
		env                 map[string]string
		flag                string
		wantCtrl, wantModel string
	}{
		{name: "files", wantCtrl: "one", wantModel: "default"},
		{name: "env controller", env: map[string]string{"JUJU_CONTROLLER": "two"}, wantCtrl: "two", wantModel: "default"},
		{name: "env model", env: map[string]string{"JUJU_MODEL": "other"}, wantCtrl: "one", wantModel: "other"},
		{name: "env qualified model", env: map[string]string{"JUJU_MODEL": "two:admin/other"}, wantCtrl: "two", wantModel: "other"},
		{name: "flag beats env", env: map[string]string{"JUJU_MODEL": "two:other"}, flag: "default", wantCtrl: "one", wantModel: "default"},
		{name: "flag with controller", flag: "two:other", wantCtrl: "two", wantModel: "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := seededFactory(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			var model string
			fs.StringVarP(&model, "model", "m", "", "")
			if tt.flag != "" {
				if err := fs.Parse([]string{"-m", tt.flag}); err != nil {
					t.Fatal(err)
				}
			}
			f.BindFlags(fs)
			cfg, err := f.Config()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Controller != tt.wantCtrl || cfg.Model != tt.wantModel {
				t.Errorf("config = %s:%s, want %s:%s", cfg.Controller, cfg.Model, tt.wantCtrl, tt.wantModel)
			}
		})
	}
}

func TestModelFromStore(t *testing.T) {
	f := seededFactory(t)
	m, err := f.Model(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.UUID != "one-default" || m.String() != "one:admin/default" {
		t.Errorf("model = %+v", m)
	}
}

func TestNoControllers(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("JUJU_DATA", dir)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	ios, _, _ := output.TestStreams()
	f := NewFactory(ios)
	if _, err := f.Client(context.Background()); !errors.Is(err, ErrNoControllers) {
		t.Errorf("Client = %v, want ErrNoControllers", err)
	}
	if _, err := f.Model(context.Background()); !errors.Is(err, ErrNoControllers) {
		t.Errorf("Model = %v, want ErrNoControllers", err)
	}
	s := NewStore(dir)
	_ = s.AddController("x", ControllerDetails{})
	f = NewFactory(ios)
	if _, err := f.Client(context.Background()); !errors.Is(err, ErrNoCurrentController) {
		t.Errorf("Client = %v, want ErrNoCurrentController", err)
	}
}

func TestSplitModel(t *testing.T) {
	for in, want := range map[string][2]string{
		"default":           {"", "default"},
		"ctl:default":       {"ctl", "default"},
		"ctl:admin/default": {"ctl", "default"},
		"admin/default":     {"", "default"},
		"":                  {"", ""},
	} {
		c, m := SplitModel(in)
		if c != want[0] || m != want[1] {
			t.Errorf("SplitModel(%q) = %q, %q; want %q", in, c, m, want)
		}
	}
}

// The login (Version) gives every member's API address: the store keeps them for the next
// connection, the one that answered first, and forgets addresses that are no member's. No
// members (a controller that cannot have more than one) leaves the store as it was.
func TestConnectRemembersEndpoints(t *testing.T) {
	members := &fakeMembers{}
	srv := startAPIServer(t, members)
	_, port, _ := net.SplitHostPort(srv.addr)
	other := "127.0.0.1:1" // another member, down
	refused := deadaddr.Refused(t)
	for _, tt := range []struct {
		name      string
		reported  []string
		endpoints []string
		want      []string
	}{
		{"members", []string{srv.addr, other}, []string{refused, srv.addr}, []string{srv.addr, other}},
		{"serving first", []string{other, srv.addr}, []string{srv.addr}, []string{srv.addr, other}},
		{"dialled by another name", []string{srv.addr, other}, []string{"localhost:" + port}, []string{"localhost:" + port, srv.addr, other}},
		{"no members", nil, []string{refused, srv.addr}, []string{refused, srv.addr}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members.addrs = tt.reported
			f := srv.factory(t, tt.endpoints)
			if _, err := f.Client(context.Background()); err != nil {
				t.Fatal(err)
			}
			d, err := f.Store.ControllerByName("local")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.APIEndpoints, tt.want) {
				t.Errorf("api-endpoints = %q, want %q", d.APIEndpoints, tt.want)
			}
		})
	}
}
