package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/jujuclone/juju/"

// The dependency rules of design.md: the CLI never links the controller (it stays small and
// starts fast), core imports nothing of ours, nothing imports cmd/.
func TestDependencyRules(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	for _, d := range deps("../cmd/juju") {
		if strings.HasPrefix(d, module+"controller/") || strings.HasPrefix(d, "go.etcd.io/etcd/server") {
			t.Errorf("cmd/juju depends on %s", d)
		}
	}
	for _, d := range deps("../core/...") {
		if strings.HasPrefix(d, module) && !strings.HasPrefix(d, module+"core/") {
			t.Errorf("core depends on %s", d)
		}
	}
	for _, pkg := range []string{"../controller/...", "../client/...", "../output/..."} {
		for _, d := range deps(pkg) {
			if strings.HasPrefix(d, module+"cmd/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
