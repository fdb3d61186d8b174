package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExposeJourney: juju expose and unexpose through the real binaries. Status shows the
// rules as Juju does; the local provider records in each instance's firewall.json the ports a
// firewall would open (the units' open ports, for exposed applications) and from where; bad
// input is one ERROR line and changes nothing.
func TestExposeJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })
	e.ok("deploy", filepath.Join(e.root, "testdata", "charms", "mysql"))
	e.waitUntil("mysql ready", workloadIs("mysql/0", "active", "ready"))

	type exposure struct {
		Exposed          bool `json:"exposed"`
		ExposedEndpoints map[string]struct {
			Spaces []string `json:"expose-to-spaces"`
			CIDRs  []string `json:"expose-to-cidrs"`
		} `json:"exposed-endpoints"`
	}
	status := func() exposure {
		var s struct {
			Applications map[string]exposure `json:"applications"`
		}
		if err := json.Unmarshal([]byte(e.ok("status", "--format", "json").stdout), &s); err != nil {
			t.Fatal(err)
		}
		return s.Applications["mysql"]
	}
	// The instance of the model's machine 0 (the controller model has a machine of its own).
	inst := e.status().Machines["0"].InstanceID
	firewall := func() string {
		path := filepath.Join(e.data, "controllers", "local", "instances", inst, "firewall.json")
		var rec struct {
			Rules []struct {
				PortRange string   `json:"port-range"`
				CIDRs     []string `json:"source-cidrs"`
			} `json:"ingress-rules"`
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "no firewall.json"
		}
		if json.Unmarshal(data, &rec) != nil {
			return "unreadable: " + string(data)
		}
		var out []string
		for _, r := range rec.Rules {
			out = append(out, r.PortRange+" from "+strings.Join(r.CIDRs, ","))
		}
		return strings.Join(out, "; ")
	}
	// Nothing exposed: the machine has no rules, and no record of them.
	if got := firewall(); got != "no firewall.json" {
		t.Errorf("firewall record with nothing exposed: %q", got)
	}

	// Bad input: one ERROR line, nothing changed.
	e.fails(1, `application "nope" not found`, "expose", "nope")
	e.fails(1, `endpoint "www" not found`, "expose", "mysql", "--endpoints", "www")
	e.fails(1, `space "public" not found`, "expose", "mysql", "--to-spaces", "public")
	e.fails(1, `unable to parse "10.0.0.300/8" as a CIDR`, "expose", "mysql", "--to-cidrs", "10.0.0.300/8")
	e.fails(1, `endpoint "db" is not exposed`, "unexpose", "mysql", "--endpoints", "db")
	e.fails(2, "no application name specified", "expose")
	if s := status(); s.Exposed || len(s.ExposedEndpoints) != 0 {
		t.Fatalf("a refused expose changed the application: %+v", s)
	}

	if r := e.ok("expose", "mysql"); r.stdout != "" || r.stderr != "" {
		t.Errorf("expose printed %q %q", r.stdout, r.stderr)
	}
	e.waitTrue("3306 open to all", func() bool { return firewall() == "3306/tcp from 0.0.0.0/0,::/0" })
	e.ok("expose", "mysql", "--endpoints", "db", "--to-cidrs", "10.0.0.0/8", "--to-spaces", "alpha")
	s := status()
	if !s.Exposed || len(s.ExposedEndpoints) != 2 || strings.Join(s.ExposedEndpoints[""].CIDRs, ",") != "0.0.0.0/0,::/0" ||
		strings.Join(s.ExposedEndpoints["db"].CIDRs, ",") != "10.0.0.0/8" || strings.Join(s.ExposedEndpoints["db"].Spaces, ",") != "alpha" {
		t.Errorf("status after expose: %+v", s)
	}
	e.waitTrue("3306 open to all and the db rule's sources", func() bool {
		return firewall() == "3306/tcp from 0.0.0.0/0,10.0.0.0/8,127.0.0.0/8,::/0"
	})
	if table := e.ok("status").stdout; !strings.Contains(table, "Exposed") || !regexp.MustCompile(`(?m)^mysql\s.*\syes\s`).MatchString(table) {
		t.Errorf("status table does not show mysql exposed:\n%s", table)
	}

	e.ok("unexpose", "mysql", "--endpoints", "db")
	e.waitTrue("only the every-endpoint rule left", func() bool { return firewall() == "3306/tcp from 0.0.0.0/0,::/0" })
	if s := status(); !s.Exposed || len(s.ExposedEndpoints) != 1 {
		t.Errorf("status after unexposing db: %+v", s)
	}
	e.ok("unexpose", "mysql")
	e.waitTrue("nothing open once every rule is gone", func() bool { return firewall() == "" })
	if s := status(); s.Exposed || len(s.ExposedEndpoints) != 0 {
		t.Errorf("status after unexpose: %+v", s)
	}
	e.ok("expose", "mysql", "--to-cidrs", "192.168.0.0/16")
	e.waitTrue("3306 open to 192.168.0.0/16", func() bool { return firewall() == "3306/tcp from 192.168.0.0/16" })
	e.ok("unexpose", "mysql")
	e.waitTrue("nothing open after unexpose", func() bool { return firewall() == "" })
}
