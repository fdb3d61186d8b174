package root

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/controller/provider/local"
)

// destroy-model end to end: the real CLI (root.Main) against a real controller in this process
// (embedded etcd, TLS gRPC, provisioner, local provider, agents): a model with a deployed
// application goes, with its machines' instances and agents, and is forgotten by the client.
func TestDestroyModelEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller")
	}
	ctl := cmdtest.StartController(t)
	dataDir, store := ctl.DataDir, ctl.UseStore(t)
	charm := hooklessCharm(t, "mysql")

	mustRun(t, "add-model", "m")
	mustRun(t, "deploy", charm, "-n", "2")
	for _, u := range []string{"mysql/0", "mysql/1"} {
		mustRun(t, "wait-for", "unit", u, "--query", `agent-status=="idle"`, "--timeout", "60s")
	}
	m, err := store.ModelByName("local", "m")
	if err != nil {
		t.Fatal(err)
	}
	instances := []string{
		filepath.Join(dataDir, "instances", local.InstanceID(m.UUID, "0")),
		filepath.Join(dataDir, "instances", local.InstanceID(m.UUID, "1")),
	}
	for _, dir := range instances {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("instance before destroy-model: %v", err)
		}
	}

	// Usage errors and refusals first: nothing changes.
	if code, _, stderr := jujuCLI(t, "destroy-model"); code != 2 || stderr != "ERROR no model specified\n" {
		t.Errorf("destroy-model without a model = %d %q", code, stderr)
	}
	if code, _, stderr := jujuCLI(t, "destroy-model", "m"); code != 1 || !strings.Contains(stderr, "pass --no-prompt") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("destroy-model without a terminal = %d %q", code, stderr)
	}
	code, _, stderr := jujuCLI(t, "destroy-model", "controller", "--no-prompt")
	if code != 1 || stderr != "ERROR cannot destroy model \"controller\": it is the controller model; use juju kill-controller to destroy the controller\n" {
		t.Errorf("destroy-model controller = %d %q", code, stderr)
	}
	stdout, _ := mustRun(t, "destroy-model", "m", "--dry-run")
	if !strings.Contains(stdout, " - 2 machines will be destroyed\n") || !strings.Contains(stdout, `application list: "mysql"`) {
		t.Errorf("dry run:\n%s", stdout)
	}

	stdout, stderr = mustRun(t, "destroy-model", "m", "--no-prompt", "--timeout", "60s")
	if stdout != "" || !strings.HasPrefix(stderr, "Destroying model\nWaiting for model to be removed") || !strings.HasSuffix(stderr, "\nModel destroyed.\n") {
		t.Errorf("destroy-model: stdout %q, stderr %q", stdout, stderr)
	}
	stdout, _ = mustRun(t, "models", "--format", "json")
	var models struct {
		Models []struct {
			Name string `json:"short-name"`
		} `json:"models"`
		Current string `json:"current-model"`
	}
	if err := json.Unmarshal([]byte(stdout), &models); err != nil {
		t.Fatal(err)
	}
	for _, mm := range models.Models {
		if mm.Name == "m" {
			t.Errorf("models still lists m:\n%s", stdout)
		}
	}
	if current, _ := store.CurrentModel("local"); current != "" || models.Current != "" {
		t.Errorf("current model after destroying it: %q / %q", current, models.Current)
	}
	// The provider stopped the instances' agents, then removed their directories (L-M3).
	for _, dir := range instances {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("instance left behind: %s (%v)", dir, err)
		}
	}
	if code, _, stderr := jujuCLI(t, "destroy-model", "m", "--no-prompt"); code != 1 || stderr != "ERROR model \"m\" not found\n" {
		t.Errorf("destroy-model of a removed model = %d %q", code, stderr)
	}
	// The name is free again.
	mustRun(t, "add-model", "m")
}

// hooklessCharm copies testdata/charms/<name> without its hooks into a temporary directory:
// its units settle at once, without running any process.
func hooklessCharm(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "testdata", "charms", name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"metadata.yaml", "manifest.yaml", "config.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
