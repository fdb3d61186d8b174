package daemon_test

// Leadership never overlaps: the leader's lease is kept while its hooks and actions run, however
// long, and a unit whose lease was taken says it does not lead and cannot write what only a
// leader may. The controllers here use 2 s leases (Juju's are 60 s), so that a hook outlasts
// a lease in seconds.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

const testLease = 2 * time.Second

// leadCharm logs every hook with what is-leader said. Its leader-elected waits for the gate
// file, then sets leader settings; its start, on a unit that is not the leader, keeps asking
// is-leader until the gate opens, so that a lease the leader let lapse would be taken.
func leadCharm(t *testing.T, gate string) string {
	return dispatchCharm(t, "lead", "name: lead\nsummary: leadership\n", fmt.Sprintf(`#!/bin/sh
hook=${JUJU_DISPATCH_PATH#hooks/}
log="$JUJU_CHARM_DIR/leader.log"
echo "$hook $(is-leader)" >> "$log"
case $hook in
leader-elected)
	start=$(date +%%s)
	while [ ! -e %[1]q ]; do sleep 0.05; done
	echo "slept $(( $(date +%%s) - start ))" >> "$log"
	echo "after $(is-leader)" >> "$log"
	if leader-set elected="$JUJU_UNIT_NAME" 2>> "$log"; then echo "leader-set ok" >> "$log"; fi
	;;
start)
	while [ ! -e %[1]q ]; do echo "asked $(is-leader)" >> "$log"; sleep 0.2; done
	;;
esac
`, gate))
}

// leaderLog reads a unit's leader.log ("" before it exists).
func leaderLog(controllerDir, unit string) string {
	matches, _ := filepath.Glob(filepath.Join(controllerDir, "instances", "*", "units",
		"unit-"+strings.ReplaceAll(unit, "/", "-"), "charm", "leader.log"))
	if len(matches) != 1 {
		return ""
	}
	data, _ := os.ReadFile(matches[0])
	return string(data)
}

// waitLeaderLogs waits until ok holds of the units' leader logs; it gives up once they have
// not grown for 30 s.
func waitLeaderLogs(t *testing.T, controllerDir, what string, units []string, ok func(logs map[string]string) bool) map[string]string {
	t.Helper()
	last, moved := "", time.Now()
	for {
		logs := map[string]string{}
		all := ""
		for _, u := range units {
			logs[u] = leaderLog(controllerDir, u)
			all += logs[u]
		}
		if ok(logs) {
			return logs
		}
		if all != last {
			last, moved = all, time.Now()
		}
		if time.Since(moved) > 30*time.Second {
			t.Fatalf("waiting for %s: %v", what, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lines(log, prefix string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// runLead starts a controller with short leases (over ext when it is given).
func runLead(t *testing.T, dir string, ext *store.Store) (*client.Client, func()) {
	c, _, stop := runControllerWith(t, dir, func(cfg *daemon.Config) {
		cfg.LeaseDuration = testLease
		useEtcd(cfg, ext)
	})
	return c, stop
}

// The leader's leader-elected runs for more than two leases while the other unit keeps asking
// is-leader; the lease stays the leader's throughout, nobody else runs leader-elected or hears
// True, and the leader's leader-set afterwards succeeds. So does an action longer than a lease.
func TestLeaderKeepsLeaseThroughLongHooksAndActions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "controller")
	gate := filepath.Join(sharedDir(t), "gate") // the hooks read it as their machines' uids
	c, stop := runLead(t, dir, nil)
	defer stop()
	deployDir(t, c, leadCharm(t, gate), "lead", 2)
	units := []string{"lead/0", "lead/1"}
	var leader, follower string
	waitLeaderLogs(t, dir, "the leader in leader-elected and the follower asking", units, func(logs map[string]string) bool {
		for i, u := range units {
			if lines(logs[u], "leader-elected") > 0 {
				leader, follower = u, units[1-i]
			}
		}
		// 20 answers, 0.2 s apart: over two leases since the follower started asking, all
		// of it while the leader waits in its hook.
		return leader != "" && lines(logs[follower], "asked") >= 20
	})
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := waitLeaderLogs(t, dir, "the leader's leader-set", units, func(logs map[string]string) bool {
		return strings.Contains(logs[leader], "leader-set ok") || strings.Contains(logs[leader], "ERROR")
	})
	var slept int
	if _, err := fmt.Sscanf(logs[leader][strings.Index(logs[leader], "slept "):], "slept %d", &slept); err != nil || slept < 2*int(testLease/time.Second) {
		t.Errorf("leader-elected waited %d s (%v); want more than two leases", slept, err)
	}
	for _, want := range []string{"install True", "leader-elected True", "after True", "leader-set ok"} {
		if !strings.Contains(logs[leader], want+"\n") {
			t.Errorf("the leader's log lacks %q:\n%s", want, logs[leader])
		}
	}
	if strings.Contains(logs[follower], "True") || lines(logs[follower], "leader-elected") != 0 {
		t.Errorf("the follower led too:\n%s", logs[follower])
	}

	// An action that outlasts a lease keeps it as well.
	id := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{leader},
		Command: "sleep 3; is-leader; leader-set after-action=1"})[0]
	checkTask(t, waitTask(t, c, id, "finished", finished), "completed", "",
		map[string]any{"return-code": float64(0), "stdout": "True\n"})
	id = enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{follower}, Command: "is-leader; leader-get"})[0]
	checkTask(t, waitTask(t, c, id, "finished", finished), "completed", "",
		map[string]any{"return-code": float64(0), "stdout": "False\nafter-action: \"1\"\nelected: " + leader + "\n"})
	fs := waitFor(t, c, "default", "status", func(fs *pb.FullStatusResponse) bool { return findUnit(fs, leader) != nil })
	if !findUnit(fs, leader).Leader || findUnit(fs, follower).Leader {
		t.Errorf("status leaders: %v", fs.Applications)
	}
}

// A leader whose lease ran out while its agent was stopped, and was taken by another unit,
// comes back a follower: is-leader False, its leader-set and application status refused in
// Juju's words, leader-settings-changed run; the new leader runs leader-elected and writes.
func TestUnitWhoseLeaseWasTakenNoLongerLeads(t *testing.T) {
	ext := externalStore(t)
	st := state.New(ext.Client)
	dir := filepath.Join(t.TempDir(), "controller")
	gate := filepath.Join(sharedDir(t), "gate") // the hooks read it as their machines' uids
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, stop := runLead(t, dir, ext)
	deployDir(t, c, leadCharm(t, gate), "lead", 2)
	units := []string{"lead/0", "lead/1"}
	var leader, follower string
	waitLeaderLogs(t, dir, "the leader's leader-set", units, func(logs map[string]string) bool {
		for i, u := range units {
			if strings.Contains(logs[u], "leader-set ok") {
				leader, follower = u, units[1-i]
			}
		}
		return leader != ""
	})
	waitFor(t, c, "default", "idle", allIdle)
	fs, err := c.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	uuid := fs.Model.GetUuid()
	if uuid == "" {
		t.Fatalf("model uuid: %v", fs.Model)
	}
	stop()

	// Nothing extends the lease now: it runs out, and the other unit takes it.
	stopped := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := st.Leader(context.Background(), uuid, "lead")
		if err != nil {
			t.Fatal(err)
		}
		if l == "" {
			t.Logf("lease ran out %v after the stop", time.Since(stopped))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stopped leader's lease never ran out (%s)", l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if claim, err := st.ClaimLeadership(context.Background(), uuid, follower, 60); err != nil || !claim.Held {
		t.Fatalf("%s claims: %+v %v", follower, claim, err)
	}
	before := map[string]int{leader: strings.Count(leaderLog(dir, leader), "\n"), follower: strings.Count(leaderLog(dir, follower), "\n")}

	c, stop = runLead(t, dir, ext)
	defer stop()
	waitLeaderLogs(t, dir, "the new leader's leader-set and the old leader's leader-settings-changed", units, func(logs map[string]string) bool {
		return strings.Contains(logs[follower], "leader-set ok") && strings.Contains(logs[leader], "leader-settings-changed False")
	})
	id := enqueue(t, c, &pb.EnqueueRequest{Receivers: []string{leader},
		Command: "is-leader; leader-set stale=1; status-set --application active stale; echo done"})[0]
	checkTask(t, waitTask(t, c, id, "finished", finished), "completed", "", map[string]any{"return-code": float64(0),
		"stdout": "False\ndone\n",
		"stderr": "ERROR cannot write leadership settings: cannot write settings: not the leader\n" +
			"ERROR setting application status: this unit is not the leader\n"})
	settings, _, err := st.LeaderSettings(context.Background(), uuid, "lead")
	if err != nil || settings["elected"] != follower || settings["stale"] != "" {
		t.Errorf("leader settings: %v %v", settings, err)
	}
	// Since the restart, the old leader never heard True; the new one did.
	oldLog := strings.Split(leaderLog(dir, leader), "\n")[before[leader]:]
	if strings.Contains(strings.Join(oldLog, "\n"), "True") {
		t.Errorf("the old leader heard True after losing its lease: %v", oldLog)
	}
	newLog := strings.Join(strings.Split(leaderLog(dir, follower), "\n")[before[follower]:], "\n")
	if !strings.Contains(newLog, "leader-elected True") {
		t.Errorf("the new leader's hooks: %s", newLog)
	}
	fs = waitFor(t, c, "default", "the new leader in status", func(fs *pb.FullStatusResponse) bool {
		u := findUnit(fs, follower)
		return u != nil && u.Leader
	})
	if findUnit(fs, leader).Leader {
		t.Error("both units lead in status")
	}
}
