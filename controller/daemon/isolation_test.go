package daemon_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/provider/local"
)

// victimCharm's install hook records its uid and leaves a daemon running (a workload), whose
// environment holds nothing secret but must not be readable by other machines anyway.
const victimCharm = `#!/bin/sh
case $JUJU_DISPATCH_PATH in
hooks/install)
	id -u > uid
	sleep 600 </dev/null >/dev/null 2>&1 &
	echo $! > daemon.pid
	status-set active "daemon started"
	;;
esac
`

// probeCharm's install hook tries to open every path in its file "probes" (the controller's
// data directory, its own agent's files, the other machine's), writes those it could read or
// list to "readable", and says how many in its status and log.
const probeCharm = `#!/bin/sh
case $JUJU_DISPATCH_PATH in
hooks/install)
	id -u > uid
	: > readable
	while IFS= read -r p; do
		if [ -d "$p" ]; then
			ls -a "$p" >/dev/null 2>&1 && echo "listed $p" >> readable
		else
			cat "$p" >/dev/null 2>&1 && echo "read $p" >> readable
		fi
	done < probes
	n=$(wc -l < readable)
	juju-log "probed $(wc -l < probes) paths: opened $n: $(tr '\n' ' ' < readable)"
	status-set active "uid=$(id -u) opened=$n"
	;;
esac
`

// As root, a machine's hooks run as the machine's own uid: a hook reads nothing of the
// controller (bootstrap.json, keys, the store, logs), nothing of its own agent (agent.conf,
// the uniter's record, the logs) and nothing of another machine; another machine's hook has
// another uid, and cannot read its processes' environment or use its hook tools.
func TestHooksRunAsTheirMachinesUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("machines get uids of their own only when the controller runs as root")
	}
	if on, why := local.Isolation(); !on {
		t.Skipf("machines get no uid of their own here: %s", why)
	}
	c, info, dir := startController(t)
	var model string
	for _, m := range info.Models {
		if m.Name == "default" {
			model = m.UUID
		}
	}
	inst := func(machine string) string { return filepath.Join(dir, "instances", local.InstanceID(model, machine)) }

	deployDir(t, c, dispatchCharm(t, "victim", "name: victim\nsummary: v\n", victimCharm), "victim", 1)
	waitFor(t, c, "default", "victim/0 installed", workload("victim/0", "active", "daemon started"))
	if pid, err := strconv.Atoi(strings.TrimSpace(charmFile(t, dir, "victim/0", "daemon.pid"))); err == nil {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}

	// Everything of the controller's, then of the victim's machine (0), then the probe's own
	// agent's files, seen from its charm directory.
	var probes []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == filepath.Join(dir, "instances") {
			probes = append(probes, p)
			return filepath.SkipDir
		}
		probes = append(probes, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(inst("0"), func(p string, _ fs.DirEntry, err error) error {
		probes = append(probes, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	probes = append(probes, "..", "../agent.conf", "../uniter.json", "../unit.log",
		"../../..", "../../../agent.conf", "../../../machine.log", "../../../units",
		"probes") // its own file: the one it must read, so that the probe is seen to work
	probe := dispatchCharm(t, "probe", "name: probe\nsummary: p\n", probeCharm)
	if err := os.WriteFile(filepath.Join(probe, "probes"), []byte(strings.Join(probes, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deployDir(t, c, probe, "probe", 1)
	fs := waitFor(t, c, "default", "probe/0 installed", workload("probe/0", "active", "uid="))
	if m := findUnit(fs, "probe/0").Machine; m != "1" {
		t.Fatalf("probe/0 is on machine %s, want 1", m)
	}

	uid := func(machine string) int {
		t.Helper()
		conf, err := agent.ReadConf(inst(machine))
		if err != nil {
			t.Fatal(err)
		}
		return conf.UID
	}
	victimUID, probeUID := uid("0"), uid("1")
	if victimUID < local.UIDBase || probeUID < local.UIDBase || victimUID == probeUID {
		t.Fatalf("machine uids %d and %d: want two different uids from %d", victimUID, probeUID, local.UIDBase)
	}
	if got := strings.TrimSpace(charmFile(t, dir, "victim/0", "uid")); got != strconv.Itoa(victimUID) {
		t.Errorf("victim/0's hook ran as uid %s, want machine 0's %d", got, victimUID)
	}
	if got := strings.TrimSpace(charmFile(t, dir, "probe/0", "uid")); got != strconv.Itoa(probeUID) {
		t.Errorf("probe/0's hook ran as uid %s, want machine 1's %d", got, probeUID)
	}
	if readable := charmFile(t, dir, "probe/0", "readable"); readable != "read probes\n" {
		t.Errorf("a hook of machine 1 opened what is not its own (or not its own file):\n%s", readable)
	}
	if msg := findUnit(fs, "probe/0").GetWorkloadStatus().GetMessage(); msg != fmt.Sprintf("uid=%d opened=1", probeUID) {
		t.Errorf("probe/0 status %q", msg)
	}
	if len(probes) < 20 {
		t.Errorf("only %d paths probed: %v", len(probes), probes)
	}

	// From machine 1 (juju exec, as its uid too): machine 0's daemon's environment, and
	// machine 0's hook tools with a context id of machine 1's choosing.
	pid := strings.TrimSpace(charmFile(t, dir, "victim/0", "daemon.pid"))
	// One hook-tool server per agent process: the hooks are told apart by their context id,
	// and a context id is served only to the uid of its hook's machine.
	socket := hookToolSocket(t, fmt.Sprintf("agents-%d", os.Getpid()))
	cmd := fmt.Sprintf(`id -u; cat /proc/%s/environ >/dev/null && echo ENVIRON-READ
JUJU_AGENT_SOCKET=%s JUJU_CONTEXT_ID=forged status-set active taken-over`, pid, socket)
	task := waitTask(t, c, enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"probe/0"}, Command: cmd})[0], "finished", finished)
	res := results(t, task)
	if res["stdout"] != strconv.Itoa(probeUID)+"\n" {
		t.Errorf("juju exec on probe/0: stdout %q, want only its uid %d", res["stdout"], probeUID)
	}
	wantRefusal := `ERROR no running hook has context id "forged"`
	if stderr := fmt.Sprint(res["stderr"]); !strings.Contains(stderr, "Permission denied") || !strings.Contains(stderr, wantRefusal) {
		t.Errorf("juju exec on probe/0: stderr %q, want the environment refused and %q", stderr, wantRefusal)
	}
	// The machine's own exec runs as its uid, in its home.
	task = waitTask(t, c, enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{"1"}, Command: "id -u; pwd"})[0], "finished", finished)
	if res := results(t, task); res["stdout"] != fmt.Sprintf("%d\n%s\n", probeUID, filepath.Join(inst("1"), "home")) {
		t.Errorf("juju exec on machine 1: %v", res)
	}
	fs, err = c.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if msg := findUnit(fs, "victim/0").GetWorkloadStatus().GetMessage(); msg != "daemon started" {
		t.Errorf("victim/0's status was changed from another machine: %q", msg)
	}
	if w := fs.GetModel().GetWarning(); w != "" {
		t.Errorf("status warns %q on a controller that isolates its machines", w)
	}
}

// hookToolSocket is the abstract socket of a unit agent's hook tools (jujud-<unit>-<random>),
// as any process on the host can find it in /proc/net/unix.
func hookToolSocket(t *testing.T, unit string) string {
	t.Helper()
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.HasPrefix(fields[len(fields)-1], "@jujud-"+unit+"-") {
			return fields[len(fields)-1]
		}
	}
	t.Fatalf("no hook tools socket of %s in /proc/net/unix", unit)
	return ""
}

// sharedDir is a directory the tests and the machines' hooks (which run as uids of their own
// when the tests run as root) can both write: a test's own temporary directories are root's
// alone.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}
