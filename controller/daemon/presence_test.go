package daemon_test

import (
	"path/filepath"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/apiserver"
)

// Status shows an agent lost (a machine's down) only while it really is: an agent that cannot
// reach the API (here its credential is refused, so it never opens a watch) shows lost once the
// controller's grace has passed, and an agent running again shows what it stored, past the grace
// as well. Between runs the controller is stopped, which stops its agents; each start is a
// controller that knows nothing of its agents but what they tell it.
func TestStatusShowsAgentsLostOnlyWhileTheyAre(t *testing.T) {
	ext := externalStore(t)
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runController(t, dir, ext)
	deploy(t, c, "mysql", "mysql", 1)
	fs := waitFor(t, c, "default", "idle", allIdle)
	stop()
	unit := findUnit(fs, "mysql/0")
	var instance string
	for _, m := range fs.Machines {
		if m.Id == unit.Machine {
			instance = m.InstanceId
		}
	}
	machineDir := filepath.Join(dir, "instances", instance)
	unitDir := filepath.Join(machineDir, "units", "unit-mysql-0")
	storedWorkload := unit.GetWorkloadStatus()

	// breakCredential gives the agent of dir a password the controller refuses; the returned
	// function gives it back.
	breakCredential := func(dir string) (restore func()) {
		t.Helper()
		conf, err := agent.ReadConf(dir)
		if err != nil {
			t.Fatal(err)
		}
		good := conf.Password
		conf.Password = "not-the-agents-password"
		if err := agent.WriteConf(dir, conf); err != nil {
			t.Fatal(err)
		}
		return func() {
			t.Helper()
			conf.Password = good
			if err := agent.WriteConf(dir, conf); err != nil {
				t.Fatal(err)
			}
		}
	}
	lost := func(fs *pb.FullStatusResponse) bool {
		u := findUnit(fs, "mysql/0")
		return u.GetAgentStatus().GetStatus() == "lost" &&
			u.GetAgentStatus().GetMessage() == "agent is not communicating with the server" &&
			u.GetWorkloadStatus().GetStatus() == "unknown" &&
			u.GetWorkloadStatus().GetMessage() == "agent lost, see 'juju show-status-log mysql/0'"
	}
	machineAgent := func(fs *pb.FullStatusResponse) *pb.StatusInfo {
		for _, m := range fs.Machines {
			if m.Id == unit.Machine {
				return m.GetAgentStatus()
			}
		}
		return nil
	}
	// pastGrace: the controller of this status has run longer than the grace since started.
	pastGrace := func(fs *pb.FullStatusResponse, started time.Time) bool {
		return time.Unix(0, fs.GetControllerTime()).After(started.Add(apiserver.DefaultPresenceGrace + time.Second))
	}

	// The unit's agent cannot connect; the machine's can.
	restoreUnit := breakCredential(unitDir)
	started := time.Now()
	c, _, stop = runController(t, dir, ext)
	fs = waitFor(t, c, "default", "mysql/0 lost", lost)
	if !pastGrace(fs, started.Add(-time.Second)) {
		t.Errorf("mysql/0 lost %s after the controller started, within the grace", time.Unix(0, fs.GetControllerTime()).Sub(started))
	}
	if got := machineAgent(fs); got.GetStatus() != "started" {
		t.Errorf("machine %s with its agent running shows %v", unit.Machine, got)
	}
	if got := findApp(fs, "mysql").GetStatus(); got.GetStatus() != storedWorkload.GetStatus() {
		t.Errorf("mysql derives %v from a lost unit, want %v as stored", got, storedWorkload)
	}
	stop()

	// The machine's agent cannot connect either: it is down, and it deploys no unit agent.
	restoreUnit()
	restoreMachine := breakCredential(machineDir)
	c, _, stop = runController(t, dir, ext)
	waitFor(t, c, "default", "machine down and mysql/0 lost", func(fs *pb.FullStatusResponse) bool {
		m := machineAgent(fs)
		return lost(fs) && m.GetStatus() == "down" && m.GetMessage() == "agent is not communicating with the server"
	})
	stop()

	// Both run again: what they stored, and still so once the grace has passed.
	restoreMachine()
	started = time.Now()
	c, _, stop = runController(t, dir, ext)
	defer stop()
	fs = waitFor(t, c, "default", "agents back past the grace", func(fs *pb.FullStatusResponse) bool {
		return pastGrace(fs, started) && allIdle(fs)
	})
	if u := findUnit(fs, "mysql/0"); u.GetWorkloadStatus().GetStatus() != storedWorkload.GetStatus() ||
		u.GetWorkloadStatus().GetMessage() != storedWorkload.GetMessage() {
		t.Errorf("mysql/0 back shows %v, want %v", u.GetWorkloadStatus(), storedWorkload)
	}
}
