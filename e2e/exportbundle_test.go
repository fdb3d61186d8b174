package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// startBundle deploys mysql with annotations on a machine with annotations (annotations are
// set through bundles only); its charm is a bare name, found in $JUJU_REPOSITORY.
const startBundle = `applications:
  mysql:
    charm: mysql
    num_units: 1
    to: ["0"]
    annotations:
      owner: db-team
machines:
  "0":
    annotations:
      rack: r1
`

// exported is what export-bundle writes for the model the journey builds.
const exported = `default-base: ubuntu@22.04
applications:
  logging:
    charm: logging
  mysql:
    charm: mysql
    num_units: 1
    to:
    - "0"
    annotations:
      owner: db-team
    trust: true
  wordpress:
    charm: wordpress
    num_units: 2
    to:
    - "1"
    - "0"
    expose: true
    options:
      blog-title: News
    constraints: mem=1024M
machines:
  "0":
    annotations:
      rack: r1
  "1":
    constraints: mem=1024M
relations:
- - logging:juju-info
  - wordpress:juju-info
- - mysql:db
  - wordpress:db
--- # overlay.yaml
applications:
  mysql:
    exposed-endpoints:
      db:
        expose-to-cidrs:
        - 10.0.0.0/8
`

// TestExportBundleRoundTrip: a model built from a bundle and commands (config, constraints, a
// unit placed beside another application's, relations, a subordinate, trust, expose, and
// annotations) exports as the bundle that rebuilds it: deployed into a new model it exports
// the same again, and deployed onto the model it came from it changes nothing.
func TestExportBundleRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	e.ok("deploy", write("start.yaml", startBundle))
	// mysql runs on 22.04 only: the others go beside it.
	e.ok("deploy", "wordpress", "--base", "ubuntu@22.04", "--config", "blog-title=News", "--constraints", "mem=1G")
	e.ok("add-unit", "wordpress", "--to", "0")
	e.ok("deploy", "logging", "--base", "ubuntu@22.04")
	e.ok("integrate", "wordpress", "mysql")
	e.ok("integrate", "logging", "wordpress")
	e.ok("expose", "wordpress")
	e.ok("expose", "mysql", "--endpoints", "db", "--to-cidrs", "10.0.0.0/8")
	e.ok("trust", "mysql")

	first := e.ok("export-bundle")
	if first.stdout != exported || first.stderr != "" {
		t.Fatalf("export-bundle: stderr %q, stdout:\n%s\nwant:\n%s", first.stderr, first.stdout, exported)
	}
	// docs/bundles.md shows this very export.
	var shown []string
	for _, b := range readDocBlocks(t, e.root) {
		if b.file == filepath.Join("docs", "bundles.md") && b.lang == "yaml" && strings.HasPrefix(b.body, "default-base:") {
			shown = append(shown, b.body)
		}
	}
	if len(shown) != 1 || shown[0] != exported {
		t.Errorf("docs/bundles.md's export-bundle example is not what export-bundle writes: %q", shown)
	}
	file := filepath.Join(dir, "exported.yaml")
	r := e.ok("export-bundle", "--filename", file)
	if data, err := os.ReadFile(file); err != nil || string(data) != exported || r.stdout != "" || r.stderr != "Bundle successfully exported to "+file+"\n" {
		t.Fatalf("export-bundle --filename: %v, stdout %q, stderr %q, file:\n%s", err, r.stdout, r.stderr, data)
	}
	e.fails(1, "nothing to export as there are no applications", "export-bundle", "-m", "controller")

	// Into a new model: the same bundle comes out.
	e.ok("add-model", "second")
	e.ok("deploy", file, "-m", "second", "--trust") // trust: true asks for the consent, as in Juju
	if again := e.ok("export-bundle", "-m", "second").stdout; again != exported {
		t.Errorf("the new model exports differently:\n%s\nwant:\n%s", again, exported)
	}

	// Onto the model it came from: nothing changes.
	before := unitPlacements(e, "default")
	e.ok("deploy", file, "-m", "default", "--trust")
	if again := e.ok("export-bundle", "-m", "default").stdout; again != exported {
		t.Errorf("redeploying onto the same model changed its bundle:\n%s\nwant:\n%s", again, exported)
	}
	if after := unitPlacements(e, "default"); !slices.Equal(after, before) {
		t.Errorf("redeploying onto the same model changed its charms, machines or units: %q, was %q", after, before)
	}
}

// unitPlacements lists a model's machines, its applications' charms (with their revisions: an
// upload is a new one) and its principal units ("wordpress/1 on 0"), sorted.
func unitPlacements(e *env, model string) []string {
	e.t.Helper()
	r := e.ok("status", "-m", model, "--format", "json")
	var s struct {
		Machines     map[string]json.RawMessage `json:"machines"`
		Applications map[string]struct {
			Charm    string `json:"charm"`
			CharmRev int    `json:"charm-rev"`
			Units    map[string]struct {
				Machine string `json:"machine"`
			} `json:"units"`
		} `json:"applications"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
	var out []string
	for id := range s.Machines {
		out = append(out, "machine "+id)
	}
	for name, a := range s.Applications {
		out = append(out, fmt.Sprintf("%s charm %s revision %d", name, a.Charm, a.CharmRev))
		for unit, u := range a.Units {
			out = append(out, unit+" on "+u.Machine)
		}
	}
	slices.Sort(out)
	return out
}
