package daemon_test

import (
	"context"
	"path/filepath"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
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
