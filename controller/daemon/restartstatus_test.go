package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/state"
)

// A status a stopped agent left behind is not kept by the next one: a unit recorded as
// executing while its controller was down (as a crash mid-hook leaves it) is idle once its
// agent is back and nothing runs.
func TestRestartedAgentDoesNotClaimAHookRuns(t *testing.T) {
	ext := externalStore(t)
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runController(t, dir, ext)
	deploy(t, c, "mysql", "mysql", 1)
	fs := waitFor(t, c, "default", "idle", allIdle)
	uuid := fs.Model.GetUuid()
	stop()

	st := state.New(ext.Client)
	if err := st.SetUnitStatus(context.Background(), uuid, "mysql/0", state.UnitStatus{
		Agent: &storepb.Status{Status: "executing", Message: "running start hook"},
	}); err != nil {
		t.Fatal(err)
	}
	c, _, stop = runController(t, dir, ext)
	defer stop()
	waitFor(t, c, "default", "the stale executing status gone", func(fs *pb.FullStatusResponse) bool {
		return len(fs.GetApplications()) == 1 && allIdle(fs)
	})
}

// A unit's agent.conf is written without waiting for the disk: one that a crash left empty
// (or cut short) is written again, with a new password, when the machine agent is back, and
// the unit's agent works with it.
func TestUnitConfLostInACrashIsWrittenAgain(t *testing.T) {
	ext := externalStore(t)
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runController(t, dir, ext)
	deploy(t, c, "mysql", "mysql", 1)
	waitFor(t, c, "default", "idle", allIdle)
	stop()

	path, before := unitConf(t, dir, "unit-mysql-0")
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	c, info, stop := runController(t, dir, ext)
	defer stop()
	var after agent.Conf
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if after, err = agent.ReadConf(filepath.Dir(path)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unit's agent.conf was not written again: %v", err)
		}
	}
	if after.Password == "" || after.Password == before.Password || after.Tag != before.Tag {
		t.Fatalf("agent.conf written again: tag %q (was %q), a new password: %v", after.Tag, before.Tag, after.Password != before.Password)
	}
	ac := client.NewFromConn(mustConn(t, info), client.Config{Tag: after.Tag, Password: after.Password, Model: after.Model})
	if _, err := ac.GetUnit(context.Background(), after.Model, "mysql/0"); err != nil {
		t.Fatalf("the new credential: %v", err)
	}
	waitFor(t, c, "default", "the unit idle", func(fs *pb.FullStatusResponse) bool {
		return len(fs.GetApplications()) == 1 && allIdle(fs)
	})
}
