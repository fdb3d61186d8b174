package application

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/core/charm"
)

func TestNewCmdDeploy(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.yaml")
	_ = os.WriteFile(cfgFile, []byte("title: hello\n"), 0o644)
	tests := []struct {
		name, args, wantErr, wantStderr string
		check                           func(t *testing.T, o *deployOptions)
	}{
		{name: "series and base first", args: "--series jammy --base ubuntu@22.04", wantErr: "--series and --base cannot be specified together"},
		{name: "no charm", args: "", wantErr: "no charm or bundle specified"},
		{name: "bad app name", args: "./x Foo", wantErr: `invalid application name "Foo", unexpected uppercase character`},
		{name: "digits after hyphen", args: "./x app-1", wantErr: `invalid application name "app-1", unexpected number(s) found after last hyphen`},
		{name: "too many", args: "./x a b c", wantErr: `unrecognized args: ["b" "c"]`},
		{name: "zero units", args: "./x -n 0", wantErr: "--num-units must be a positive integer"},
		{name: "bad placement", args: "./x --to 4,,", wantErr: `invalid --to parameter "4,,"`},
		{name: "bad channel", args: "./x --channel a/b/c/d", wantErr: `error in --channel: risk in channel "a/b/c/d" not valid, expected one of stable, candidate, beta, edge`},
		{name: "bad series", args: "./x --series foo", wantErr: `attempting to convert "foo" to a base: series "foo" not valid`,
			wantStderr: "WARNING series flag is deprecated, use --base instead\n"},
		{name: "bad base", args: "./x --base ubuntu", wantErr: "expected base string to contain os and channel separated by '@'"},
		{name: "bad constraints", args: "./x --constraints mem=lots", wantErr: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{name: "unknown constraint", args: "./x --constraints foo=1", wantErr: `unknown constraint "foo"`},
		{name: "missing config file", args: "./x --config " + filepath.Join(dir, "nope.yaml"), wantErr: "reading --config file: open " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"},
		{name: "defaults", args: "./wordpress", check: func(t *testing.T, o *deployOptions) {
			if o.CharmArg != "./wordpress" || o.AppName != "" || o.NumUnits != 1 || o.Revision != -1 || !o.base.IsZero() {
				t.Errorf("opts = %+v", o)
			}
		}},
		{name: "everything", args: "./wordpress blog -n 2 --to 0,lxd:1 --constraints mem=2G --constraints cores=2 --config title=hi --config " + cfgFile + " --base ubuntu@22.04 --force -m other",
			check: func(t *testing.T, o *deployOptions) {
				if o.AppName != "blog" || o.NumUnits != 2 || len(o.placement) != 2 || o.cons.String() != "cores=2 mem=2048M" ||
					o.base.String() != "ubuntu@22.04/stable" || !o.Force || o.Model != "other" {
					t.Errorf("opts = %+v", o)
				}
				cfg, err := o.config.resolve("blog")
				if err != nil || cfg["title"] != "hi" {
					t.Errorf("config = %v, %v (pairs must override files)", cfg, err)
				}
			}},
		{name: "series converts", args: "./wordpress --series jammy", wantStderr: "WARNING series flag is deprecated, use --base instead\n",
			check: func(t *testing.T, o *deployOptions) {
				if o.base.String() != "ubuntu@22.04/stable" {
					t.Errorf("base = %s", o.base)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *deployOptions
			f := cmdutil.TestFactory()
			cmd := NewCmdDeploy(f, func(o *deployOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if stderr := f.IO.ErrOut.(*bytes.Buffer).String(); stderr != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr, tt.wantStderr)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// fakeDeployAPI records the calls deploy makes.
type fakeDeployAPI struct {
	defaultBase string
	existing    []string
	deployErr   error
	units       []string // the units Deploy answers
	calls       []string
	archive     []byte
	req         *jujupb.DeployRequest
}

func (f *fakeDeployAPI) GetModel(_ context.Context, ref string) (*jujupb.Model, error) {
	f.calls = append(f.calls, "GetModel "+ref)
	return &jujupb.Model{Name: "default", Uuid: "uuid-default", DefaultBase: f.defaultBase}, nil
}

func (f *fakeDeployAPI) FullStatus(_ context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error) {
	f.calls = append(f.calls, "FullStatus "+model+" "+strings.Join(patterns, ","))
	resp := &jujupb.FullStatusResponse{}
	for _, name := range f.existing {
		resp.Applications = append(resp.Applications, &jujupb.ApplicationStatus{Name: name})
	}
	return resp, nil
}

func (f *fakeDeployAPI) UploadCharm(_ context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error) {
	f.calls = append(f.calls, "UploadCharm "+model)
	f.archive = archive
	return &jujupb.UploadCharmResponse{Url: "local:wordpress-3", Revision: 3}, nil
}

func (f *fakeDeployAPI) Deploy(_ context.Context, req *jujupb.DeployRequest) (*jujupb.DeployResponse, error) {
	f.calls = append(f.calls, "Deploy "+req.GetApplication())
	f.req = req
	return &jujupb.DeployResponse{Units: f.units}, f.deployErr
}

// deployWith validates args like the command does, then runs deploy against fake.
func deployWith(t *testing.T, fake *fakeDeployAPI, repo, args string) (stderr string, err error) {
	t.Helper()
	f := cmdutil.TestFactory()
	cmd := NewCmdDeploy(f, func(o *deployOptions) error {
		o.Client = func(context.Context) (deployAPI, error) { return fake, nil }
		o.ResolveModel = testModel
		o.Repository = func() string { return repo }
		return deployRun(context.Background(), o)
	})
	err = execute(cmd, args)
	return f.IO.ErrOut.(*bytes.Buffer).String(), err
}

func TestDeployRun(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04", "ubuntu@24.04")
	fake := &fakeDeployAPI{}
	stderr, err := deployWith(t, fake, "", "./wordpress -n 2 --constraints mem=2G --to 0,lxd:1 --config title=hi")
	if err != nil {
		t.Fatal(err)
	}
	want := `Located local charm "wordpress", revision 3
Deploying "wordpress" from local charm "wordpress", revision 3 on ubuntu@24.04/stable
`
	if stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	wantCalls := "GetModel uuid-default,FullStatus uuid-default wordpress,UploadCharm uuid-default,Deploy wordpress"
	if got := strings.Join(fake.calls, ","); got != wantCalls {
		t.Errorf("calls = %s", got)
	}
	r := fake.req
	if r.GetModel() != "uuid-default" || r.GetCharmUrl() != "local:wordpress-3" || r.GetNumUnits() != 2 ||
		r.GetConstraints() != "mem=2048M" || r.GetBase().GetName() != "ubuntu" || r.GetBase().GetChannel() != "24.04/stable" ||
		r.GetConfig()["title"] != "hi" {
		t.Errorf("request = %v", r)
	}
	if p := r.GetPlacement(); len(p) != 2 || p[0].GetScope() != "#" || p[0].GetDirective() != "0" ||
		p[1].GetScope() != "lxd" || p[1].GetDirective() != "1" {
		t.Errorf("placement = %v", p)
	}
	zr, err := zip.NewReader(bytes.NewReader(fake.archive), int64(len(fake.archive)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "hooks/install" && f.Mode().Perm()&0o100 == 0 {
			t.Errorf("hooks/install lost its exec bit: %v", f.Mode())
		}
	}
	if got := strings.Join(names, ","); got != "config.yaml,hooks/install,manifest.yaml,metadata.yaml" {
		t.Errorf("archive holds %s", got)
	}
}

func TestDeployRunBases(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	tests := []struct {
		name, args, modelBase, wantBase, wantErr string
	}{
		{name: "charm's only base", args: "./wordpress", wantBase: "22.04/stable"},
		{name: "requested", args: "./wordpress --base ubuntu@22.04", wantBase: "22.04/stable"},
		{name: "model default", args: "./wordpress", modelBase: "ubuntu@22.04", wantBase: "22.04/stable"},
		{name: "not in charm", args: "./wordpress --base ubuntu@20.04", wantErr: `base "ubuntu@20.04" is not supported, supported bases are: ubuntu@22.04`},
		{name: "forced", args: "./wordpress --base ubuntu@20.04 --force", wantBase: "20.04/stable"},
		{name: "old ubuntu forced", args: "./wordpress --base ubuntu@18.04 --force", wantBase: "18.04/stable"},
		{name: "unsupported even forced", args: "./wordpress --base centos@7 --force",
			wantErr: "base: centos@7/stable not supported: the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeDeployAPI{defaultBase: tt.modelBase}
			_, err := deployWith(t, fake, "", tt.args)
			checkErr(t, err, tt.wantErr, false)
			if tt.wantErr != "" {
				if fake.archive != nil {
					t.Error("charm uploaded despite the error")
				}
				return
			}
			if got := fake.req.GetBase().GetChannel(); got != tt.wantBase {
				t.Errorf("base channel = %q, want %q", got, tt.wantBase)
			}
		})
	}
}

func TestDeployRunCharmLookup(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	writeCharm(t, repo, "mysql", false, "ubuntu@22.04")
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	writeCharm(t, dir, "telegraf", true, "ubuntu@22.04")
	_ = os.MkdirAll(filepath.Join(dir, "notcharm"), 0o755)
	_ = os.MkdirAll(filepath.Join(dir, "bundle"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "bundle", "bundle.yaml"), []byte("applications: {}\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "ambiguous"), []byte("x"), 0o644)
	t.Chdir(dir)
	tests := []struct {
		name, repo, args, wantErr, wantApp string
		wantUnits                          int32
	}{
		{name: "repository", repo: repo, args: "mysql", wantApp: "mysql", wantUnits: 1},
		{name: "repository alias", repo: repo, args: "mysql db -n 3", wantApp: "db", wantUnits: 3},
		{name: "local prefix", args: "local:./wordpress", wantApp: "wordpress", wantUnits: 1},
		{name: "absolute path", args: filepath.Join(dir, "wordpress"), wantApp: "wordpress", wantUnits: 1},
		{name: "not in repository", repo: repo, args: "postgresql", wantErr: `charm "postgresql" not found in $JUJU_REPOSITORY`},
		{name: "no repository", args: "postgresql", wantErr: `cannot deploy "postgresql": only local charms are supported; set $JUJU_REPOSITORY or give a path like ./postgresql`},
		{name: "charmhub", args: "ch:postgresql", wantErr: `cannot deploy "ch:postgresql": only local charms are supported; set $JUJU_REPOSITORY or give a path like ./postgresql`},
		{name: "ambiguous", args: "ambiguous", wantErr: "The charm or bundle \"ambiguous\" is ambiguous.\nTo deploy a local charm or bundle, run `juju deploy ./ambiguous`.\nTo deploy a charm or bundle from CharmHub, run `juju deploy ch:ambiguous`."},
		{name: "revision in name", args: "mysql-12", wantErr: "cannot specify revision in a charm or bundle name. Please use --revision."},
		{name: "revision without channel", args: "mysql --revision 3", wantErr: "specifying a revision requires a channel for future upgrades. Please use --channel"},
		{name: "missing path", args: "./nope", wantErr: `no charm was found at "./nope"`},
		{name: "not a charm", args: "./notcharm", wantErr: `invalid charm or bundle provided at "./notcharm"`},
		{name: "bundle", args: "./bundle", wantErr: `bundle/bundle.yaml:1: applications: at least one application must be specified`},
		{name: "bundle options", args: "./wordpress --overlay o.yaml --map-machines existing", wantErr: "options provided but not supported when deploying a charm: --overlay, --map-machines"},
		{name: "subordinate", args: "./telegraf", wantApp: "telegraf", wantUnits: 0},
		{name: "subordinate constraints", args: "./telegraf --constraints mem=1G", wantErr: "cannot use --constraints with subordinate application"},
		{name: "subordinate units", args: "./telegraf -n 2", wantErr: "cannot use --num-units or --to with subordinate application"},
		{name: "subordinate placement", args: "./telegraf --to 0", wantErr: "cannot use --num-units or --to with subordinate application"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeDeployAPI{}
			_, err := deployWith(t, fake, tt.repo, tt.args)
			checkErr(t, err, tt.wantErr, strings.HasPrefix(tt.wantErr, "cannot use --"))
			if tt.wantErr != "" {
				if len(fake.calls) != 0 {
					t.Errorf("requests sent despite the error: %v", fake.calls)
				}
				return
			}
			if fake.req.GetApplication() != tt.wantApp || fake.req.GetNumUnits() != tt.wantUnits {
				t.Errorf("deployed %s with %d units", fake.req.GetApplication(), fake.req.GetNumUnits())
			}
		})
	}
}

func TestDeployRunBadMetadata(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	path := writeCharm(t, dir, "bad", false, "ubuntu@22.04")
	_ = os.WriteFile(filepath.Join(path, "metadata.yaml"), []byte("name: bad\nprovides:\n  juju-db: mysql\n"), 0o644)
	fake := &fakeDeployAPI{}
	_, err := deployWith(t, fake, "", "./bad")
	checkErr(t, err, `attempting to deploy "./bad": charm "bad" using a reserved relation name: "juju-db"`, false)
	if len(fake.calls) != 0 {
		t.Errorf("requests sent: %v", fake.calls)
	}
}

func TestDeployRunAlreadyExists(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	fake := &fakeDeployAPI{deployErr: apierr.Errorf(apierr.AlreadyExists, `cannot add application "wordpress": application already exists`)}
	_, err := deployWith(t, fake, "", "./wordpress")
	want := `cannot add application "wordpress": application already exists
deploy application using an alias name:
    juju deploy <application> <alias>
or use remove-application to remove the existing one and try again.`
	checkErr(t, err, want, false)
	if !errors.Is(err, apierr.AlreadyExists) {
		t.Error("sentinel lost")
	}

	// An existing application is found before the charm is uploaded.
	fake = &fakeDeployAPI{existing: []string{"wordpress"}}
	stderr, err := deployWith(t, fake, "", "./wordpress")
	checkErr(t, err, want, false)
	if stderr != "" || fake.archive != nil {
		t.Errorf("stderr %q, uploaded %v", stderr, fake.archive != nil)
	}
}

func TestDeployRunConfigFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	_ = os.WriteFile("scoped.yaml", []byte("blog:\n  title: News\n  posts: 10\n  public: true\n"), 0o644)
	_ = os.WriteFile("other.yaml", []byte("mysql:\n  title: News\n"), 0o644)
	fake := &fakeDeployAPI{}
	if _, err := deployWith(t, fake, "", "./wordpress blog --config scoped.yaml"); err != nil {
		t.Fatal(err)
	}
	cfg := fake.req.GetConfig()
	if cfg["title"] != "News" || cfg["posts"] != "10" || cfg["public"] != "true" || len(cfg) != 3 {
		t.Errorf("config = %v", cfg)
	}
	_, err := deployWith(t, &fakeDeployAPI{}, "", "./wordpress blog --config other.yaml")
	checkErr(t, err, `--config file "other.yaml" has no settings for application "blog" (only for "mysql")`, false)
}

// deploy --trust sets the application config option trust (jubilant's deploy(trust=True)).
func TestDeployRunTrust(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	for args, want := range map[string]bool{"./wordpress --trust": true, "./wordpress": false} {
		fake := &fakeDeployAPI{}
		if _, err := deployWith(t, fake, "", args); err != nil {
			t.Fatal(err)
		}
		if fake.req.GetTrust() != want {
			t.Errorf("%s: trust = %v", args, fake.req.GetTrust())
		}
	}
}

// A linked hook is archived as the script it points to; a linked directory as a link.
func TestZipCharmFollowsLinksInside(t *testing.T) {
	dir := t.TempDir()
	path := writeCharm(t, dir, "linked", false, "ubuntu@22.04")
	_ = os.Symlink("install", filepath.Join(path, "hooks", "start"))
	_ = os.Symlink("hooks", filepath.Join(path, "alias"))
	archive, err := zipCharm(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := charm.ReadArchiveBytes(archive, charm.DefaultLimits); err != nil {
		t.Errorf("the controller would refuse the archive: %v", err)
	}
	zr, _ := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	found := map[string]bool{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		switch f.Name {
		case "hooks/start":
			found[f.Name] = true
			if !strings.Contains(string(data), "echo installed") || f.Mode().Perm()&0o100 == 0 {
				t.Errorf("linked hook archived as %q mode %v", data, f.Mode())
			}
		case "alias":
			found[f.Name] = true
			if string(data) != "hooks" || f.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("linked directory archived as %q mode %v", data, f.Mode())
			}
		}
	}
	if len(found) != 2 {
		t.Errorf("archive has %v of hooks/start and alias", found)
	}
}

// Nothing leaves the charm and nothing is silently dropped: links out of the charm are
// refused (their target's contents must never reach a unit), and so is a file over the limit.
func TestDeployRefusesLinksOutAndNothingIsSent(t *testing.T) {
	for name, setup := range map[string]func(path string){
		`symlink "hostname" is absolute: "/etc/hostname"`: func(path string) {
			_ = os.Symlink("/etc/hostname", filepath.Join(path, "hostname"))
		},
		`symlink "hooks/up" links out of charm: "../../secret"`: func(path string) {
			_ = os.WriteFile(filepath.Join(filepath.Dir(path), "secret"), []byte("x"), 0o600)
			_ = os.Symlink("../../secret", filepath.Join(path, "hooks", "up"))
		},
		`symlink "lib" links out of charm: ".."`: func(path string) {
			_ = os.Symlink("..", filepath.Join(path, "lib"))
		},
	} {
		dir := t.TempDir()
		t.Chdir(dir)
		setup(writeCharm(t, dir, "wordpress", false, "ubuntu@22.04"))
		fake := &fakeDeployAPI{}
		_, err := deployWith(t, fake, "", "./wordpress")
		checkErr(t, err, `attempting to deploy "./wordpress": archiving charm: `+name, false)
		if fake.req != nil {
			t.Errorf("%s: a deploy was sent", name)
		}
	}
}

func TestDeployRunReportsWarnings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	stderr, err := deployWith(t, &fakeDeployAPI{}, "", "./wordpress --to 0,1 --dry-run --constraints cpu-cores=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Warning: constraint "cpu-cores" is deprecated in favor of "cores".`,
		"WARNING 1 unit(s) will be deployed, extra placement directives will be ignored",
		"ignoring dry-run flag for local charms",
	} {
		if !strings.Contains(stderr, want+"\n") {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}

func TestDeployRunWaitQuietVerbose(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeCharm(t, dir, "wordpress", false, "ubuntu@22.04")
	located := "Located local charm \"wordpress\", revision 3\nDeploying \"wordpress\" from local charm \"wordpress\", revision 3 on ubuntu@22.04/stable\n"
	tests := []struct {
		name, args     string
		quiet, verbose bool
		wantStderr     string
		wantErr        string
	}{
		{name: "quiet", args: "./wordpress -n 2", quiet: true},
		{name: "quiet keeps warnings", args: "./wordpress --to 0,1", quiet: true,
			wantStderr: "WARNING 1 unit(s) will be deployed, extra placement directives will be ignored\n"},
		{name: "verbose", args: "./wordpress -n 2", verbose: true,
			wantStderr: "Uploading charm \"wordpress\" from ./wordpress (BYTES bytes) to model local:admin/default\n" + located +
				"added unit wordpress/0\nadded unit wordpress/1\n"},
		{name: "wait", args: "./wordpress -n 2 --wait",
			wantStderr: located + "waiting for 2 units of wordpress: 1 idle, 1 executing\n2 units of wordpress idle\n"},
		{name: "wait error", args: "./wordpress -n 2 --wait", wantStderr: located + "waiting for 2 units of wordpress: 1 idle, 1 executing\n",
			wantErr: `unit wordpress/1 is in error: hook failed: "install"; once fixed, run "juju resolved wordpress/1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			units := func(second, workload string) *jujupb.FullStatusResponse {
				return &jujupb.FullStatusResponse{Applications: []*jujupb.ApplicationStatus{{Name: "wordpress", Units: []*jujupb.UnitStatus{
					{Name: "wordpress/0", AgentStatus: &jujupb.StatusInfo{Status: "idle"}},
					{Name: "wordpress/1", AgentStatus: &jujupb.StatusInfo{Status: second},
						WorkloadStatus: &jujupb.StatusInfo{Status: workload, Message: `hook failed: "install"`}}}}}}
			}
			last := units("idle", "active")
			if tt.wantErr != "" {
				last = units("idle", "error")
			}
			api := cmdtest.NewWaitAPI(units("executing", "maintenance"), last)
			fake := &fakeDeployAPI{units: []string{"wordpress/1", "wordpress/0"}}
			f := cmdutil.TestFactory()
			f.IO.Quiet, f.IO.Verbose = tt.quiet, tt.verbose
			cmd := NewCmdDeploy(f, func(o *deployOptions) error {
				o.Client = func(context.Context) (deployAPI, error) { return fake, nil }
				o.WaitClient = func(context.Context) (cmdutil.WaitAPI, error) { return api, nil }
				o.ResolveModel = func(context.Context) (*cmdutil.ModelRef, error) {
					return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
				}
				o.Repository = func() string { return "" }
				return deployRun(context.Background(), o)
			})
			err := execute(cmd, tt.args)
			checkErr(t, err, tt.wantErr, false)
			want := strings.Replace(tt.wantStderr, "BYTES", strconv.Itoa(len(fake.archive)), 1)
			if stderr := f.IO.ErrOut.(*bytes.Buffer).String(); stderr != want {
				t.Errorf("stderr = %q\nwant     %q", stderr, want)
			}
			if out := f.IO.Out.(*bytes.Buffer).String(); out != "" {
				t.Errorf("stdout = %q", out)
			}
		})
	}
}
