package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

// tallyHook records every hook a unit runs in runs.log of its charm directory, with the
// remote unit for relation hooks, so the test can tell a hook that ran twice.
const tallyHook = "#!/bin/sh\nset -e\necho \"$(basename \"$0\") ${JUJU_REMOTE_UNIT:-}\" >>\"$JUJU_CHARM_DIR/runs.log\"\nstatus-set active ready\n"

// tally is a charm that only keeps count: every hook appends to runs.log.
func tally() map[string]string {
	files := map[string]string{
		"metadata.yaml": "name: tally\nsummary: counts its hooks\ndescription: every hook appends its name to runs.log\n" +
			"provides:\n  out:\n    interface: tally\nrequires:\n  in:\n    interface: tally\n",
		"manifest.yaml": "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n    architectures: [amd64, arm64]\n",
	}
	for _, h := range []string{"install", "start", "config-changed", "leader-elected", "leader-settings-changed",
		"upgrade-charm", "stop", "remove", "in-relation-created", "in-relation-joined", "in-relation-changed",
		"in-relation-departed", "in-relation-broken", "out-relation-created", "out-relation-joined",
		"out-relation-changed", "out-relation-departed", "out-relation-broken"} {
		files["hooks/"+h] = tallyHook
	}
	return files
}

// haMember is one member as juju show-controller reports it.
type haMember struct {
	ID         string
	APIAddress string `json:"api-address"`
	StoreRole  string `json:"store-role"`
	Health     string `json:"health"`
	Workers    bool   `json:"workers"`
	PID        int    `json:"pid"`
}

func (e *env) haMembers() map[string]haMember {
	e.t.Helper()
	r := e.ok("show-controller", "--format", "json")
	var out map[string]struct {
		Members map[string]haMember `json:"controller-machines"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("show-controller: %v\n%s", err, r.stdout)
	}
	members := out["local"].Members
	for id, m := range members {
		m.ID = id
		members[id] = m
	}
	return members
}

// waitMembers waits until the controller has n healthy members, one of them running the
// workers, and returns them.
func (e *env) waitMembers(n int) map[string]haMember {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ms := e.haMembers()
		healthy, owners := 0, 0
		for _, m := range ms {
			if m.Health == "healthy" {
				healthy++
			}
			if m.Workers {
				owners++
			}
		}
		if len(ms) == n && healthy == n && owners == 1 {
			return ms
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("waiting for %d healthy members: %+v", n, ms)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *env) memberDir(id string) string {
	if id == "0" {
		return e.controllerDir()
	}
	return filepath.Join(e.controllerDir(), "members", id)
}

// memberProc is a member's running jujud and how to start it again.
func (e *env) memberProc(id string) controllerProc {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.memberDir(id), "jujud.pid"))
	if err != nil {
		e.t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		e.t.Fatalf("member %s (pid %d): %v", id, pid, err)
	}
	return controllerProc{pid: pid, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"),
		log: filepath.Join(e.memberDir(id), "jujud.log")}
}

// machinesWithInstances counts the model's machines that have an instance.
func (e *env) machinesWithInstances() int {
	n := 0
	for _, m := range e.status().Machines {
		if m.InstanceID != "" && m.InstanceID != "pending" {
			n++
		}
	}
	return n
}

func allActive(app string, n int) func(unitsJSON) bool {
	return func(s unitsJSON) bool {
		a, ok := s.Applications[app]
		if !ok || len(a.Units) != n {
			return false
		}
		for _, u := range a.Units {
			if u.WorkloadStatus.Current != "active" || u.JujuStatus.Current != "idle" {
				return false
			}
		}
		return true
	}
}

// TestHAJourney: enable-ha on the local provider makes three members, each with an etcd member
// of one cluster. Killing (-9) the member that runs the provisioner in the middle of a deploy of
// 50 units, and the store's leader in the middle of removing 100 units, leaves the model
// converged and consistent: no hook ran twice, no machine was provisioned twice, and the CLI
// went on through the other members without being told. With 2 of 3 members stopped, writes
// are refused (no quorum) and reads say the controller is degraded; one member back restores
// service.
func TestHAJourney(t *testing.T) {
	longJourney(t)
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })

	e.fails(2, "odd", "enable-ha", "-n", "2")
	e.fails(2, "odd", "enable-ha", "-n", "-1")
	e.fails(2, "-n 0 not valid", "enable-ha", "-n", "0")
	r := e.ok("enable-ha")
	if !strings.Contains(r.stdout, "maintaining members: 0") || !strings.Contains(r.stdout, "adding members: 1, 2") {
		t.Errorf("enable-ha said %q", r.stdout)
	}
	members := e.waitMembers(3)
	var ctrls struct {
		Controllers map[string]struct {
			APIEndpoints []string `json:"api-endpoints"`
		} `json:"controllers"`
	}
	if err := json.Unmarshal([]byte(e.ok("controllers", "--format", "json").stdout), &ctrls); err != nil {
		t.Fatal(err)
	}
	if eps := ctrls.Controllers["local"].APIEndpoints; len(eps) != 3 {
		t.Errorf("controllers.yaml keeps %v, want every member's address", eps)
	}
	if r := e.ok("enable-ha", "-n", "3"); !strings.Contains(r.stdout, "maintaining members: 0, 1, 2") {
		t.Errorf("enable-ha again said %q", r.stdout)
	}

	charm := writeCharm(t, tally())
	e.ok("deploy", charm, "front", "-n", "2")
	e.ok("deploy", charm, "back", "-n", "2")
	e.ok("integrate", "front:out", "back:in")
	e.waitUntil("front active", allActive("front", 2))
	e.waitUntil("back active", allActive("back", 2))

	// Kill the member running the provisioner while it provisions 50 machines.
	var owner haMember
	for _, m := range members {
		if m.Workers {
			owner = m
		}
	}
	ownerProc := e.memberProc(owner.ID)
	before := e.machinesWithInstances()
	e.ok("deploy", charm, "big", "-n", "50")
	deadline := time.Now().Add(2 * time.Minute)
	for e.machinesWithInstances() < before+5 {
		if time.Now().After(deadline) {
			t.Fatalf("no machine of the deploy provisioned:\n%s", e.ok("status").stdout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := e.machinesWithInstances(); got >= before+50 {
		t.Logf("every machine was provisioned before the kill (%d); the takeover is not exercised mid-way", got)
	}
	if err := syscall.Kill(ownerProc.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ownerProc.pid, "worker-owning member")
	e.waitUntil("50 big units active after the owner died", allActive("big", 50))
	e.ok("add-unit", "big", "-n", "50")
	e.waitUntil("100 big units active", allActive("big", 100))

	// The killed member comes back through enable-ha.
	if r := e.ok("enable-ha"); !strings.Contains(r.stdout, "restarting members: "+owner.ID) {
		t.Errorf("enable-ha after the kill said %q", r.stdout)
	}
	members = e.waitMembers(3)
	runsBefore := e.tallyRuns()
	// debug-log through any member shows what every member received.
	for _, unit := range []string{"front/0", "back/1", "big/0", "big/99"} {
		if hooks := e.hooksRun(unit); !slices.Contains(hooks, "install") || !slices.Contains(hooks, "start") {
			t.Errorf("debug-log of %s shows hooks %v", unit, hooks)
		}
	}

	// Kill the store's leader while 100 units leave.
	var leader haMember
	for _, m := range members {
		if m.StoreRole == "leader" {
			leader = m
		}
	}
	if leader.ID == "" {
		t.Fatalf("no store leader among %+v", members)
	}
	leaderProc := e.memberProc(leader.ID)
	e.ok("remove-application", "big", "--no-prompt")
	deadline = time.Now().Add(2 * time.Minute)
	for {
		s := e.status()
		if len(s.Applications["big"].Units) < 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no unit of big left")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(leaderProc.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, leaderProc.pid, "store leader")
	e.waitUntil("big gone after the leader died", func(s unitsJSON) bool {
		_, ok := s.Applications["big"]
		return !ok
	})
	e.ok("enable-ha")
	e.waitMembers(3)

	// Consistency: the store's audit, hooks and provisioning.
	e.auditCluster()
	for unit, runs := range runsBefore {
		seen := map[string]bool{}
		for _, line := range runs {
			line = strings.TrimSpace(line)
			hook, _, _ := strings.Cut(line, " ")
			if strings.HasSuffix(hook, "-changed") || hook == "leader-settings-changed" {
				continue // run again on every change, by design
			}
			if seen[line] {
				t.Errorf("%s ran %q twice: %v", unit, line, runs)
			}
			seen[line] = true
		}
		if !seen["install"] || !seen["start"] {
			t.Errorf("%s never installed or started: %v", unit, runs)
		}
	}
	provisioned := e.provisionings()
	// 104 machines; a member killed between recording a machine and logging it misses a line.
	if len(provisioned) < 100 {
		t.Errorf("only %d machines provisioned according to the members' logs, want about 104", len(provisioned))
	}
	for machine, n := range provisioned {
		if n > 1 {
			t.Errorf("machine %s provisioned %d times", machine, n)
		}
	}

	// Without quorum: writes refused, reads degraded, one member back restores service.
	members = e.waitMembers(3)
	var stopped []controllerProc
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids[1:] {
		p := e.memberProc(id)
		if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitGone(t, p.pid, "member "+id)
		stopped = append(stopped, p)
	}
	e.waitFor("writes refused without quorum", func() bool {
		r := e.juju("add-unit", "front")
		return r.code == 1 && strings.Contains(r.stderr, "no quorum")
	})
	e.fails(1, "no quorum", "add-unit", "front")
	if r := e.ok("status"); !strings.Contains(r.stderr, "degraded") || !strings.Contains(r.stdout, "front") {
		t.Errorf("status without quorum: stdout %q stderr %q", r.stdout, r.stderr)
	}
	e.restartMember(stopped[0])
	e.waitFor("writes back with 2 of 3 members", func() bool { return e.juju("add-unit", "front").code == 0 })
	e.restartMember(stopped[1])
	e.waitMembers(3)
	e.waitUntil("front converged", allActive("front", 3))

	// Down to one member: two etcd members leave the cluster, their processes stop, and the
	// one left has the quorum alone.
	if r := e.ok("enable-ha", "-n", "1"); !strings.Contains(r.stdout, "removing members: ") {
		t.Errorf("enable-ha -n 1 said %q", r.stdout)
	}
	for id := range e.waitMembers(1) {
		e.fails(1, "last member", "remove-controller-member", "--no-prompt", id)
	}
	e.ok("add-unit", "front")
	e.waitUntil("front converged on one member", allActive("front", 4))
}

// waitFor polls cond for up to a minute (cond is a CLI call: each poll is real progress).
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// restartMember starts a member's jujud again as it ran, in a session of its own.
func (e *env) restartMember(p controllerProc) {
	e.t.Helper()
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
}

// tallyRuns reads every tally unit's runs.log.
func (e *env) tallyRuns() map[string][]string {
	e.t.Helper()
	logs, _ := filepath.Glob(filepath.Join(e.controllerDir(), "instances", "*", "units", "unit-*", "charm", "runs.log"))
	out := map[string][]string{}
	for _, path := range logs {
		unit := filepath.Base(filepath.Dir(filepath.Dir(path)))
		data, err := os.ReadFile(path)
		if err != nil {
			e.t.Fatal(err)
		}
		out[unit] = strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	return out
}

var provisionedLine = regexp.MustCompile(`msg="machine provisioned".*model=(\S+).*machine=(\S+)`)

// provisionings counts, per model and machine, the provisionings every member's log records.
func (e *env) provisionings() map[string]int {
	e.t.Helper()
	logs, _ := filepath.Glob(filepath.Join(e.controllerDir(), "members", "*", "jujud.log"))
	logs = append(logs, filepath.Join(e.controllerDir(), "jujud.log"))
	out := map[string]int{}
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, m := range provisionedLine.FindAllStringSubmatch(string(data), -1) {
			out[m[1]+"/"+m[2]]++
		}
	}
	return out
}

// auditCluster checks every model through the live cluster (state.Audit) with the bootstrap
// member's client certificate.
func (e *env) auditCluster() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var eps []string
	for id := range e.haMembers() {
		var urls struct {
			Client string `json:"client-url"`
		}
		data, err := os.ReadFile(filepath.Join(e.memberDir(id), "etcd", "urls.json"))
		if err == nil && json.Unmarshal(data, &urls) == nil && urls.Client != "" {
			eps = append(eps, urls.Client)
		}
	}
	tlsDir := filepath.Join(e.controllerDir(), "etcd", "tls")
	st, err := store.Connect(ctx, eps, store.ConnectOptions{TLS: store.TLSFiles{
		CA: filepath.Join(e.controllerDir(), bootstrap.CACertFile), Cert: filepath.Join(tlsDir, bootstrap.EtcdClientCertFile),
		Key: filepath.Join(tlsDir, bootstrap.EtcdClientKeyFile)}})
	if err != nil {
		e.t.Fatalf("connecting to the cluster %v: %v", eps, err)
	}
	defer st.Close()
	e.auditModels(ctx, state.New(st.Client), "")
}

// auditModels checks every model (state.Audit) and returns them.
func (e *env) auditModels(ctx context.Context, s *state.State, label string) []state.ModelSummary {
	e.t.Helper()
	models, err := s.ListModels(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range models {
		problems, err := s.Audit(ctx, m.Model.Uuid)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range problems {
			e.t.Errorf("%saudit of model %s: %s", label, m.Model.Name, p)
		}
	}
	return models
}
