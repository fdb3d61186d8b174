package root

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/output"
)

func TestMain(m *testing.M) {
	// The controller these tests run in-process links the hook tools (action-set,
	// config-get ...) to this binary, as jujud does: run as one, it must be that tool, not
	// the tests again (which would start controllers that run actions that call tools ...).
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	if filepath.Base(os.Args[0]) == "jujud" {
		os.Exit(runFakeJujud())
	}
	os.Exit(m.Run())
}

// jujuCLI runs root.Main the way the juju binary does, with fresh test streams.
func jujuCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	s, out, errOut := output.TestStreams()
	code = Main(args, s)
	return code, out.String(), errOut.String()
}

// setupFakeJujud puts a "jujud" on $PATH that is this test binary, and gives juju an empty
// $JUJU_DATA.
func setupFakeJujud(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "jujud")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	data := filepath.Join(t.TempDir(), "juju")
	t.Setenv("JUJU_DATA", data)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	t.Setenv("JUJU_REPOSITORY", "")
	return data
}

func mustRun(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, stdout, stderr := jujuCLI(t, args...)
	if code != 0 {
		t.Fatalf("juju %s = %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

func TestEndToEnd(t *testing.T) {
	data := setupFakeJujud(t)

	_, stderr := mustRun(t, "bootstrap")
	want := "Creating Juju controller \"local\" on localhost\nBootstrap complete, controller \"local\" is now available\nInitial model \"default\" added\n"
	if stderr != want {
		t.Errorf("bootstrap stderr = %q", stderr)
	}
	store := cmdutil.NewStore(data)
	d, err := store.ControllerByName("local")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = jujuCLI(t, "kill-controller", "local", "--no-prompt") })
	if info, err := os.Stat(d.DataDir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("controller data dir: %v, %v", info, err)
	}
	if info, err := os.Stat(filepath.Join(data, "accounts.yaml")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("accounts.yaml: %v, %v", info, err)
	}

	if code, _, stderr := jujuCLI(t, "bootstrap"); code != 1 || stderr != "ERROR controller \"local\" already exists\n" {
		t.Errorf("second bootstrap = %d %q", code, stderr)
	}

	stdout, _ := mustRun(t, "controllers")
	if !strings.Contains(stdout, "local*      default") {
		t.Errorf("controllers:\n%s", stdout)
	}
	stdout, _ = mustRun(t, "switch")
	if stdout != "local:admin/default\n" {
		t.Errorf("switch = %q", stdout)
	}

	stdout, stderr = mustRun(t, "status")
	if !strings.HasPrefix(stdout, "Model    Controller  Cloud/Region         Version  Timestamp\ndefault  local") ||
		stderr != "\nModel \"default\" is empty.\n" {
		t.Errorf("status:\n%s\nstderr %q", stdout, stderr)
	}

	_, stderr = mustRun(t, "add-model", "test")
	if stderr != "Added 'test' model on localhost with credential 'admin' for user 'admin'\n" {
		t.Errorf("add-model stderr = %q", stderr)
	}
	stdout, _ = mustRun(t, "models")
	if !strings.Contains(stdout, "test*") {
		t.Errorf("models:\n%s", stdout)
	}
	_, stderr = mustRun(t, "switch", "default")
	if stderr != "local:admin/test -> local:admin/default\n" {
		t.Errorf("switch stderr = %q", stderr)
	}

	charms := t.TempDir()
	writeTestCharm(t, filepath.Join(charms, "mysql"))
	t.Setenv("JUJU_REPOSITORY", charms)
	_, stderr = mustRun(t, "deploy", "mysql", "-n", "2", "--constraints", "mem=2G")
	want = "Located local charm \"mysql\", revision 1\nDeploying \"mysql\" from local charm \"mysql\", revision 1 on ubuntu@22.04/stable\n"
	if stderr != want {
		t.Errorf("deploy stderr = %q", stderr)
	}
	code, _, stderr := jujuCLI(t, "deploy", "mysql")
	if code != 1 || !strings.HasPrefix(stderr, "ERROR cannot add application \"mysql\": application already exists\ndeploy application using an alias name:") {
		t.Errorf("second deploy = %d %q", code, stderr)
	}
	stdout, _ = mustRun(t, "status", "--format", "yaml")
	if !strings.Contains(stdout, "mysql/1:") {
		t.Errorf("status yaml:\n%s", stdout)
	}
	// -m reaches another model (cached by add-model) without switching.
	stdout, stderr = mustRun(t, "status", "-m", "test")
	if !strings.HasPrefix(stdout, "Model  Controller") || !strings.Contains(stdout, "test   local") || stderr != "\nModel \"test\" is empty.\n" {
		t.Errorf("status -m test:\n%s\nstderr %q", stdout, stderr)
	}

	pid := controllerPIDForTest(t, d)
	_, stderr = mustRun(t, "kill-controller", "local", "--no-prompt")
	if stderr != "Destroying controller \"local\"\nController \"local\" destroyed\n" {
		t.Errorf("kill-controller stderr = %q", stderr)
	}
	if err := syscall.Kill(pid, 0); err == nil && processAliveForTest(pid) {
		t.Errorf("jujud (pid %d) still running", pid)
	}
	if _, err := os.Stat(d.DataDir); !os.IsNotExist(err) {
		t.Errorf("data dir left behind: %v", err)
	}
	code, _, stderr = jujuCLI(t, "status")
	if code != 1 || !strings.HasPrefix(stderr, "ERROR No controllers registered.") {
		t.Errorf("status after kill = %d %q", code, stderr)
	}
}

func TestControllerDown(t *testing.T) {
	data := setupFakeJujud(t)
	mustRun(t, "bootstrap", "localhost", "down")
	d, err := cmdutil.NewStore(data).ControllerByName("down")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = jujuCLI(t, "kill-controller", "down", "--no-prompt") })
	pid := controllerPIDForTest(t, d)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for processAliveForTest(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	start := time.Now()
	code, stdout, stderr := jujuCLI(t, "status")
	elapsed := time.Since(start)
	prefix := "ERROR cannot connect to controller at " + d.APIEndpoints[0] + ": "
	// The reason is usually "connection refused", but a parallel test may take the freed port.
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "cannot connect") != 1 {
		t.Errorf("status against a dead controller = %d %q %q", code, stdout, stderr)
	}
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("want one line, got %q", stderr)
	}
	if elapsed > 2*time.Second {
		t.Errorf("took %v", elapsed)
	}

	// A wrong password is refused, not reported as a dead controller.
	_, _, _ = jujuCLI(t, "kill-controller", "down", "--no-prompt")
	mustRun(t, "bootstrap", "localhost", "down")
	store := cmdutil.NewStore(data)
	_ = store.UpdateAccount("down", cmdutil.AccountDetails{User: "admin", Password: "wrong"})
	code, _, stderr = jujuCLI(t, "status")
	if code != 1 || !strings.Contains(stderr, "invalid entity name or password") {
		t.Errorf("status with a wrong password = %d %q", code, stderr)
	}
}

func controllerPIDForTest(t *testing.T, d *cmdutil.ControllerDetails) int {
	t.Helper()
	data, err := os.ReadFile(d.PIDFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func processAliveForTest(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

func writeTestCharm(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"metadata.yaml": "name: mysql\nsummary: MySQL\ndescription: MySQL\nprovides:\n  db: mysql\n",
		"manifest.yaml": "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n",
		"hooks/install": "#!/bin/sh\n",
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
}
