package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJujucStaysSmall: jujuc is a process per tool call, so it must not link the
// controller's packages, whose initialisation is what makes jujud slow to start.
func TestJujucStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/jujuclone/juju/cmd/jujuc":                 true,
		"github.com/jujuclone/juju/controller/agent/hooktool": true,
		"github.com/jujuclone/juju/internal/peercred":         true, // syscall only
		"github.com/spf13/pflag":                              true,
		"go.yaml.in/yaml/v2":                                  true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !allowed[pkg] {
			t.Errorf("jujuc links %s: a hook tool call would pay for its initialisation", pkg)
		}
	}
}

func TestJujucRunsOnlyAsATool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	jujuc := filepath.Join(dir, "jujuc")
	if out, err := exec.Command("go", "build", "-o", jujuc, ".").CombinedOutput(); err != nil {
		t.Fatalf("building jujuc: %v\n%s", err, out)
	}
	tool := filepath.Join(dir, "relation-get")
	if err := os.Symlink(jujuc, tool); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		code       int
		stderr     string
	}{
		{"under its own name", jujuc, 2, "ERROR jujuc runs only as a hook tool, under one of these names: action-fail, action-get, action-log, action-set, add-metric,"},
		{"as a tool outside a hook", tool, 1, "ERROR JUJU_AGENT_SOCKET is not set: hook tools run only inside a hook\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(tc.path, "db")
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
				t.Fatalf("exit: %v, want code %d", err, tc.code)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
			if !strings.HasPrefix(stderr.String(), tc.stderr) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr: %q, want one line starting %q", stderr.String(), tc.stderr)
			}
		})
	}
}
