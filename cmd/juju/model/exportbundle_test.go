package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/bundle"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdExportBundle(t *testing.T) {
	for _, tc := range []struct {
		args     string
		filename string
		defaults bool
		err      string
	}{
		{args: ""},
		{args: "--filename b.yaml --include-charm-defaults", filename: "b.yaml", defaults: true},
		{args: "-m other", filename: ""},
		{args: "x", err: `unrecognized args: ["x"]`},
	} {
		var got *exportBundleOptions
		cmd := NewCmdExportBundle(cmdutil.TestFactory(), func(o *exportBundleOptions) error { got = o; return nil })
		err := execute(cmd, tc.args)
		if tc.err != "" {
			checkErr(t, err, tc.err, true)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got.Filename != tc.filename || got.IncludeCharmDefaults != tc.defaults {
			t.Errorf("%q: filename %q defaults %v", tc.args, got.Filename, got.IncludeCharmDefaults)
		}
	}
}

type fakeExportBundleAPI struct {
	desc    *jujupb.ModelDescription
	configs map[string]*jujupb.ApplicationConfig
	err     error
	calls   []string
}

func (f *fakeExportBundleAPI) DescribeModel(_ context.Context, model string) (*jujupb.ModelDescription, error) {
	f.calls = append(f.calls, "describe "+model)
	return f.desc, f.err
}

func (f *fakeExportBundleAPI) GetConfig(_ context.Context, model, app string) (*jujupb.ApplicationConfig, error) {
	f.calls = append(f.calls, "config "+app)
	cfg, ok := f.configs[app]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", app)
	}
	return cfg, nil
}

func runExportBundle(t *testing.T, api *fakeExportBundleAPI, opts *exportBundleOptions) (string, string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO = ios
	opts.ResolveModel = testModel
	opts.Client = func(context.Context) (exportBundleAPI, error) { return api, nil }
	err := exportBundleRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

// exportFixture: wordpress on three machines (one shared with mysql), with config, constraints,
// annotations and exposed; mysql trusted, with an uploaded resource (left out, as Juju leaves
// out what is not a charm store revision); the logging subordinate; a dying
// application and unit, a machine without units, a peer relation and a dying relation, all
// left out.
func exportFixture() *jujupb.ModelDescription {
	return &jujupb.ModelDescription{
		Name: "default", DefaultBase: "ubuntu@22.04", Revision: 42,
		Applications: []*jujupb.DescribedApplication{
			{
				Name: "logging", CharmName: "logging", CharmUrl: "local:logging-2", CharmRevision: 2, Base: "ubuntu@22.04",
				Subordinate: true, Life: "alive",
				Units: []*jujupb.DescribedUnit{{Name: "logging/0", Life: "alive"}, {Name: "logging/1", Life: "alive"}},
			},
			{
				Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-0", Base: "ubuntu@22.04", Life: "alive", Trust: true,
				ConfigJson: map[string]string{"fail-hook": `""`},
				Resources:  []*jujupb.Resource{{Name: "backup", Revision: 3}, {Name: "never-uploaded"}},
				Units:      []*jujupb.DescribedUnit{{Name: "mysql/0", Machine: "0", Life: "alive"}},
			},
			{Name: "old", CharmName: "old", CharmUrl: "local:old-0", Base: "ubuntu@22.04", Life: "dying"},
			{
				Name: "wordpress", CharmName: "wordpress", CharmUrl: "local:wordpress-1", CharmRevision: 1, Base: "ubuntu@22.04",
				Life: "alive", Constraints: "mem=2048M", Exposed: true,
				ExposedEndpoints: []*jujupb.ExposedEndpoint{{ToCidrs: []string{"0.0.0.0/0", "::/0"}}},
				ConfigJson:       map[string]string{"blog-title": `"News: \"daily\""`, "port": "80", "ratio": "0.5", "debug": "true", "motd": "\"line one\\nline two\""},
				Annotations:      map[string]string{"gui-x": "100", "owner": "web team"},
				Units: []*jujupb.DescribedUnit{
					{Name: "wordpress/0", Machine: "0", Life: "alive"},
					{Name: "wordpress/1", Machine: "1", Life: "dying"},
					{Name: "wordpress/2", Machine: "2", Life: "alive"},
					{Name: "wordpress/10", Machine: "10", Life: "alive"},
				},
			},
		},
		Machines: []*jujupb.DescribedMachine{
			{Id: "0", Base: "ubuntu@22.04", Life: "alive", Annotations: map[string]string{"rack": "r1"}},
			{Id: "1", Base: "ubuntu@22.04", Constraints: "mem=2048M", Life: "alive"},
			{Id: "2", Base: "ubuntu@22.04", Constraints: "mem=2048M", Life: "alive"},
			{Id: "5", Base: "ubuntu@22.04", Life: "alive"},
			{Id: "10", Base: "ubuntu@22.04", Constraints: "mem=2048M", Life: "alive"},
		},
		Relations: []*jujupb.DescribedRelation{
			{Endpoints: []string{"logging:juju-info", "wordpress:juju-info"}, Life: "alive", Interface: "juju-info"},
			{Endpoints: []string{"mysql:cluster"}, Life: "alive", Interface: "mysql-ha"},
			{Endpoints: []string{"mysql:db", "wordpress:db"}, Life: "alive", Interface: "mysql"},
			{Endpoints: []string{"old:db", "wordpress:db"}, Life: "dying", Interface: "mysql"},
		},
	}
}

// TestExportBundleGolden keeps the bundle's shape: Juju's keys in Juju's order, machines and
// placements of the units alive, options as typed values, the overlay document for an exposure
// narrower than everything, and the base rule (one base: it is the default-base; several: each
// application and machine off the default says its own).
func TestExportBundleGolden(t *testing.T) {
	narrow := exportFixture()
	narrow.Applications[3].ExposedEndpoints = []*jujupb.ExposedEndpoint{
		{Endpoint: "website", ToCidrs: []string{"10.0.0.0/8", "192.168.0.0/16"}},
		{Endpoint: "", ToSpaces: []string{"alpha"}},
	}
	onlyOther := exportFixture()
	onlyOther.DefaultBase = ""
	for _, a := range onlyOther.Applications {
		a.Base = "ubuntu@20.04"
	}
	for _, m := range onlyOther.Machines {
		m.Base = "ubuntu@20.04"
	}
	mixed := exportFixture()
	mixed.DefaultBase = ""
	mixed.Applications[1].Base = "ubuntu@24.04"
	mixed.Machines[0].Base = "ubuntu@24.04"
	mixedOffDefault := proto.Clone(mixed).(*jujupb.ModelDescription)
	mixedOffDefault.Applications[1].Base = "ubuntu@20.04"
	mixedOffDefault.Machines[0].Base = "ubuntu@20.04"
	for _, tc := range []struct {
		name string
		desc *jujupb.ModelDescription
	}{
		{"full", exportFixture()},
		{"exposed-endpoints", narrow},
		{"one-base-not-default", onlyOther},
		{"mixed-bases", mixed},
		{"mixed-bases-none-default", mixedOffDefault},
	} {
		out, errOut, err := runExportBundle(t, &fakeExportBundleAPI{desc: tc.desc}, &exportBundleOptions{})
		if err != nil || errOut != "" {
			t.Fatalf("%s: %v %q", tc.name, err, errOut)
		}
		golden.Assert(t, out, "export-bundle/"+tc.name+".stdout.golden")
	}
}

// --include-charm-defaults adds the charm's defaults under the values the user set; options
// without a default stay out.
func TestExportBundleIncludeCharmDefaults(t *testing.T) {
	desc := exportFixture()
	api := &fakeExportBundleAPI{desc: desc, configs: map[string]*jujupb.ApplicationConfig{}}
	for _, a := range desc.Applications {
		api.configs[a.Name] = &jujupb.ApplicationConfig{Application: a.Name, Charm: a.CharmUrl, Options: []*jujupb.ConfigOption{
			{Name: "fail-hook", Type: "string", DefaultJson: `""`, ValueJson: `""`},
			{Name: "hang-hook", Type: "string", DefaultJson: `""`, ValueJson: `""`},
			{Name: "no-default", Type: "int"},
		}}
	}
	api.configs["wordpress"].Options = append(api.configs["wordpress"].Options, &jujupb.ConfigOption{Name: "port", Type: "int", DefaultJson: "8080", ValueJson: "80"})
	out, errOut, err := runExportBundle(t, api, &exportBundleOptions{IncludeCharmDefaults: true})
	if err != nil || errOut != "" {
		t.Fatalf("%v %q", err, errOut)
	}
	golden.Assert(t, out, "export-bundle/include-charm-defaults.stdout.golden")

	// The charm changed between the two reads: refused, nothing written.
	api.configs["mysql"].Charm = "local:mysql-1"
	out, _, err = runExportBundle(t, api, &exportBundleOptions{IncludeCharmDefaults: true})
	if err == nil || err.Error() != `the charm of "mysql" changed while exporting (local:mysql-0, now local:mysql-1); try again` || out != "" {
		t.Errorf("charm changed: %v, stdout %q", err, out)
	}
}

// --filename writes the file (replacing what was there, as Juju does) and says so on stderr;
// stdout stays empty.
func TestExportBundleToFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bundle.yaml")
	if err := os.WriteFile(file, []byte("old content that is longer than nothing at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runExportBundle(t, &fakeExportBundleAPI{desc: exportFixture()}, &exportBundleOptions{Filename: file})
	if err != nil || out != "" {
		t.Fatalf("%v, stdout %q", err, out)
	}
	if want := "Bundle successfully exported to " + file + "\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, string(data), "export-bundle/full.stdout.golden")

	_, errOut, err = runExportBundle(t, &fakeExportBundleAPI{desc: exportFixture()}, &exportBundleOptions{Filename: filepath.Join(file, "x.yaml")})
	if err == nil || !strings.HasPrefix(err.Error(), "while creating local file: ") || errOut != "" {
		t.Errorf("unwritable file: %v, stderr %q", err, errOut)
	}
}

// Refusals: a model without applications (Juju's words), the controller's error with context.
func TestExportBundleErrors(t *testing.T) {
	empty := &jujupb.ModelDescription{Name: "default", Machines: []*jujupb.DescribedMachine{{Id: "0", Life: "alive"}}}
	_, _, err := runExportBundle(t, &fakeExportBundleAPI{desc: empty}, &exportBundleOptions{})
	if err == nil || err.Error() != "nothing to export as there are no applications" {
		t.Errorf("empty model: %v", err)
	}
	onlyDying := &jujupb.ModelDescription{Name: "default", Applications: []*jujupb.DescribedApplication{{Name: "old", Life: "dying"}}}
	_, _, err = runExportBundle(t, &fakeExportBundleAPI{desc: onlyDying}, &exportBundleOptions{})
	if err == nil || err.Error() != "nothing to export as there are no applications" {
		t.Errorf("only dying applications: %v", err)
	}
	_, _, err = runExportBundle(t, &fakeExportBundleAPI{err: apierr.Errorf(apierr.NotFound, `model "x" not found`)}, &exportBundleOptions{})
	if err == nil || err.Error() != `describing model "default": model "x" not found` || !errors.Is(err, apierr.NotFound) {
		t.Errorf("controller error: %v", err)
	}
	bad := exportFixture()
	bad.Applications[1].ConfigJson = map[string]string{"x": "{"}
	_, _, err = runExportBundle(t, &fakeExportBundleAPI{desc: bad}, &exportBundleOptions{})
	if err == nil {
		t.Errorf("a value that is not JSON: no error")
	}
}

// What export-bundle writes is a bundle deploy reads: every golden reads and composes (the
// overlay document included) without an error.
func TestExportBundleReadsBack(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "golden", "export-bundle", "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("goldens: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := bundle.ReadFiles(bundle.File{Name: filepath.Base(f), Dir: t.TempDir(), Data: data})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if _, err := bundle.Compose(docs); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
