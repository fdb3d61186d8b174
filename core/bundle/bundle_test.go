package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/internal/testutil/golden"
)

// bundlesDir is testdata/bundles at the module root: the sample bundles, next to the sample
// charms they deploy.
var bundlesDir = filepath.Join("..", "..", "testdata", "bundles")

// readFiles reads sample bundles by their name under testdata/bundles, which errors give.
func readFiles(t *testing.T, names ...string) ([]File, error) {
	t.Helper()
	var files []File
	for _, name := range names {
		path := filepath.Join(bundlesDir, filepath.FromSlash(name))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, File{Name: name, Dir: dir, Data: data})
	}
	return files, nil
}

// testLoader reads a charm directory; its archive "hash" is its name with a suffix the test
// sets, so that a test can make a charm differ from the model's.
func testLoader(changed ...string) CharmLoader {
	return func(_, path string) (*Charm, error) {
		ch, err := charm.Read(path)
		if err != nil {
			return nil, err
		}
		sha := "sha-" + ch.Meta.Name
		for _, c := range changed {
			if c == ch.Meta.Name {
				sha += "-new"
			}
		}
		return &Charm{Charm: ch, SHA256: sha}, nil
	}
}

// check reads, composes and checks sample bundles.
func check(t *testing.T, load CharmLoader, names ...string) (*Checked, error) {
	t.Helper()
	files, _ := readFiles(t, names...)
	docs, err := ReadFiles(files...)
	if err != nil {
		return nil, err
	}
	b, err := Compose(docs)
	if err != nil {
		return nil, err
	}
	return Check(b, load, nil)
}

func mustCheck(t *testing.T, names ...string) *Checked {
	t.Helper()
	c, err := check(t, testLoader(), names...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadComposeOverlay(t *testing.T) {
	c := mustCheck(t, "blog.yaml", "blog-overlay.yaml")
	wp := c.Applications["wordpress"]
	if wp.NumUnits.Value != 3 || wp.NumUnits.Pos.String() != "blog-overlay.yaml:4" {
		t.Errorf("num_units = %d at %s, want 3 from the overlay", wp.NumUnits.Value, wp.NumUnits.Pos)
	}
	if v := wp.Options.Value["blog-title"]; v.Value != "Overlaid" || v.Pos.String() != "blog-overlay.yaml:6" {
		t.Errorf("blog-title = %v at %s", v.Value, v.Pos)
	}
	if !wp.Expose.Value || wp.Expose.Pos.String() != "blog.yaml:24" {
		t.Errorf("expose = %v at %s, kept from the base", wp.Expose.Value, wp.Expose.Pos)
	}
	if got := wp.Annotations.Value["owner"].Value; got != "web-team" {
		t.Errorf("annotations = %v", wp.Annotations.Value)
	}
	if len(c.Relations) != 3 || c.Relations[2].Endpoints[0].String() != "wordpress:juju-info" || c.Relations[2].Endpoints[1].String() != "logging:juju-info" {
		t.Errorf("relations = %v (the last one inferred as wordpress:juju-info logging:juju-info)", c.Relations)
	}
	if c.DefaultBase.DisplayString() != "ubuntu@22.04" {
		t.Errorf("default base = %s", c.DefaultBase)
	}
	want := []string{"0", "1", "new"}
	var got []string
	for _, p := range c.Placements["wordpress"] {
		got = append(got, p.Raw)
	}
	if strings.Join(got, ",") != "1,new" || c.Placements["haproxy"][0].App != "wordpress" || c.Placements["haproxy"][0].Unit != 0 {
		t.Errorf("placements = %v / %v (want %v)", got, c.Placements["haproxy"], want[1:])
	}
}

// TestBadBundles: every bad bundle the issue names is refused with its file, line, key and
// reason, before anything else happens.
func TestBadBundles(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{name: "unknown key", files: []string{"bad/unknown-key.yaml"},
			want: `bad/unknown-key.yaml:5: applications.mysql: unknown key "colour"`},
		{name: "charm path missing", files: []string{"bad/missing-charm.yaml"},
			want: `bad/missing-charm.yaml:6: applications.postgresql.charm: charm path in application "postgresql" does not exist: ../../charms/postgresql`},
		{name: "placement to an undefined machine", files: []string{"bad/undefined-machine.yaml"},
			want: `bad/undefined-machine.yaml:11: applications.wordpress.to: placement "3" refers to a machine not defined in this bundle`},
		{name: "relation to an unknown endpoint", files: []string{"bad/unknown-endpoint.yaml"},
			want: `bad/unknown-endpoint.yaml:9: relations[0]: charm "../../charms/mysql" used by application "mysql" does not define relation "database"`},
		{name: "placement cycle", files: []string{"bad/placement-cycle.yaml"},
			want: `bad/placement-cycle.yaml:5: applications.mysql.to: cycle in placement directives for: mysql, wordpress`},
		{name: "overlay removes a related application", files: []string{"blog.yaml", "bad/remove-related.yaml"},
			want: `bad/remove-related.yaml:3: applications.mysql: cannot remove application "mysql": relation "wordpress:db mysql:db" at blog.yaml:32 still names it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := check(t, testLoader(), tt.files...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Errorf("err is %T, not Errors", err)
			}
		})
	}
}

// TestBadInline covers the other checks, each with its message.
func TestBadInline(t *testing.T) {
	charms, err := filepath.Abs(filepath.Join(bundlesDir, "..", "charms"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"syntax", "applications: [\n", "b.yaml:1: invalid YAML: did not find expected node content"},
		{"empty", "", "b.yaml:1: bundle is empty"},
		{"no applications", "description: x\n", "b.yaml:1: applications: at least one application must be specified"},
		{"top-level unknown", "aplications: {}\n", `b.yaml:1: unknown key "aplications"`},
		{"services and applications", "services: {}\napplications: {}\n", `b.yaml:2: "services" and "applications" cannot both be given (services is the old name of applications)`},
		{"store charm", "applications:\n  pg:\n    charm: ch:postgresql\n", `b.yaml:3: applications.pg.charm: charm "ch:postgresql" is not a local charm: there is no charm store; give the charm's path, relative to the bundle (./name)`},
		{"bare name", "applications:\n  pg:\n    charm: postgresql\n", `b.yaml:3: applications.pg.charm: charm "postgresql" is not a path: there is no charm store; give the charm's path, relative to the bundle (./postgresql)`},
		{"container", "machines:\n  \"0\": {}\napplications:\n  mysql:\n    charm: ./mysql\n    num_units: 2\n    to: [\"0\", \"lxd:0\"]\n",
			`b.yaml:7: applications.mysql.to: placement "lxd:0" puts the unit in a lxd container: containers are not supported, the local provider deploys units to machines`},
		{"num_units type", "applications:\n  mysql:\n    charm: ./mysql\n    num_units: two\n", `b.yaml:4: applications.mysql.num_units: expected an integer, got "two"`},
		{"too many placements", "applications:\n  mysql:\n    charm: ./mysql\n    num_units: 1\n    to: [new, new]\n", `b.yaml:5: applications.mysql.to: too many units specified in unit placement for application "mysql"`},
		{"subordinate units", "applications:\n  logging:\n    charm: ./logging\n    num_units: 2\n", `b.yaml:4: applications.logging.num_units: application "logging" is subordinate but has non-zero num_units`},
		{"unknown option", "applications:\n  mysql:\n    charm: ./mysql\n    options:\n      port: 3306\n", `b.yaml:5: applications.mysql.options.port: configuration option "port" not found in charm "./mysql"`},
		{"option type", "applications:\n  wordpress:\n    charm: ./wordpress\n    options:\n      blog-title: 42\n", `b.yaml:5: applications.wordpress.options.blog-title: option "blog-title" expected string, got 42`},
		{"unreferenced machine", "machines:\n  \"4\": {}\napplications:\n  mysql:\n    charm: ./mysql\n", `b.yaml:2: machines.4: machine "4" is not referred to by a placement directive`},
		{"bad constraints", "applications:\n  mysql:\n    charm: ./mysql\n    constraints: mem=lots\n", `b.yaml:4: applications.mysql.constraints: invalid constraints "mem=lots" in application "mysql": bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{"bad base", "default-base: ubuntu\napplications:\n  mysql:\n    charm: ./mysql\n", `b.yaml:1: default-base: bundle declares an invalid base "ubuntu"`},
		{"storage", "applications:\n  mysql:\n    charm: ./mysql\n    storage:\n      data: 1G\n", `b.yaml:4: applications.mysql.storage: storage is not supported: the local provider has no storage pools`},
		{"exposed-endpoints in base", "applications:\n  mysql:\n    charm: ./mysql\n    exposed-endpoints:\n      db: {expose-to-cidrs: [10.0.0.0/8]}\n", `b.yaml:4: applications.mysql.exposed-endpoints: applications.mysql.exposed-endpoints can only appear in an overlay section`},
		{"self relation", "applications:\n  mysql:\n    charm: ./mysql\nrelations:\n  - [mysql, mysql]\n", `b.yaml:5: relations[0]: relation "mysql mysql" relates an application to itself`},
		{"interface mismatch", "applications:\n  mysql:\n    charm: ./mysql\n  haproxy:\n    charm: ./haproxy\nrelations:\n  - [haproxy:reverseproxy, mysql:db]\n", `b.yaml:7: relations[0]: mismatched interface between "mysql:db" and "haproxy:reverseproxy" ("mysql" vs "http")`},
		{"no relation to infer", "applications:\n  mysql:\n    charm: ./mysql\n  haproxy:\n    charm: ./haproxy\nrelations:\n  - [haproxy, mysql]\n", `b.yaml:7: relations[0]: cannot infer endpoint between haproxy and mysql: no relations found`},
		{"duplicate relation", "applications:\n  mysql:\n    charm: ./mysql\n  wordpress:\n    charm: ./wordpress\nrelations:\n  - [wordpress, mysql]\n  - [mysql:db, wordpress:db]\n", `b.yaml:8: relations[1]: relation "mysql:db wordpress:db" is defined more than once`},
		{"unknown application in relation", "applications:\n  mysql:\n    charm: ./mysql\nrelations:\n  - [wordpress, mysql]\n", `b.yaml:5: relations[0]: relation "wordpress mysql" refers to application "wordpress" not defined in this bundle`},
		{"repeated key", "applications:\n  mysql:\n    charm: ./mysql\n    charm: ./wordpress\n", `b.yaml:4: applications.mysql: key "charm" is repeated (first at line 3)`},
		{"several errors", "applications:\n  mysql:\n    charm: ./mysql\n    colour: blue\n    num_units: -1\n",
			"b.yaml:4: applications.mysql: unknown key \"colour\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := ReadFiles(File{Name: "b.yaml", Dir: charms, Data: []byte(tt.yaml)})
			if err == nil {
				var b *Bundle
				if b, err = Compose(docs); err == nil {
					_, err = Check(b, testLoader(), nil)
				}
			}
			if err == nil || strings.SplitN(err.Error(), "\n", 2)[0] != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestParsePlacement(t *testing.T) {
	tests := []struct {
		in, machine, app string
		unit             int
		err              string
	}{
		{in: "0", machine: "0", unit: -1},
		{in: "new", machine: "new", unit: -1},
		{in: "mysql", app: "mysql", unit: -1},
		{in: "mysql/2", app: "mysql", unit: 2},
		{in: "new/1", err: `invalid placement syntax "new/1"`},
		{in: "lxd:new", err: `placement "lxd:new" puts the unit in a lxd container`},
		{in: "01", err: `invalid placement syntax "01"`},
		{in: "Mysql", err: `invalid placement syntax "Mysql"`},
	}
	for _, tt := range tests {
		p, err := ParsePlacement(tt.in)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || p.Machine != tt.machine || p.App != tt.app || p.Unit != tt.unit {
			t.Errorf("%s: %+v, %v", tt.in, p, err)
		}
	}
}

func TestOptionString(t *testing.T) {
	tests := []struct {
		typ  string
		v    any
		want string
		err  bool
	}{
		{typ: "string", v: "hi", want: "hi"},
		{typ: "string", v: int64(1), err: true},
		{typ: "int", v: int64(8080), want: "8080"},
		{typ: "int", v: float64(3), want: "3"},
		{typ: "int", v: 2.5, err: true},
		{typ: "int", v: "12", want: "12"},
		{typ: "float", v: int64(2), want: "2"},
		{typ: "float", v: 0.25, want: "0.25"},
		{typ: "boolean", v: true, want: "true"},
		{typ: "boolean", v: "yes", err: true},
	}
	for _, tt := range tests {
		got, err := OptionString(charm.Option{Name: "x", Type: tt.typ}, tt.v)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s %v: %q, %v", tt.typ, tt.v, got, err)
		}
	}
}

func TestExposeLines(t *testing.T) {
	got := exposeLines("wordpress", map[string]ExposeSpec{
		"":        {CIDRs: []string{"10.0.0.0/8"}},
		"website": {CIDRs: []string{"192.168.0.0/16", "10.0.0.0/8"}},
		"admin":   {CIDRs: []string{"10.0.0.0/8", "192.168.0.0/16"}},
		"db":      {Spaces: []string{"alpha"}},
	})
	want := []string{
		"expose all endpoints of wordpress and allow access from CIDR 10.0.0.0/8",
		"override expose settings for endpoints admin,website of wordpress and allow access from CIDRs 10.0.0.0/8,192.168.0.0/16",
		"override expose settings for endpoint db of wordpress and allow access from space alpha",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// planText renders a plan as deploy --dry-run prints it.
func planText(p *Plan) string {
	if len(p.Changes) == 0 {
		return "No changes to apply.\n"
	}
	return "Changes to deploy bundle:\n" + strings.Join(p.Lines(), "\n") + "\n"
}

// deployedBlog is the model after blog.yaml deployed to an empty model: machines 0 (mysql),
// 1 (wordpress/0, haproxy/0), 2 (wordpress/1), every relation, logging on both wordpress units.
func deployedBlog() *Model {
	return &Model{
		DefaultBase: "",
		Applications: map[string]*ModelApplication{
			"mysql": {Name: "mysql", CharmURL: "local:mysql-0", CharmName: "mysql", CharmSHA256: "sha-mysql", Base: "ubuntu@22.04",
				Life: "alive", Annotations: map[string]string{"gui-x": "100"},
				Units: []ModelUnit{{Name: "mysql/0", Machine: "0", Life: "alive"}}},
			"wordpress": {Name: "wordpress", CharmURL: "local:wordpress-0", CharmName: "wordpress", CharmSHA256: "sha-wordpress", Base: "ubuntu@22.04",
				Life: "alive", Config: map[string]string{"blog-title": `"Engineering"`}, Exposed: true,
				ExposedEndpoints: map[string]ExposeSpec{"": {CIDRs: []string{"0.0.0.0/0", "::/0"}}},
				Units:            []ModelUnit{{Name: "wordpress/0", Machine: "1", Life: "alive"}, {Name: "wordpress/1", Machine: "2", Life: "alive"}}},
			"haproxy": {Name: "haproxy", CharmURL: "local:haproxy-0", CharmName: "haproxy", CharmSHA256: "sha-haproxy", Base: "ubuntu@22.04",
				Life: "alive", Units: []ModelUnit{{Name: "haproxy/0", Machine: "1", Life: "alive"}}},
			"logging": {Name: "logging", CharmURL: "local:logging-0", CharmName: "logging", CharmSHA256: "sha-logging", Base: "ubuntu@22.04",
				Subordinate: true, Life: "alive",
				Units: []ModelUnit{{Name: "logging/0", Life: "alive"}, {Name: "logging/1", Life: "alive"}}},
		},
		Machines: map[string]*ModelMachine{
			"0": {ID: "0", Base: "ubuntu@22.04", Life: "alive", Annotations: map[string]string{"role": "database"}},
			"1": {ID: "1", Base: "ubuntu@22.04", Life: "alive"},
			"2": {ID: "2", Base: "ubuntu@22.04", Life: "alive"},
		},
		Relations: []ModelRelation{
			{Endpoints: [2]string{"mysql:db", "wordpress:db"}, Life: "alive"},
			{Endpoints: [2]string{"haproxy:reverseproxy", "wordpress:website"}, Life: "alive"},
			{Endpoints: [2]string{"logging:juju-info", "wordpress:juju-info"}, Life: "alive"},
		},
	}
}

// TestPlans checks every plan against its golden file.
func TestPlans(t *testing.T) {
	partial := deployedBlog()
	// Only mysql, its machine and nothing else.
	delete(partial.Applications, "wordpress")
	delete(partial.Applications, "haproxy")
	delete(partial.Applications, "logging")
	delete(partial.Machines, "1")
	delete(partial.Machines, "2")
	partial.Relations = nil

	// A model with other machines first: the bundle's machines map to them only when told.
	busy := &Model{Machines: map[string]*ModelMachine{
		"0": {ID: "0", Base: "ubuntu@22.04", Life: "alive"},
		"1": {ID: "1", Base: "ubuntu@22.04", Life: "alive"},
		"5": {ID: "5", Base: "ubuntu@22.04", Life: "alive"},
	}}

	tests := []struct {
		name    string
		files   []string
		model   *Model
		opts    PlanOptions
		changed []string
	}{
		{name: "fresh", files: []string{"blog.yaml"}},
		{name: "fresh-overlay", files: []string{"blog.yaml", "blog-overlay.yaml"}},
		{name: "partial", files: []string{"blog.yaml"}, model: partial},
		{name: "deployed", files: []string{"blog.yaml"}, model: deployedBlog()},
		{name: "deployed-overlay", files: []string{"blog.yaml", "blog-overlay.yaml"}, model: deployedBlog()},
		{name: "upgrade", files: []string{"blog.yaml"}, model: deployedBlog(), changed: []string{"wordpress"}},
		{name: "busy", files: []string{"blog.yaml"}, model: busy},
		{name: "map-existing", files: []string{"blog.yaml"}, model: busy, opts: PlanOptions{UseExisting: true}},
		{name: "map-explicit", files: []string{"blog.yaml"}, model: busy, opts: PlanOptions{MachineMap: map[string]string{"0": "5"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := check(t, testLoader(tt.changed...), tt.files...)
			if err != nil {
				t.Fatal(err)
			}
			tt.opts.Model = tt.model
			p, err := c.Plan(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, planText(p), "bundle/plan-"+tt.name+".golden")
		})
	}
}

// TestPlanRequirements: every change comes after what it requires, and a unit placed next to
// another waits for it.
func TestPlanRequirements(t *testing.T) {
	c := mustCheck(t, "blog.yaml")
	p, err := c.Plan(PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var haproxy *Change
	for _, ch := range p.Changes {
		for _, r := range ch.Requires {
			if !seen[r] {
				t.Errorf("%s comes before %s, which it requires", ch.ID, r)
			}
		}
		seen[ch.ID] = true
		if ch.Kind == KindAddUnit && ch.Application == "haproxy" {
			haproxy = ch
		}
	}
	if haproxy == nil || haproxy.To.Change == "" || !strings.HasPrefix(haproxy.To.Change, "addUnit-") {
		t.Errorf("haproxy/0 goes to %+v, want the machine of wordpress/0's change", haproxy)
	}
}

func TestPlanErrors(t *testing.T) {
	c := mustCheck(t, "blog.yaml")
	m := deployedBlog()
	m.Applications["mysql"].CharmName = "postgresql"
	if _, err := c.Plan(PlanOptions{Model: m}); err == nil || err.Error() !=
		`blog.yaml:13: applications.mysql.charm: application "mysql" runs charm "postgresql"; the bundle's charm ../charms/mysql is "mysql", and an application cannot change its charm's name` {
		t.Errorf("err = %v", err)
	}
	m = deployedBlog()
	m.Applications["haproxy"].Life = "dying"
	if _, err := c.Plan(PlanOptions{Model: m}); err == nil || !strings.Contains(err.Error(), `application "haproxy" is dying in the model`) {
		t.Errorf("err = %v", err)
	}
	if _, err := c.Plan(PlanOptions{MachineMap: map[string]string{"0": "9"}}); err == nil || err.Error() != `error in --map-machines: machine "9" not found in the model` {
		t.Errorf("err = %v", err)
	}
	// A bundle machine placed on a model machine of another base.
	m = &Model{Machines: map[string]*ModelMachine{"0": {ID: "0", Base: "ubuntu@24.04", Life: "alive"}}}
	if _, err := c.Plan(PlanOptions{Model: m, UseExisting: true}); err == nil || !strings.Contains(err.Error(),
		`blog.yaml:15: applications.mysql.to: placement "0" puts application "mysql" (ubuntu@22.04) on machine 0 of the model, which is ubuntu@24.04`) {
		t.Errorf("err = %v", err)
	}
}

// checkInline reads, composes and checks YAML documents written inline, their charms named
// relative to testdata/charms.
func checkInline(t *testing.T, yamls ...string) (*Checked, error) {
	t.Helper()
	charms, err := filepath.Abs(filepath.Join(bundlesDir, "..", "charms"))
	if err != nil {
		t.Fatal(err)
	}
	var files []File
	for i, y := range yamls {
		files = append(files, File{Name: fmt.Sprintf("b%d.yaml", i), Dir: charms, Data: []byte(y)})
	}
	docs, err := ReadFiles(files...)
	if err != nil {
		return nil, err
	}
	b, err := Compose(docs)
	if err != nil {
		return nil, err
	}
	return Check(b, testLoader(), nil)
}

// TestPlanPlacements: placements next to an application's units (existing ones first, then
// new ones), "new" machines with the application's constraints, exposed endpoints from an
// overlay, and the model's existing units counted.
func TestPlanPlacements(t *testing.T) {
	c, err := checkInline(t, `
default-base: ubuntu@22.04
applications:
  wordpress:
    charm: ./wordpress
    num_units: 3
  haproxy:
    charm: ./haproxy
    num_units: 4
    to: [wordpress]
  mysql:
    charm: ./mysql
    num_units: 2
    constraints: cores=4
    to: [new]
relations:
  - [haproxy, wordpress]
`, `
applications:
  wordpress:
    exposed-endpoints:
      website:
        expose-to-cidrs: [10.0.0.0/8]
      "":
        expose-to-spaces: [alpha]
`)
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{
		Applications: map[string]*ModelApplication{
			"wordpress": {Name: "wordpress", CharmName: "wordpress", CharmSHA256: "sha-wordpress", Base: "ubuntu@22.04", Life: "alive",
				Units: []ModelUnit{{Name: "wordpress/0", Machine: "4", Life: "alive"}}},
		},
		Machines: map[string]*ModelMachine{"4": {ID: "4", Base: "ubuntu@22.04", Life: "alive"}},
	}
	p, err := c.Plan(PlanOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, planText(p), "bundle/plan-placements.golden")
	for _, ch := range p.Changes {
		if ch.Kind == KindAddMachine && ch.Constraints != "cores=4" {
			t.Errorf("machine %s for mysql has constraints %q", ch.MachineID, ch.Constraints)
		}
	}
}
