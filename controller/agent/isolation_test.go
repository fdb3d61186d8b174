package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/agent/hooktool"
)

// A machine uid as the local provider gives them (from 0x70000000), far enough into the range
// that no machine of a controller test running beside gets it.
const isoUID = 0x7000fff4

func isoConf() Conf {
	return Conf{ID: "app/0", Tag: "unit-app-0", Model: "8d3a3a26-5c7a-4b5e-9f43-0c2b1a9e7d11", UID: isoUID, GID: isoUID}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs charm code as a machine uid: needs root")
	}
}

// openTempDir is a directory every uid may pass through (t.TempDir's parents are root's
// alone), as the provider opens the way to its instances.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent-iso-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

func owner(t *testing.T, path string) (uint32, uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode().Perm()
}

// isoUnit deploys a unit as the deployer does for a machine with a uid of its own: the unit's
// directory root:<gid> 0710, the charm the uid's, its hook tools reachable and its server
// answering the uid alone.
func isoUnit(t *testing.T, files map[string]string) (*unitAgent, *snapshot) {
	t.Helper()
	conf := isoConf()
	units := filepath.Join(openTempDir(t), "units")
	dir := filepath.Join(units, "unit-app-0")
	if err := prepareAgentDir(units, conf); err != nil {
		t.Fatal(err)
	}
	if err := prepareAgentDir(dir, conf); err != nil {
		t.Fatal(err)
	}
	a := &unitAgent{dir: dir, conf: conf}
	if err := installCharm(zipFiles(t, files), a.charmDir(), conf); err != nil {
		t.Fatal(err)
	}
	if err := WriteConf(dir, conf); err != nil {
		t.Fatal(err)
	}
	if err := a.readHooks(); err != nil {
		t.Fatal(err)
	}
	var err error
	if a.log, err = openUnitLog(dir, a.conf.Tag, a.conf.Model, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.log.close)
	// This test binary acts as the tools; it sits in the build's directory, which only root
	// may enter, so installTools links it into the tools directory.
	if a.toolsBinary, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	if err := a.installTools(); err != nil {
		t.Fatal(err)
	}
	a.toolsAddr = hooktool.SocketAddr(a.conf.ID)
	if a.tools, err = hooktool.NewServer(a.toolsAddr); err != nil {
		t.Fatal(err)
	}
	if err := a.isolate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { a.tools.Serve(ctx); close(served) }()
	t.Cleanup(func() { cancel(); <-served })
	return a, &snapshot{unit: &pb.AgentUnit{Name: "app/0", Machine: "0"}, app: &pb.AgentApplication{Name: "app", ModelName: "default"}}
}

// An action and a juju exec command of a machine with a uid of their own run as it, in a
// home of their own, with hook tools that answer them; they write the charm directory and
// read nothing of the agent's.
func TestIsolatedUnitRunsCharmCodeAsTheMachineUID(t *testing.T) {
	needRoot(t)
	a, snap := isoUnit(t, map[string]string{
		"metadata.yaml": "name: app\n",
		"actions/whoami": `#!/bin/sh
action-set uid="$(id -u)" gid="$(id -g)" groups="$(id -G)" home="$HOME"
echo written > "$JUJU_CHARM_DIR/.unit-state.db"
touch "$HOME/.cache" || action-fail "home not writable"
if cat ../agent.conf >/dev/null 2>&1; then action-set conf=read; fi
if ls .. >/dev/null 2>&1; then action-set unitdir=listed; fi
`,
	})
	out := a.execTask(context.Background(), task("2", "whoami", `{}`), snap, nil)
	uid := strconv.Itoa(isoUID)
	checkOutcome(t, out, taskCompleted, "", map[string]any{
		"uid": uid, "gid": uid, "groups": uid, "home": filepath.Join(a.dir, homeDirName),
		"return-code": 0,
	})
	if u, _, _ := owner(t, filepath.Join(a.charmDir(), ".unit-state.db")); u != isoUID {
		t.Errorf("the file the action wrote belongs to %d", u)
	}

	out = a.execTask(context.Background(), task("4", execAction, `{"command":"id -u; pwd; cat ../agent.conf"}`), snap, nil)
	if out.status != taskCompleted || out.results["stdout"] != uid+"\n"+a.charmDir()+"\n" || !strings.Contains(fmt.Sprint(out.results["stderr"]), "Permission denied") {
		t.Errorf("juju exec: %s %v", out.status, out.results)
	}

	// What root keeps: the unit's directory (root:<gid> 0710), agent.conf, the uniter's record.
	if u, g, perm := owner(t, a.dir); u != 0 || g != isoUID || perm != 0o710 {
		t.Errorf("unit directory %d:%d %o", u, g, perm)
	}
	if u, _, perm := owner(t, filepath.Join(a.dir, ConfFile)); u != 0 || perm != 0o600 {
		t.Errorf("agent.conf %d %o", u, perm)
	}
	if u, g, _ := owner(t, filepath.Join(a.charmDir(), "actions", "whoami")); u != isoUID || g != isoUID {
		t.Errorf("the charm's files belong to %d:%d", u, g)
	}
}

// The tools the machine's uid runs are a link of the runner's binary in the tools directory
// (the binary sits where only root may go); a restarted agent installs them again without
// pointing them anywhere else, even for a moment, so a hook still running keeps its tools.
func TestIsolatedToolsStayPutAcrossRestarts(t *testing.T) {
	needRoot(t)
	a, _ := isoUnit(t, map[string]string{"metadata.yaml": "name: app\n"})
	tool := filepath.Join(a.toolsDir(), "status-set")
	link := filepath.Join(a.toolsDir(), toolsBinaryLink)
	before, err := os.Stat(link)
	if err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(tool); err != nil || target != link {
		t.Fatalf("status-set links to %q (%v), want %s", target, err, link)
	}
	if exe, _ := os.Stat(a.toolsBinary); !os.SameFile(before, exe) {
		t.Errorf("%s is not the runner's binary", link)
	}
	toolBefore, _ := os.Lstat(tool)
	if err := a.installTools(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(link)
	toolAfter, _ := os.Lstat(tool)
	if !os.SameFile(before, after) || !os.SameFile(toolBefore, toolAfter) {
		t.Error("installing the tools again replaced them")
	}
}

// A charm upgrade keeps the charm the machine uid's, carries over what it wrote, and does the
// carrying with its rights: a link it planted to a file only root may read stays a link it
// cannot follow.
func TestIsolatedCharmUpgradeKeepsOwnership(t *testing.T) {
	needRoot(t)
	v1 := map[string]string{"metadata.yaml": "name: app\n", "hooks/install": "#!/bin/sh\n"}
	v2 := map[string]string{"metadata.yaml": "name: app\n", "hooks/upgrade-charm": "#!/bin/sh\n", "src/charm.py": "#\n"}
	a, _ := isoUnit(t, v1)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The charm's own files, as its hooks would write them: as the uid.
	err := asUser(isoUID, isoUID, func() error {
		if err := os.WriteFile(filepath.Join(a.charmDir(), ".unit-state.db"), []byte("kept"), 0o600); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(a.charmDir(), "data"), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(a.charmDir(), "data", "notes"), []byte("kept"), 0o600); err != nil {
			return err
		}
		return os.Symlink(secret, filepath.Join(a.charmDir(), "planted"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := replaceCharmDir(zipFiles(t, v2), zipFiles(t, v1), a.charmDir()); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".", "src", "src/charm.py", "hooks/upgrade-charm", ".unit-state.db", "data", "data/notes", "planted"} {
		if u, g, _ := owner(t, filepath.Join(a.charmDir(), rel)); u != isoUID || g != isoUID {
			t.Errorf("%s belongs to %d:%d after the upgrade", rel, u, g)
		}
	}
	if u, _, perm := owner(t, secret); u != 0 || perm != 0o600 {
		t.Errorf("the planted link's target changed: %d %o", u, perm)
	}
	// The thread that carried the files is root's again: root reads what only root may.
	if data, err := os.ReadFile(secret); err != nil || string(data) != "root only" {
		t.Errorf("root after the upgrade: %q %v", data, err)
	}
}

// asUser acts with the uid's rights alone, and gives the thread back.
func TestAsUser(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(openTempDir(t), "uid's")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, isoUID, isoUID); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := asUser(isoUID, isoUID, func() error {
		if _, err := os.ReadFile(secret); err == nil {
			return fmt.Errorf("read a root 0600 file as uid %d", isoUID)
		}
		return os.WriteFile(filepath.Join(dir, "mine"), nil, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if u, g, _ := owner(t, filepath.Join(dir, "mine")); u != isoUID || g != isoUID {
		t.Errorf("a file made as the uid belongs to %d:%d", u, g)
	}
	for range 20 { // whatever thread runs this now has root's rights
		if _, err := os.ReadFile(secret); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHelperAgentProcess is the "agent" TestKilledAgentKillsItsHooks kills: it starts a hook
// as its machine's uid and prints its pid.
func TestHelperAgentProcess(t *testing.T) {
	if os.Getenv("AGENT_TEST_HELPER") != "hook" {
		t.Skip("a helper process")
	}
	cmd := exec.Command("/bin/sleep", "300")
	cmd.SysProcAttr = isoConf().procAttr()
	if err := cmd.Start(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// A hook dies with its agent's process (it runs as another uid, which would otherwise clear
// the death signal), so a restarted agent never runs a hook beside the one still running.
func TestKilledAgentKillsItsHooks(t *testing.T) {
	needRoot(t)
	agent := exec.Command(os.Args[0], "-test.run=^TestHelperAgentProcess$")
	agent.Env = append(os.Environ(), "AGENT_TEST_HELPER=hook")
	stdout, err := agent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(stdout, &pid); err != nil || pid <= 0 {
		_ = agent.Process.Kill()
		t.Fatalf("the helper started no hook: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil || !strings.Contains(string(status), fmt.Sprintf("Uid:\t%d\t", isoUID)) {
		t.Fatalf("the hook does not run as uid %d: %v\n%s", isoUID, err, status)
	}
	_ = agent.Process.Kill()
	_ = agent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		// A zombie (dead, not yet reaped by init) counts as gone.
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(data), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the hook outlived its agent")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The ssh sessions of a machine with a uid of its own run as it, under the machine's account
// (which only its sshd sees), in its home directory, with no other group; so do sftp and scp.
func TestIsolatedSSHSessionsRunAsTheMachineUID(t *testing.T) {
	needRoot(t)
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("no /usr/sbin/sshd")
	}
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("no ssh client")
	}
	scpBin, err := exec.LookPath("scp")
	if err != nil {
		t.Skip("no scp client")
	}
	conf := Conf{Model: "8d3a3a26-5c7a-4b5e-9f43-0c2b1a9e7d11", ID: "3", Address: testAddress(), UID: isoUID, GID: isoUID}
	machineDir, keyDir := filepath.Join(openTempDir(t), "machine-3"), t.TempDir()
	if err := WriteConf(machineDir, conf); err != nil {
		t.Fatal(err)
	}
	idFile, pubLine := clientKey(t, keyDir, "juju-client-key")
	api := &fakeSSHAPI{keys: make(chan *pb.AuthorizedKeys, 1), reported: make(chan *pb.SetSSHHostRequest, 4)}
	srv := newSSHServer(machineDir, conf, api)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	api.keys <- &pb.AuthorizedKeys{Keys: []string{pubLine}, Revision: 1}
	var r *pb.SetSSHHostRequest
	select {
	case r = <-api.reported:
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no report from the ssh server")
	}
	if r.Error != "" || r.User != "juju-9e7d11-3" {
		t.Fatalf("report = %+v", r)
	}
	sshLog := func() string {
		log, _ := os.ReadFile(filepath.Join(machineDir, sshdDirName, sshdLogFile))
		return string(log)
	}
	opts := []string{"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-F", "/dev/null", "-i", idFile}
	target := r.User + "@" + r.Address
	home := filepath.Join(machineDir, homeDirName)
	out, err := exec.Command(sshBin, append(opts, "-p", strconv.Itoa(int(r.Port)), target,
		"id -u; id -G; whoami; pwd; echo $HOME; cat "+filepath.Join(machineDir, ConfFile)+" 2>&1")...).CombinedOutput()
	uid := strconv.Itoa(isoUID)
	want := uid + "\n" + uid + "\n" + r.User + "\n" + home + "\n" + home + "\n"
	if err == nil || !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("ssh session: %v\n%s\nwant it to start with\n%s and be refused agent.conf\nsshd's log:\n%s", err, out, want, sshLog())
	}
	local := filepath.Join(keyDir, "up.txt")
	if err := os.WriteFile(local, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(scpBin, append(opts, "-P", strconv.Itoa(int(r.Port)), local, target+":up.txt")...).CombinedOutput(); err != nil {
		t.Fatalf("scp: %v\n%s\nsshd's log:\n%s", err, out, sshLog())
	}
	if u, g, _ := owner(t, filepath.Join(home, "up.txt")); u != isoUID || g != isoUID {
		t.Errorf("a file copied in belongs to %d:%d", u, g)
	}
	// The host's accounts are as they were: the machine's exists only for its sshd.
	if data, _ := os.ReadFile("/etc/passwd"); strings.Contains(string(data), r.User) {
		t.Errorf("the machine's account reached the host's /etc/passwd")
	}
}

// With a runner's tools directory, the hook tools are installed once, in a directory named by
// the binary, and every unit's charm code finds them on its PATH and runs them as its
// machine's uid; a second unit installs nothing.
func TestIsolatedUnitsShareTheRunnersTools(t *testing.T) {
	needRoot(t)
	a, snap := isoUnit(t, map[string]string{
		"metadata.yaml":  "name: app\n",
		"actions/whoami": "#!/bin/sh\naction-set uid=\"$(id -u)\" path=\"$PATH\"\n",
	})
	r := &Runner{cfg: RunnerConfig{ToolsBinary: a.toolsBinary, ToolsDir: filepath.Join(openTempDir(t), "tools")},
		log: slog.New(slog.DiscardHandler)}
	a.runner = r
	if err := a.installTools(); err != nil {
		t.Fatal(err)
	}
	shared := a.toolsDir()
	if filepath.Dir(shared) != r.cfg.ToolsDir {
		t.Fatalf("tools in %s, want the runner's %s", shared, r.cfg.ToolsDir)
	}
	out := a.execTask(context.Background(), task("2", "whoami", `{}`), snap, nil)
	checkOutcome(t, out, taskCompleted, "", map[string]any{
		"uid": strconv.Itoa(isoUID), "path": shared + ":" + systemPath, "return-code": 0,
	})
	tool := filepath.Join(shared, "status-set")
	before, err := os.Lstat(tool)
	if err != nil {
		t.Fatal(err)
	}
	b := &unitAgent{runner: r, conf: isoConf(), dir: filepath.Join(openTempDir(t), "unit-app-1"), toolsBinary: a.toolsBinary}
	if err := b.installTools(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Lstat(tool)
	if b.toolsDir() != shared || !os.SameFile(before, after) {
		t.Errorf("second unit: tools in %s (want %s), replaced: %v", b.toolsDir(), shared, !os.SameFile(before, after))
	}
	if _, err := os.Stat(filepath.Join(b.dir, "tools")); err == nil {
		t.Error("the second unit installed tools of its own")
	}
}

// The shared tools' directory is named by the binary: installing again keeps it; a rebuilt
// binary gets a new one, and the old one goes.
func TestSharedToolsFollowTheBinary(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tools")
	bin := filepath.Join(t.TempDir(), "jujuc")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho one\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	first, err := installSharedTools(root, bin)
	if err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(first, "relation-get")); err != nil || target != filepath.Join(first, toolsBinaryLink) {
		t.Fatalf("relation-get links to %q (%v)", target, err)
	}
	if fi, err := os.Stat(first); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("tools directory: %v %v", fi, err)
	}
	if again, err := installSharedTools(root, bin); err != nil || again != first {
		t.Fatalf("installed again in %s (%v), want %s", again, err, first)
	}
	// Rebuilt: a new file in its place.
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho two\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	second, err := installSharedTools(root, bin)
	if err != nil || second == first {
		t.Fatalf("rebuilt binary: %s, %v", second, err)
	}
	if _, err := os.Stat(first); err == nil {
		t.Error("the old binary's tools were kept")
	}
	out, err := exec.Command(filepath.Join(second, "status-get")).Output()
	if err != nil || string(out) != "two\n" {
		t.Errorf("status-get ran %q, %v", out, err)
	}
}
