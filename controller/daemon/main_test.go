package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/controller/store"
)

// jujucPath is the hook tools binary the controllers under test link the tools to: a real
// jujuc, built once, as jujud finds it beside itself. Empty when it could not be built: then
// the tools run as this test binary (see TestMain), which works but starts far slower.
var jujucPath string

// jujudPath is a real jujud, built once, that enable-ha starts members with; empty when it
// could not be built (the tests that need it then fail).
var jujudPath string

// TestMain lets this test binary act as the hook tools when no jujuc could be built, and
// builds jujuc first: a hook calls several tools, and this binary (etcd and all) costs tens
// of milliseconds of CPU to start where jujuc costs one.
func TestMain(m *testing.M) {
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "daemon-test-jujuc-")
	if err == nil {
		path := filepath.Join(dir, "jujuc")
		build := exec.Command("go", "build", "-o", path, "github.com/jujuclone/juju/cmd/jujuc")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building jujuc for the hook tools failed, they run as the test binary: %v\n%s", err, out)
		} else {
			jujucPath = path
		}
	}
	if dir != "" {
		path := filepath.Join(dir, "jujud")
		if out, err := exec.Command("go", "build", "-o", path, "github.com/jujuclone/juju/cmd/jujud").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building jujud for controller members failed: %v\n%s", err, out)
		} else {
			jujudPath = path
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// externalStore is an etcd of the test's own, outliving the controllers run on it (a controller
// started again finds what the one before left); it closes after the test's controllers stop.
func externalStore(t *testing.T) *store.Store {
	t.Helper()
	ext, err := store.StartEmbedded(context.Background(), t.TempDir(), store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ext.Close() }) // registered first: runs after the controllers stop
	return ext
}
