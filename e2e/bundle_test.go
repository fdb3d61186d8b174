package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestBundleJourney: a bundle of the sample charms with machines, placements, relations, the
// logging subordinate, an overlay, options and expose deploys to the expected model in one
// command and converges; deploying it again changes nothing (status identical but for its
// times, no hook run); bad bundles fail with exit 1 and leave the model as it was; a bundle's
// resource reaches the controller, and a changed file is attached on the next deploy
// (issue 14's proof).
func TestBundleJourney(t *testing.T) {
	longJourney(t)
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })

	blog := []string{"deploy", "./testdata/bundles/blog.yaml", "--overlay", "./testdata/bundles/blog-overlay.yaml"}

	// Bad bundles: refused whole, with file, line and reason, before anything is sent.
	empty := e.modelState()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"./testdata/bundles/bad/unknown-key.yaml"}, `testdata/bundles/bad/unknown-key.yaml:5: applications.mysql: unknown key "colour"`},
		{[]string{"./testdata/bundles/bad/missing-charm.yaml"}, `testdata/bundles/bad/missing-charm.yaml:6: applications.postgresql.charm: charm path in application "postgresql" does not exist: ../../charms/postgresql`},
		{[]string{"./testdata/bundles/bad/undefined-machine.yaml"}, `testdata/bundles/bad/undefined-machine.yaml:11: applications.wordpress.to: placement "3" refers to a machine not defined in this bundle`},
		{[]string{"./testdata/bundles/bad/unknown-endpoint.yaml"}, `testdata/bundles/bad/unknown-endpoint.yaml:9: relations[0]: charm "../../charms/mysql" used by application "mysql" does not define relation "database"`},
		{[]string{"./testdata/bundles/bad/placement-cycle.yaml"}, `testdata/bundles/bad/placement-cycle.yaml:5: applications.mysql.to: cycle in placement directives for: mysql, wordpress`},
		{[]string{"./testdata/bundles/blog.yaml", "--overlay", "./testdata/bundles/bad/remove-related.yaml"},
			`testdata/bundles/bad/remove-related.yaml:3: applications.mysql: cannot remove application "mysql": relation "wordpress:db mysql:db" at testdata/bundles/blog.yaml:32 still names it`},
	} {
		e.fails(1, tc.want, append([]string{"deploy"}, tc.args...)...)
	}
	if got := e.modelState(); !reflect.DeepEqual(got, empty) {
		t.Errorf("bad bundles changed the model:\n%v", got)
	}

	// --dry-run prints the plan, in Juju's words, and sends nothing.
	r := e.ok(append(blog, "--dry-run")...)
	for _, want := range []string{
		"Changes to deploy bundle:\n- upload charm ../charms/haproxy for base ubuntu@22.04\n- deploy application haproxy on ubuntu@22.04\n",
		"- expose all endpoints of wordpress and allow access from CIDRs 0.0.0.0/0 and ::/0\n",
		"- add relation wordpress:db - mysql:db\n",
		"- add unit haproxy/0 to new machine 1 to satisfy [wordpress/0]\n",
		"- add unit wordpress/2 to new machine 3\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--dry-run printed\n%s\nwithout\n%s", r.stdout, want)
		}
	}
	if got := e.modelState(); !reflect.DeepEqual(got, empty) {
		t.Errorf("--dry-run changed the model:\n%v", got)
	}

	// One command: everything deployed, and waited for.
	r = e.ok(append(blog, "--wait", "--timeout", "50s")...)
	if !strings.HasPrefix(r.stdout, "Executing changes:\n- upload charm ../charms/haproxy") || !strings.Contains(r.stderr, "Deploy of bundle completed.\n") ||
		!strings.HasSuffix(r.stderr, "3 units of logging idle\n") {
		t.Errorf("deploy printed\n%s\n%s", r.stdout, r.stderr)
	}
	s := e.waitUntil("every unit active", func(s unitsJSON) bool {
		n := 0
		for _, a := range s.Applications {
			for _, u := range a.Units {
				if u.WorkloadStatus.Current != "active" || u.JujuStatus.Current != "idle" {
					return false
				}
				for _, sub := range u.Subordinates {
					if sub.WorkloadStatus.Current != "active" || sub.JujuStatus.Current != "idle" {
						return false
					}
					n++
				}
				n++
			}
		}
		return n == 8 // mysql/0, wordpress/0-2, haproxy/0, logging/0-2
	})
	placed := map[string]string{}
	for _, a := range s.Applications {
		for name, u := range a.Units {
			placed[name] = u.Machine
		}
	}
	if want := map[string]string{"mysql/0": "0", "wordpress/0": "1", "haproxy/0": "1", "wordpress/1": "2", "wordpress/2": "3"}; !reflect.DeepEqual(placed, want) {
		t.Errorf("units on machines %v, want %v", placed, want)
	}
	st := e.status()
	if c := st.Machines["0"].Constraints; c != "mem=1024M" {
		t.Errorf("machine 0 constraints %q, want the bundle's mem=1G", c)
	}
	if len(st.Machines) != 4 {
		t.Errorf("machines %v, want 0-3", st.Machines)
	}
	if got := strings.TrimSpace(e.ok("config", "wordpress", "blog-title").stdout); got != "Overlaid" {
		t.Errorf("blog-title = %q, want the overlay's", got)
	}
	model := e.modelState()
	if !model.Exposed["wordpress"] || model.Exposed["mysql"] {
		t.Errorf("exposed: %v", model.Exposed)
	}
	for _, rel := range []string{"wordpress:db -> mysql", "haproxy:reverseproxy -> wordpress", "logging:juju-info -> wordpress"} {
		if !slices.Contains(model.Relations, rel) {
			t.Errorf("relations %v, want %s", model.Relations, rel)
		}
	}

	// Again: nothing to do, nothing done.
	before, hooks := e.statusWithoutTimes(), e.allHooks(s)
	r = e.ok(blog...)
	if r.stdout != "" || r.stderr != "No changes to apply.\n" {
		t.Errorf("deploying again printed %q, %q", r.stdout, r.stderr)
	}
	// A bad overlay on the deployed model changes nothing either.
	e.fails(1, `cannot remove application "mysql"`, "deploy", "./testdata/bundles/blog.yaml", "--overlay", "./testdata/bundles/bad/remove-related.yaml")
	if after := e.statusWithoutTimes(); after != before {
		t.Errorf("status changed:\n%s\n%s", before, after)
	}
	if after := e.allHooks(s); !reflect.DeepEqual(after, hooks) {
		t.Errorf("hooks ran again:\n%v\n%v", hooks, after)
	}

	// Resources: a charm declaring one, the bundle giving its file.
	dir := t.TempDir()
	charm := filepath.Join(dir, "charms", "store")
	copyTree(t, filepath.Join(e.root, "testdata", "charms", "mysql"), charm)
	appendFile(t, filepath.Join(charm, "metadata.yaml"), "resources:\n  config:\n    type: file\n    filename: config.txt\n")
	writeFile(t, filepath.Join(dir, "config.txt"), "v1\n")
	writeFile(t, filepath.Join(dir, "bundle.yaml"), "default-base: ubuntu@22.04\napplications:\n  store:\n    charm: ./charms/store\n    num_units: 1\n    resources:\n      config: ./config.txt\n")
	e.ok("add-model", "res")
	r = e.ok("deploy", dir, "-m", "res")
	if !strings.Contains(r.stderr, "  added resource config\n") {
		t.Errorf("deploy said %q", r.stderr)
	}
	fingerprint := func() string {
		var rs struct {
			Resources []struct {
				Name        string `json:"name"`
				Fingerprint string `json:"fingerprint"`
			} `json:"resources"`
		}
		out := e.ok("resources", "store", "-m", "res", "--format", "json").stdout
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs.Resources) != 1 {
			t.Fatalf("resources: %v\n%s", err, out)
		}
		return rs.Resources[0].Fingerprint
	}
	first := fingerprint()
	if r = e.ok("deploy", dir, "-m", "res"); r.stderr != "No changes to apply.\n" {
		t.Errorf("deploying again said %q", r.stderr)
	}
	writeFile(t, filepath.Join(dir, "config.txt"), "v2\n")
	if r = e.ok("deploy", dir, "-m", "res"); r.stdout != "Executing changes:\n- attach resource config to store from ./config.txt\n" {
		t.Errorf("a changed resource gave %q", r.stdout)
	}
	if fingerprint() == first {
		t.Errorf("the resource's new content did not reach the controller")
	}
}

// modelView is what a bad bundle must not change: applications, machines, relations (each
// "app:endpoint -> related application", from both sides), exposure.
type modelView struct {
	Applications []string
	Machines     []string
	Relations    []string
	Exposed      map[string]bool
}

func (e *env) modelState() modelView {
	e.t.Helper()
	var s struct {
		Machines     map[string]json.RawMessage `json:"machines"`
		Applications map[string]struct {
			Exposed   bool `json:"exposed"`
			Relations map[string][]struct {
				Related string `json:"related-application"`
			} `json:"relations"`
		} `json:"applications"`
	}
	out := e.ok("status", "--format", "json").stdout
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, out)
	}
	v := modelView{Exposed: map[string]bool{}}
	for id := range s.Machines {
		v.Machines = append(v.Machines, id)
	}
	for name, a := range s.Applications {
		v.Applications = append(v.Applications, name)
		v.Exposed[name] = a.Exposed
		for ep, rels := range a.Relations {
			for _, r := range rels {
				v.Relations = append(v.Relations, name+":"+ep+" -> "+r.Related)
			}
		}
	}
	slices.Sort(v.Applications)
	slices.Sort(v.Machines)
	slices.Sort(v.Relations)
	v.Relations = slices.Compact(v.Relations)
	return v
}

// statusWithoutTimes is `status --format json` without the times it shows.
func (e *env) statusWithoutTimes() string {
	e.t.Helper()
	var v any
	if err := json.Unmarshal([]byte(e.ok("status", "--format", "json").stdout), &v); err != nil {
		e.t.Fatal(err)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			delete(x, "since")
			delete(x, "timestamp")
			for _, y := range x {
				strip(y)
			}
		case []any:
			for _, y := range x {
				strip(y)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// allHooks lists the hooks every unit ran (update-status aside: it runs on a timer).
func (e *env) allHooks(s unitsJSON) map[string][]string {
	e.t.Helper()
	out := map[string][]string{}
	for _, a := range s.Applications {
		for name, u := range a.Units {
			out[name] = withoutUpdateStatus(e.hooksRun(name))
			for sub := range u.Subordinates {
				out[sub] = withoutUpdateStatus(e.hooksRun(sub))
			}
		}
	}
	return out
}

func withoutUpdateStatus(hooks []string) []string {
	return slices.DeleteFunc(hooks, func(h string) bool { return h == "update-status" })
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}
