package hooktool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Two uids no account has, as the local provider gives machines (its range starts at
// 0x70000000; these sit far enough in that no machine of a test running beside gets them).
const (
	machineUID = 0x7000fff0
	otherUID   = 0x7000fff1
)

// toolsFor installs the tools, linked to a copy of this test binary that any uid may run
// (the build's own directory is root's alone).
func toolsFor(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "hooktool-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "jujuc")
	if err := os.WriteFile(binary, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(dir, "tools")
	if err := InstallTools(tools, binary); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	return tools
}

// runAs runs a tool as uid in a hook with JUJU_CONTEXT_ID=id.
func runAs(t *testing.T, s *Server, tools string, uid int, id, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(tools, name), args...)
	cmd.Dir = tools
	cmd.Env = []string{"JUJU_AGENT_SOCKET=" + s.Addr(), "JUJU_CONTEXT_ID=" + id}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s as uid %d: %v", name, uid, err)
	}
	return result{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
}

// A server for a machine whose hooks run as its own uid answers that uid alone, and only with
// a context id that is live: another uid (another machine's hook, with a context id copied
// from the hook's environment), root and this process are refused, and so are a forged id
// and the id of a hook that has ended.
func TestServerAnswersOnlyTheMachinesUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs tools as other uids: needs root")
	}
	f := newFake()
	s := startServer(t, f)
	s.OnlyFrom(machineUID)
	tools := toolsFor(t)

	if got := runAs(t, s, tools, machineUID, "ctx-1", "is-leader"); got != ok("True\n") {
		t.Errorf("the machine's uid with its hook's id: %#v", got)
	}
	refusedUID := failed(fmt.Sprintf("permission denied: caller uid %d is not the machine's uid %d", otherUID, machineUID))
	if got := runAs(t, s, tools, otherUID, "ctx-1", "status-set", "active", "taken over"); got != refusedUID {
		t.Errorf("another uid with the live id: %#v, want %#v", got, refusedUID)
	}
	if got := run(s, "", "status-set", "active", "taken over"); got != failed("permission denied: caller uid 0 is not the machine's uid "+fmt.Sprint(machineUID)) {
		t.Errorf("root (this process) with the live id: %#v", got)
	}
	if got := runAs(t, s, tools, machineUID, "forged", "is-leader"); got != failed(`no running hook has context id "forged": hook tools work only while their hook runs`) {
		t.Errorf("a forged id: %#v", got)
	}
	s.Unregister("ctx-1")
	if got := runAs(t, s, tools, machineUID, "ctx-1", "is-leader"); got.code != 1 || !strings.Contains(got.stderr, `no running hook has context id "ctx-1"`) {
		t.Errorf("the id of a hook that ended: %#v", got)
	}
	for _, l := range f.recorded() {
		if strings.Contains(l, "taken over") {
			t.Errorf("a refused call reached the hook's context: %q", l)
		}
	}
}

// Without OnlyFrom (the machine has no uid of its own), this process's uid and root may call,
// no other.
func TestServerRefusesOtherUIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs tools as other uids: needs root")
	}
	s := startServer(t, newFake())
	tools := toolsFor(t)
	if got := runAs(t, s, tools, 0, "ctx-1", "is-leader"); got != ok("True\n") {
		t.Errorf("root: %#v", got)
	}
	if got := runAs(t, s, tools, otherUID, "ctx-1", "is-leader"); got != failed(fmt.Sprintf("permission denied: caller uid %d is not the unit agent's uid 0", otherUID)) {
		t.Errorf("another uid: %#v", got)
	}
}

// One server serves the units of every machine of the process: each hook's tools are answered
// by the hook's own context, for the uid its machine runs hooks as (RegisterAs), or for this
// process's uid and root when it has none (Register). No hook's id works from another
// machine's uid, and an ended hook's id works for nobody.
func TestOneServerForUnitsOfEveryMachine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs tools as other uids: needs root")
	}
	plain, isolated, other := newFake(), newFake(), newFake()
	s := startServer(t, plain) // "ctx-1": a machine without a uid of its own
	s.RegisterAs("ctx-2", isolated, machineUID)
	s.RegisterAs("ctx-3", other, otherUID)
	tools := toolsFor(t)

	if got := runAs(t, s, tools, 0, "ctx-1", "status-set", "active", "plain"); got.code != 0 {
		t.Errorf("root with the plain unit's id: %#v", got)
	}
	if got := runAs(t, s, tools, machineUID, "ctx-2", "status-set", "active", "isolated"); got.code != 0 {
		t.Errorf("the machine's uid with its hook's id: %#v", got)
	}
	if got := runAs(t, s, tools, otherUID, "ctx-3", "status-set", "active", "other"); got.code != 0 {
		t.Errorf("the other machine's uid with its hook's id: %#v", got)
	}
	refused := map[string]result{
		"another machine's uid with a hook's id": runAs(t, s, tools, otherUID, "ctx-2", "status-set", "active", "taken over"),
		"root with an isolated hook's id":        runAs(t, s, tools, 0, "ctx-2", "status-set", "active", "taken over"),
		"a machine's uid with a plain hook's id": runAs(t, s, tools, machineUID, "ctx-1", "status-set", "active", "taken over"),
	}
	for what, got := range refused {
		if got.code != 1 || !strings.Contains(got.stderr, "permission denied: caller uid") {
			t.Errorf("%s: %#v", what, got)
		}
	}
	s.Unregister("ctx-2")
	if got := runAs(t, s, tools, machineUID, "ctx-2", "status-set", "active", "taken over"); got.code != 1 || !strings.Contains(got.stderr, `no running hook has context id "ctx-2"`) {
		t.Errorf("the id of a hook that ended: %#v", got)
	}
	if s.Registered() != 2 {
		t.Errorf("%d contexts registered, want 2", s.Registered())
	}
	for name, f := range map[string]*fakeContext{"plain": plain, "isolated": isolated, "other": other} {
		calls := strings.Join(f.recorded(), "\n")
		if !strings.Contains(calls, name) || strings.Contains(calls, "taken over") {
			t.Errorf("%s context's calls: %q", name, calls)
		}
	}
}
