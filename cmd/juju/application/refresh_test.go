package application

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
)

func TestNewCmdRefresh(t *testing.T) {
	tests := []struct {
		args, wantErr, wantPath string
	}{
		{args: "wordpress --path ./wordpress", wantPath: "./wordpress"},
		{args: "wordpress --path ./wp.charm -m other", wantPath: "./wp.charm"},
		{args: "", wantErr: "no application specified"},
		{args: "wordpress extra --path x", wantErr: `unrecognized args: ["extra"]`},
		{args: "Wordpress --path x", wantErr: `invalid application name "Wordpress", unexpected uppercase character`},
		// No charm store: without --path there is nothing to refresh to (exit 2).
		{args: "wordpress", wantErr: "only local charms can be used: there is no charm store; give the charm with --path <charm directory or .charm file>"},
		// What jubilant's refresh sends, and Juju's refusals of the rest.
		{args: "wordpress --path ./wordpress --force --force-base --force-units --trust --config title=x --config posts=3", wantPath: "./wordpress"},
		{args: "wordpress --path ./wordpress --channel latest/edge --base ubuntu@22.04 --trust=false", wantPath: "./wordpress"},
		{args: "wordpress --path x --revision 3", wantErr: "--path and --revision are mutually exclusive"},
		{args: "wordpress --path x --storage data=tmpfs,1G", wantErr: "--storage is not supported: the local provider has no storage"},
		{args: "wordpress --path x --channel a/b/c/d", wantErr: `error in --channel: risk in channel "a/b/c/d" not valid, expected one of stable, candidate, beta, edge`},
		{args: "wordpress --path x --base ubuntu", wantErr: "expected base string to contain os and channel separated by '@'"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *refreshOptions
			cmd := NewCmdRefresh(cmdutil.TestFactory(), func(o *refreshOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Application != "wordpress" || got.Path != tt.wantPath {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeRefreshAPI answers status with wordpress (charm wordpress) related to mysql on db, and
// records the calls refresh makes.
type fakeRefreshAPI struct {
	calls       []string
	archive     []byte
	req         *jujupb.SetCharmRequest
	setErr      error
	subordinate bool
	life        string
	base        *jujupb.Base
}

func (f *fakeRefreshAPI) FullStatus(_ context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error) {
	f.calls = append(f.calls, "FullStatus "+model+" "+strings.Join(patterns, ","))
	return &jujupb.FullStatusResponse{
		Applications: []*jujupb.ApplicationStatus{
			{Name: "wordpress", CharmName: "wordpress", CharmRev: 2, Subordinate: f.subordinate, Life: f.life, Base: f.base},
			{Name: "mysql", CharmName: "mysql"},
		},
		Relations: []*jujupb.RelationStatus{
			{Key: "wordpress:cluster", Endpoints: []*jujupb.RelationEndpoint{
				{Application: "wordpress", Name: "cluster", Role: "peer", Interface: "wordpress-peers", Scope: "global"}}},
			{Key: "wordpress:db mysql:db", Endpoints: []*jujupb.RelationEndpoint{
				{Application: "wordpress", Name: "db", Role: "requirer", Interface: "mysql", Scope: "global"},
				{Application: "mysql", Name: "db", Role: "provider", Interface: "mysql", Scope: "global"}}},
		},
	}, nil
}

func (f *fakeRefreshAPI) UploadCharm(_ context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error) {
	f.calls = append(f.calls, "UploadCharm "+model)
	f.archive = archive
	return &jujupb.UploadCharmResponse{Url: "local:wordpress-3", Revision: 3}, nil
}

func (f *fakeRefreshAPI) SetCharm(_ context.Context, req *jujupb.SetCharmRequest) (*jujupb.SetCharmResponse, error) {
	f.calls = append(f.calls, "SetCharm "+req.GetApplication()+" "+req.GetCharmUrl())
	f.req = req
	return &jujupb.SetCharmResponse{PreviousCharmUrl: "local:wordpress-2"}, f.setErr
}

func refreshWith(t *testing.T, fake *fakeRefreshAPI, args string) (stdout, stderr string, err error) {
	t.Helper()
	f := cmdutil.TestFactory()
	cmd := NewCmdRefresh(f, func(o *refreshOptions) error {
		o.Client = func(context.Context) (refreshAPI, error) { return fake, nil }
		o.ResolveModel = testModel
		return refreshRun(context.Background(), o)
	})
	err = execute(cmd, args)
	return f.IO.Out.(*bytes.Buffer).String(), f.IO.ErrOut.(*bytes.Buffer).String(), err
}

// Juju's output: "Added local charm ..." on stderr, nothing on stdout; the charm is checked
// against status, uploaded, then the application switched to it.
func TestRefreshRun(t *testing.T) {
	dir := t.TempDir()
	path := writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	fake := &fakeRefreshAPI{}
	stdout, stderr, err := refreshWith(t, fake, "wordpress --path "+path)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}
	golden.Assert(t, stderr, "refresh/local.stderr.golden")
	if got, want := strings.Join(fake.calls, ","), "FullStatus uuid-default wordpress,UploadCharm uuid-default,SetCharm wordpress local:wordpress-3"; got != want {
		t.Errorf("calls = %s\nwant %s", got, want)
	}
	if fake.req.GetModel() != "uuid-default" || len(fake.archive) == 0 {
		t.Errorf("request = %v, archive of %d bytes", fake.req, len(fake.archive))
	}

	// The controller's refusal (a race the status check could not see) is the error as is.
	fake = &fakeRefreshAPI{setErr: apierr.Errorf(apierr.NotValid, `cannot upgrade application "wordpress" to charm "local:wordpress-3": would break relation "wordpress:db mysql:db"`)}
	_, _, err = refreshWith(t, fake, "wordpress --path "+path)
	checkErr(t, err, `cannot upgrade application "wordpress" to charm "local:wordpress-3": would break relation "wordpress:db mysql:db"`, false)
}

// Bad input: one ERROR line, exit 1 (not a usage error), and nothing uploaded or changed.
func TestRefreshRefusals(t *testing.T) {
	dir := t.TempDir()
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	writeCharm(t, dir, "mysql", false, "ubuntu@22.04")
	writeCharm(t, dir, "subordinate", true, "ubuntu@22.04")
	// The subordinate, renamed wordpress: same name, other subordinacy.
	meta, _ := os.ReadFile(filepath.Join(dir, "subordinate", "metadata.yaml"))
	_ = os.WriteFile(filepath.Join(dir, "subordinate", "metadata.yaml"), bytes.Replace(meta, []byte("name: subordinate"), []byte("name: wordpress"), 1), 0o644)
	// wordpress without its db endpoint, and with db of another interface.
	for name, repl := range map[string]string{"nodb": "requires:\n  foo: bar\n", "pgsql": "requires:\n  db: pgsql\n"} {
		path := writeCharm(t, filepath.Join(dir, name), "wordpress", false, "ubuntu@22.04")
		meta, _ := os.ReadFile(filepath.Join(path, "metadata.yaml"))
		meta = bytes.Replace(meta, []byte("requires:\n  db: mysql\n"), []byte(repl), 1)
		_ = os.WriteFile(filepath.Join(path, "metadata.yaml"), meta, 0o644)
	}
	tests := []struct {
		name, args string
		fake       *fakeRefreshAPI
	}{
		{"unknown-application", "nope --path <dir>/wordpress", &fakeRefreshAPI{}},
		{"other-charm", "wordpress --path <dir>/mysql", &fakeRefreshAPI{}},
		{"drops-endpoint", "wordpress --path <dir>/nodb/wordpress", &fakeRefreshAPI{}},
		{"other-interface", "wordpress --path <dir>/pgsql/wordpress", &fakeRefreshAPI{}},
		{"subordinacy", "wordpress --path <dir>/subordinate", &fakeRefreshAPI{}},
		{"dying", "wordpress --path <dir>/wordpress", &fakeRefreshAPI{life: "dying"}},
		{"no-charm", "wordpress --path <dir>/missing", &fakeRefreshAPI{}},
		// --config is checked against the new charm before anything is sent.
		{"config-unknown-option", "wordpress --path <dir>/wordpress --config nope=1", &fakeRefreshAPI{}},
		{"config-type", "wordpress --path <dir>/wordpress --config posts=many", &fakeRefreshAPI{}},
		{"config-trust", "wordpress --path <dir>/wordpress --config trust=maybe", &fakeRefreshAPI{}},
		// The application's base must be the new charm's (--force-base: its OS at least).
		{"base-unsupported", "wordpress --path <dir>/wordpress", &fakeRefreshAPI{base: &jujupb.Base{Name: "ubuntu", Channel: "20.04"}}},
		{"base-other-os", "wordpress --path <dir>/wordpress --force-base", &fakeRefreshAPI{base: &jujupb.Base{Name: "centos", Channel: "7"}}},
		{"base-changed", "wordpress --path <dir>/wordpress --base ubuntu@24.04", &fakeRefreshAPI{base: &jujupb.Base{Name: "ubuntu", Channel: "22.04"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := refreshWith(t, tt.fake, strings.ReplaceAll(tt.args, "<dir>", dir))
			if err == nil {
				t.Fatal("refreshed")
			}
			if fe := (*cmdutil.FlagError)(nil); errors.As(err, &fe) {
				t.Errorf("usage error (exit 2): %v; want exit 1", err)
			}
			for _, c := range tt.fake.calls {
				if !strings.HasPrefix(c, "FullStatus") {
					t.Errorf("%s sent: nothing may change", c)
				}
			}
			if stdout != "" || strings.Contains(err.Error(), "\n") {
				t.Errorf("stdout %q, error %q: want one error line only", stdout, err)
			}
			out := strings.ReplaceAll(stderr+"ERROR "+err.Error()+"\n", dir, "<dir>")
			golden.Assert(t, out, "refresh/bad-"+tt.name+".stderr.golden")
		})
	}
}

// What jubilant's refresh sends reaches the controller: --force-units, the config from files
// and pairs with --trust, a base the charm lacks accepted with --force-base, the application's
// own base with --base.
func TestRefreshRunFlags(t *testing.T) {
	dir := t.TempDir()
	path := writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("wordpress:\n  title: From file\n  posts: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, args string
		base       *jujupb.Base
		force      bool
		config     map[string]string
	}{
		{name: "plain", args: "wordpress --path " + path},
		{name: "jubilant force and config", args: "wordpress --path " + path + " --force --force-base --force-units --config " + file + " --config posts=9 --trust",
			base: &jujupb.Base{Name: "ubuntu", Channel: "20.04"}, force: true,
			config: map[string]string{"title": "From file", "posts": "9", "trust": "true"}},
		{name: "trust revoked", args: "wordpress --path " + path + " --trust=false --base ubuntu@22.04 --channel edge",
			base: &jujupb.Base{Name: "ubuntu", Channel: "22.04"}, config: map[string]string{"trust": "false"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeRefreshAPI{base: tt.base}
			if _, _, err := refreshWith(t, fake, tt.args); err != nil {
				t.Fatal(err)
			}
			if fake.req.GetForceUnits() != tt.force || !maps.Equal(fake.req.GetConfig(), tt.config) {
				t.Errorf("request: force-units %v, config %v; want %v, %v", fake.req.GetForceUnits(), fake.req.GetConfig(), tt.force, tt.config)
			}
		})
	}
}
