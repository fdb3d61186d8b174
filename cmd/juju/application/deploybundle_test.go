package application

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
)

// fakeBundleAPI is a small model: it answers DescribeModel with desc and records every call,
// numbering machines and units as a controller does.
type fakeBundleAPI struct {
	desc     *jujupb.ModelDescription
	calls    []string
	machines int
	units    map[string]int
	unitOn   map[string]string // unit → machine
	failOn   string            // a call that fails
}

var _ deployAPI = (*fakeBundleAPI)(nil)

func newFakeBundleAPI(desc *jujupb.ModelDescription) *fakeBundleAPI {
	if desc == nil {
		desc = &jujupb.ModelDescription{Name: "default"}
	}
	f := &fakeBundleAPI{desc: desc, units: map[string]int{}, unitOn: map[string]string{}}
	for _, m := range desc.GetMachines() {
		if n, err := strconv.Atoi(m.GetId()); err == nil && n >= f.machines {
			f.machines = n + 1
		}
	}
	return f
}

func (f *fakeBundleAPI) call(format string, args ...any) error {
	c := fmt.Sprintf(format, args...)
	f.calls = append(f.calls, c)
	if f.failOn != "" && strings.HasPrefix(c, f.failOn) {
		return apierr.Errorf(apierr.NotValid, "refused")
	}
	return nil
}

func (f *fakeBundleAPI) GetModel(context.Context, string) (*jujupb.Model, error) {
	return &jujupb.Model{Name: "default", Uuid: "uuid-default"}, f.call("GetModel")
}

func (f *fakeBundleAPI) DescribeModel(context.Context, string) (*jujupb.ModelDescription, error) {
	return f.desc, f.call("DescribeModel")
}

func (f *fakeBundleAPI) UploadCharm(_ context.Context, _ string, archive []byte) (*jujupb.UploadCharmResponse, error) {
	n := len(f.calls)
	if len(archive) == 0 {
		return nil, fmt.Errorf("no archive")
	}
	return &jujupb.UploadCharmResponse{Url: fmt.Sprintf("local:charm-%d", n)}, f.call("UploadCharm")
}

func (f *fakeBundleAPI) Deploy(_ context.Context, req *jujupb.DeployRequest) (*jujupb.DeployResponse, error) {
	var opts []string
	for k, v := range req.GetConfig() {
		opts = append(opts, k+"="+v)
	}
	return &jujupb.DeployResponse{}, f.call("Deploy %s base=%s/%s units=%d cons=%q config=%v trust=%v resources=%d", req.GetApplication(),
		req.GetBase().GetName(), req.GetBase().GetChannel(), req.GetNumUnits(), req.GetConstraints(), opts, req.GetTrust(), len(req.GetResources()))
}

func (f *fakeBundleAPI) AddMachines(_ context.Context, req *jujupb.AddMachinesRequest) ([]*jujupb.AddMachineResult, error) {
	var out []*jujupb.AddMachineResult
	var desc []string
	for _, p := range req.GetParams() {
		id := strconv.Itoa(f.machines)
		f.machines++
		out = append(out, &jujupb.AddMachineResult{MachineId: id})
		desc = append(desc, fmt.Sprintf("%s(%s/%s %s)", id, p.GetBase().GetName(), p.GetBase().GetChannel(), p.GetConstraints()))
	}
	return out, f.call("AddMachines %s", strings.Join(desc, " "))
}

func (f *fakeBundleAPI) AddUnits(_ context.Context, req *jujupb.AddUnitsRequest) (*jujupb.AddUnitsResponse, error) {
	app := req.GetApplication()
	var units, desc []string
	for i := 0; i < int(req.GetNumUnits()); i++ {
		u := app + "/" + strconv.Itoa(f.units[app])
		f.units[app]++
		machine := ""
		if i < len(req.GetPlacement()) {
			machine = req.GetPlacement()[i].GetDirective()
		} else {
			machine = strconv.Itoa(f.machines)
			f.machines++
		}
		f.unitOn[u] = machine
		units = append(units, u)
		desc = append(desc, u+"@"+machine)
	}
	return &jujupb.AddUnitsResponse{Units: units}, f.call("AddUnits %s %d placements=%d: %s", app, req.GetNumUnits(), len(req.GetPlacement()), strings.Join(desc, " "))
}

func (f *fakeBundleAPI) Integrate(_ context.Context, _ string, eps []string) (*jujupb.IntegrateResponse, error) {
	return &jujupb.IntegrateResponse{}, f.call("Integrate %s", strings.Join(eps, " "))
}

func (f *fakeBundleAPI) SetConfig(_ context.Context, req *jujupb.SetConfigRequest) error {
	return f.call("SetConfig %s %v", req.GetApplication(), req.GetValues())
}

func (f *fakeBundleAPI) SetConstraints(_ context.Context, _, app, cons string) error {
	return f.call("SetConstraints %s %q", app, cons)
}

func (f *fakeBundleAPI) Expose(_ context.Context, req *jujupb.ExposeRequest) error {
	return f.call("Expose %s %d", req.GetApplication(), len(req.GetEndpoints()))
}

func (f *fakeBundleAPI) SetAnnotations(_ context.Context, req *jujupb.SetAnnotationsRequest) error {
	return f.call("SetAnnotations app=%s machine=%s %v", req.GetApplication(), req.GetMachine(), req.GetAnnotations())
}

func (f *fakeBundleAPI) SetCharm(_ context.Context, req *jujupb.SetCharmRequest) (*jujupb.SetCharmResponse, error) {
	return &jujupb.SetCharmResponse{}, f.call("SetCharm %s %s", req.GetApplication(), req.GetCharmUrl())
}

func (f *fakeBundleAPI) UploadResource(_ context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error) {
	return &jujupb.UploadResourceResponse{PendingId: "pending-" + req.GetName()}, f.call("UploadResource %s %s pending=%v", req.GetApplication(), req.GetName(), req.GetPending())
}

func (f *fakeBundleAPI) FullStatus(_ context.Context, _ string, patterns []string) (*jujupb.FullStatusResponse, error) {
	resp := &jujupb.FullStatusResponse{}
	for _, p := range patterns {
		if m, ok := f.unitOn[p]; ok {
			app, _, _ := strings.Cut(p, "/")
			resp.Applications = append(resp.Applications, &jujupb.ApplicationStatus{Name: app, Units: []*jujupb.UnitStatus{{Name: p, Machine: m}}})
		}
	}
	return resp, f.call("FullStatus %s", strings.Join(patterns, ","))
}

// deployBundleWith runs "juju deploy args" from the module root against fake.
func deployBundleWith(t *testing.T, fake *fakeBundleAPI, repo, args string) (stdout, stderr string, err error) {
	t.Helper()
	f := cmdutil.TestFactory()
	cmd := NewCmdDeploy(f, func(o *deployOptions) error {
		o.Client = func(context.Context) (deployAPI, error) { return fake, nil }
		o.ResolveModel = testModel
		o.Repository = func() string { return repo }
		return deployRun(context.Background(), o)
	})
	err = execute(cmd, args)
	return f.IO.Out.(*bytes.Buffer).String(), f.IO.ErrOut.(*bytes.Buffer).String(), err
}

func chdirRoot(t *testing.T) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
}

func TestDeployBundleDryRun(t *testing.T) {
	chdirRoot(t)
	fake := newFakeBundleAPI(nil)
	stdout, stderr, err := deployBundleWith(t, fake, "", "./testdata/bundles/blog.yaml --overlay testdata/bundles/blog-overlay.yaml --dry-run")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, stdout, "deploy-bundle/dry-run.stdout.golden")
	if stderr != "" {
		t.Errorf("stderr = %q", stderr)
	}
	if got := strings.Join(fake.calls, ","); got != "DescribeModel" {
		t.Errorf("a dry run called %s", got)
	}
}

func TestDeployBundleRun(t *testing.T) {
	chdirRoot(t)
	fake := newFakeBundleAPI(nil)
	stdout, stderr, err := deployBundleWith(t, fake, "", "./testdata/bundles/blog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, stdout, "deploy-bundle/run.stdout.golden")
	if stderr != "Deploy of bundle completed.\n" {
		t.Errorf("stderr = %q", stderr)
	}
	golden.Assert(t, strings.Join(fake.calls, "\n")+"\n", "deploy-bundle/run.calls.golden")
}

// TestDeployBundleAgain: the model as the first deploy left it gives no changes and no call
// but the description.
func TestDeployBundleAgain(t *testing.T) {
	chdirRoot(t)
	charms := &bundleCharms{opts: &deployOptions{IO: cmdutil.TestFactory().IO}, archives: map[string][]byte{}}
	sha := func(name string) string {
		ch, err := charms.load("./"+name, filepath.Join("testdata", "charms", name))
		if err != nil {
			t.Fatal(err)
		}
		return ch.SHA256
	}
	app := func(name, machine string, units ...string) *jujupb.DescribedApplication {
		a := &jujupb.DescribedApplication{Name: name, CharmName: name, CharmUrl: "local:" + name + "-0", CharmSha256: sha(name),
			Base: "ubuntu@22.04", Life: "alive"}
		for i, m := range units {
			a.Units = append(a.Units, &jujupb.DescribedUnit{Name: name + "/" + strconv.Itoa(i), Machine: m, Life: "alive"})
		}
		return a
	}
	mysql := app("mysql", "", "0")
	mysql.Annotations = map[string]string{"gui-x": "100"}
	wordpress := app("wordpress", "", "1", "2")
	wordpress.ConfigJson = map[string]string{"blog-title": `"Engineering"`}
	wordpress.Exposed = true
	wordpress.ExposedEndpoints = []*jujupb.ExposedEndpoint{{ToCidrs: []string{"0.0.0.0/0", "::/0"}}}
	logging := app("logging", "")
	logging.Subordinate = true
	desc := &jujupb.ModelDescription{
		Applications: []*jujupb.DescribedApplication{mysql, wordpress, app("haproxy", "", "1"), logging},
		Machines: []*jujupb.DescribedMachine{
			{Id: "0", Base: "ubuntu@22.04", Life: "alive", Annotations: map[string]string{"role": "database"}},
			{Id: "1", Base: "ubuntu@22.04", Life: "alive"}, {Id: "2", Base: "ubuntu@22.04", Life: "alive"},
		},
		Relations: []*jujupb.DescribedRelation{
			{Endpoints: []string{"mysql:db", "wordpress:db"}, Life: "alive"},
			{Endpoints: []string{"haproxy:reverseproxy", "wordpress:website"}, Life: "alive"},
			{Endpoints: []string{"logging:juju-info", "wordpress:juju-info"}, Life: "alive"},
			{Endpoints: []string{"wordpress:cluster"}, Life: "alive"},
		},
	}
	fake := newFakeBundleAPI(desc)
	stdout, stderr, err := deployBundleWith(t, fake, "", "./testdata/bundles/blog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" || stderr != "No changes to apply.\n" {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if got := strings.Join(fake.calls, ","); got != "DescribeModel" {
		t.Errorf("calls = %s", got)
	}
	// The overlay adds a unit, an option and an annotation: only those.
	fake = newFakeBundleAPI(desc)
	stdout, _, err = deployBundleWith(t, fake, "", "./testdata/bundles/blog.yaml --overlay ./testdata/bundles/blog-overlay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := `Executing changes:
- set application options for wordpress
- set annotations for wordpress
- add new machine 3
- add unit wordpress/2 to new machine 3
`
	if stdout != want {
		t.Errorf("stdout = %s", stdout)
	}
	wantCalls := "DescribeModel,SetConfig wordpress map[blog-title:Overlaid],SetAnnotations app=wordpress machine= map[owner:web-team]," +
		"AddMachines 3(ubuntu/22.04/stable ),AddUnits wordpress 1 placements=1: wordpress/0@3"
	if got := strings.Join(fake.calls, ","); got != wantCalls {
		t.Errorf("calls = %s", got)
	}
}

// TestDeployBundleDirectory: a directory with bundle.yaml and its charms inside, the charms
// named relative to it.
func TestDeployBundleDirectory(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"mysql", "wordpress"} {
		copyDir(t, filepath.Join(root, "testdata", "charms", name), filepath.Join(dir, "blog", "charms", name))
	}
	bundleYAML := "default-base: ubuntu@22.04\napplications:\n  mysql:\n    charm: ./charms/mysql\n    num_units: 1\n" +
		"  wordpress:\n    charm: ./charms/wordpress\n    num_units: 1\nrelations:\n  - [wordpress, mysql]\n"
	if err := os.WriteFile(filepath.Join(dir, "blog", "bundle.yaml"), []byte(bundleYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	fake := newFakeBundleAPI(nil)
	stdout, _, err := deployBundleWith(t, fake, "", "./blog")
	if err != nil {
		t.Fatal(err)
	}
	want := `Executing changes:
- upload charm ./charms/mysql for base ubuntu@22.04
- deploy application mysql on ubuntu@22.04
- upload charm ./charms/wordpress for base ubuntu@22.04
- deploy application wordpress on ubuntu@22.04
- add relation wordpress - mysql
- add unit mysql/0 to new machine 0
- add unit wordpress/0 to new machine 1
`
	if stdout != want {
		t.Errorf("stdout = %s", stdout)
	}
	if got := strings.Join(fake.calls, ","); !strings.Contains(got, "Integrate wordpress:db mysql:db") {
		t.Errorf("calls = %s", got)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeployBundleRefusals: bad input fails before any call.
func TestDeployBundleRefusals(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	trusted := filepath.Join(dir, "trusted.yaml")
	_ = os.WriteFile(trusted, []byte("applications:\n  mysql:\n    charm: "+filepath.Join(mustAbs(t, "testdata/charms/mysql"))+"\n    trust: true\n"), 0o644)
	tests := []struct {
		name, args, want string
		usage            bool
	}{
		{name: "charm options", args: "./testdata/bundles/blog.yaml -n 2 --config a=b",
			want: "options provided but not supported when deploying a bundle: --config, -n"},
		{name: "application name", args: "./testdata/bundles/blog.yaml blog",
			want: `cannot give an application name ("blog") when deploying a bundle: the bundle names its applications`},
		{name: "map-machines", args: "./testdata/bundles/blog.yaml --map-machines 0=x", usage: true,
			want: `error in --map-machines: machine-id "x" is not a top level machine id`},
		{name: "missing overlay", args: "./testdata/bundles/blog.yaml --overlay nope.yaml",
			want: `unable to process overlays: "nope.yaml" not found`},
		{name: "unknown key", args: "./testdata/bundles/bad/unknown-key.yaml",
			want: `testdata/bundles/bad/unknown-key.yaml:5: applications.mysql: unknown key "colour"`},
		{name: "overlay removing a related application", args: "./testdata/bundles/blog.yaml --overlay testdata/bundles/bad/remove-related.yaml",
			want: `testdata/bundles/bad/remove-related.yaml:3: applications.mysql: cannot remove application "mysql": relation "wordpress:db mysql:db" at testdata/bundles/blog.yaml:32 still names it`},
		{name: "trust", args: trusted,
			want: "Bundle cannot be deployed without trusting applications with your cloud credentials.\nPlease repeat the deploy command with the --trust argument if you consent to trust the following application(s):\n  - mysql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeBundleAPI(nil)
			_, _, err := deployBundleWith(t, fake, "", tt.args)
			checkErr(t, err, tt.want, tt.usage)
			if len(fake.calls) != 0 {
				t.Errorf("calls despite the error: %v", fake.calls)
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestDeployBundleRepository: a bare charm name is looked up in $JUJU_REPOSITORY, as deploy
// does.
func TestDeployBundleRepository(t *testing.T) {
	chdirRoot(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "b.yaml")
	_ = os.WriteFile(path, []byte("applications:\n  db:\n    charm: mysql\n    num_units: 1\n"), 0o644)
	fake := newFakeBundleAPI(nil)
	stdout, _, err := deployBundleWith(t, fake, mustAbs(t, "testdata/charms"), path+" --dry-run")
	if err != nil {
		t.Fatal(err)
	}
	want := "Changes to deploy bundle:\n- upload charm mysql for base ubuntu@22.04\n- deploy application db on ubuntu@22.04\n- add unit db/0 to new machine 0\n"
	if stdout != want {
		t.Errorf("stdout = %q", stdout)
	}
	_, _, err = deployBundleWith(t, fake, "", path)
	checkErr(t, err, path+`:3: applications.db.charm: charm "mysql" is not a path and $JUJU_REPOSITORY is not set: there is no charm store; give the charm's path, relative to the bundle (./mysql)`, false)
}

func TestNormalizeArchive(t *testing.T) {
	chdirRoot(t)
	charms := &bundleCharms{opts: &deployOptions{IO: cmdutil.TestFactory().IO}, archives: map[string][]byte{}}
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "charms", "mysql"), filepath.Join(dir, "mysql"))
	first, err := charms.load("./mysql", filepath.Join(dir, "mysql"))
	if err != nil {
		t.Fatal(err)
	}
	// Touching every file changes no byte of the archive.
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			_ = os.Chtimes(path, fixedTouch, fixedTouch)
		}
		return nil
	})
	second, err := charms.load("./mysql", filepath.Join(dir, "mysql"))
	if err != nil {
		t.Fatal(err)
	}
	if first.SHA256 != second.SHA256 {
		t.Errorf("touching the charm changed its archive: %s, %s", first.SHA256, second.SHA256)
	}
}

var fixedTouch = time.Date(2011, 2, 3, 4, 5, 6, 0, time.UTC)
