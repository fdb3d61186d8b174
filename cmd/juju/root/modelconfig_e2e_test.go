package root

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
)

// writeConfigCharm writes a charm whose install fails while its "fail" option is "yes", and
// whose update-status logs at DEBUG and at INFO, with the proxy it was given.
func writeConfigCharm(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cfgcharm")
	files := map[string]string{
		"metadata.yaml": "name: cfgcharm\nsummary: s\ndescription: d\n",
		"manifest.yaml": "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n",
		"config.yaml":   "options:\n  fail:\n    type: string\n    default: \"\"\n    description: install fails while yes\n",
		"hooks/install": "#!/bin/sh\nif [ \"$(config-get fail)\" = yes ]; then echo failing >&2; exit 1; fi\n",
		"hooks/update-status": "#!/bin/sh\njuju-log --log-level DEBUG \"us-debug\"\n" +
			"juju-log \"us-info proxy=$JUJU_CHARM_HTTP_PROXY\"\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// waitLog polls the model's log until it holds text, for at most d.
func waitLog(t *testing.T, model, text string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		stdout, _ := mustRun(t, "debug-log", "-m", model, "--replay", "--no-tail")
		if strings.Contains(stdout, text) {
			return stdout
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log of %s does not say %q after %s:\n%s", model, text, d, stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Model configuration end to end, through the real CLI and a real controller: add-model
// --config sets typed keys; automatically-retry-hooks brings a failed install back without
// `juju resolved`; update-status-hook-interval drives the agents' timer; juju-http-proxy
// reaches hooks; logging-config filters the unit's log and a change reaches running agents.
// show-model and models describe the model as Juju does, and destroy-controller refuses
// while the model holds an application, then destroys it with --destroy-all-models.
func TestModelConfigEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a controller")
	}
	ctl := cmdtest.StartController(t)
	store := ctl.UseStore(t)
	charm := writeConfigCharm(t)

	mustRun(t, "add-model", "cfg", "localhost", "--no-switch",
		"--config", "automatically-retry-hooks=true", "--config", "update-status-hook-interval=1s",
		"--config", "juju-http-proxy=http://squid.internal:3128")
	stdout, _ := mustRun(t, "model-config", "-m", "cfg", "--format", "json")
	var cfg map[string]struct {
		Value  any
		Source string
	}
	if err := json.Unmarshal([]byte(stdout), &cfg); err != nil {
		t.Fatal(err)
	}
	if v := cfg["automatically-retry-hooks"]; v.Value != true || v.Source != "model" {
		t.Errorf("automatically-retry-hooks = %+v", v)
	}
	if v := cfg["logging-config"]; v.Value != "<root>=INFO" || v.Source != "default" {
		t.Errorf("logging-config = %+v", v)
	}
	// The test controller's model default turns retries off; Juju's default is back once the
	// controller's is reset.
	if out, _ := mustRun(t, "model-config", "-m", "default", "automatically-retry-hooks"); out != "False\n" {
		t.Errorf("with the controller's model default: %q", out)
	}
	mustRun(t, "model-defaults", "--reset", "automatically-retry-hooks")
	if out, _ := mustRun(t, "model-config", "-m", "default", "automatically-retry-hooks"); out != "True\n" {
		t.Errorf("Juju's default: %q", out)
	}

	mustRun(t, "deploy", "-m", "cfg", charm, "--config", "fail=yes")
	mustRun(t, "wait-for", "unit", "cfgcharm/0", "-m", "cfg", "--query", `workload-status=="error"`, "--timeout", "60s")
	// The agent retries install every 5s, then 10s ...: once the option is fixed, the next
	// retry succeeds and the unit goes on, with no `juju resolved`.
	mustRun(t, "config", "-m", "cfg", "cfgcharm", "fail=no")
	log := waitLog(t, "cfg", "us-info proxy=http://squid.internal:3128", 90*time.Second)
	if !strings.Contains(log, `automatically retrying "install" hook`) {
		t.Errorf("no automatic retry in the log:\n%s", log)
	}
	// <root>=INFO: update-status's DEBUG line is not logged ...
	if strings.Contains(log, "us-debug") {
		t.Errorf("DEBUG logged under <root>=INFO:\n%s", log)
	}
	// ... until the running agent reads the new logging-config.
	mustRun(t, "model-config", "-m", "cfg", "logging-config=<root>=INFO;unit=DEBUG")
	waitLog(t, "cfg", "us-debug", 30*time.Second)

	stdout, _ = mustRun(t, "show-model", "cfg", "--format", "json")
	var shown map[string]struct {
		Name         string `json:"name"`
		AgentVersion string `json:"agent-version"`
		Machines     map[string]struct {
			Cores int `json:"cores"`
		} `json:"machines"`
		ControllerUUID string `json:"controller-uuid"`
	}
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if m := shown["cfg"]; m.Name != "admin/cfg" || m.AgentVersion != "3.6.12" || len(m.Machines) != 1 || m.ControllerUUID != ctl.Info.ControllerUUID {
		t.Errorf("show-model:\n%s", stdout)
	}

	code, _, stderr := jujuCLI(t, "destroy-controller", "local", "--no-prompt")
	if code != 1 || !strings.Contains(stderr, "The controller has live hosted models.") || !strings.Contains(stderr, "\tadmin/cfg (alive), 1 machine, 1 application") {
		t.Errorf("destroy-controller with a live model = %d %q", code, stderr)
	}
	_, stderr = mustRun(t, "destroy-controller", "local", "--no-prompt", "--destroy-all-models", "--timeout", "60s")
	if !strings.HasPrefix(stderr, "Destroying controller\n") || !strings.HasSuffix(stderr, "Controller \"local\" destroyed\n") {
		t.Errorf("destroy-controller: %q", stderr)
	}
	if _, err := store.ControllerByName("local"); err == nil {
		t.Error("the client still knows the destroyed controller")
	}
}
