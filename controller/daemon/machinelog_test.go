package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// `juju debug-log -i machine-N` (and `-i N`) shows the machine agent's own lines: the machine
// agent ships its log under its tag, as the unit agents do theirs.
func TestMachineAgentLogsDeployer(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "mysql", "mysql", 1)
	fs := waitFor(t, c, "default", "mysql/0 on a machine", func(fs *pb.FullStatusResponse) bool {
		u := findUnit(fs, "mysql/0")
		return u != nil && u.Machine != ""
	})
	machine := findUnit(fs, "mysql/0").Machine
	want := []string{`deploying unit "mysql/0"`, `starting unit agent "unit-mysql-0"`}
	recs := followUntil(t, c, "machine-"+machine, want[len(want)-1])
	for _, w := range want {
		if !hasMessage(recs, w) {
			t.Errorf("machine-%s's log lacks %q: %v", machine, w, recs)
		}
	}
	for _, r := range recs {
		if r.Entity != "machine-"+machine {
			t.Errorf("-i machine-%s shows a record of %s: %q", machine, r.Entity, r.Message)
		}
		if strings.Contains(r.Message, "deploying unit") && r.Module != "juju.worker.deployer" {
			t.Errorf("deployer line under module %q", r.Module)
		}
	}
	// A bare machine id names the machine too, as Juju's debug-log takes it.
	if !logHas(t, c, machine, `deploying unit "mysql/0"`) {
		t.Errorf("-i %s does not show the machine's lines", machine)
	}
	// Removing the unit: the machine agent recalls it, then removes it.
	remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"mysql/0"}})
	recs = followUntil(t, c, "machine-"+machine, `removing unit "mysql/0"`)
	if !hasMessage(recs, `recalling unit "mysql/0"`) {
		t.Errorf("machine-%s's log does not say it recalled mysql/0: %v", machine, recs)
	}
}

// followUntil follows the model log of entity from its start until a record contains text,
// and returns what it read; it fails the test if none does in time.
func followUntil(t *testing.T, c *client.Client, entity, text string) []*pb.LogRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := c.DebugLog(ctx, &pb.DebugLogRequest{Model: "default", Replay: true, Include: []string{entity}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var recs []*pb.LogRecord
	for {
		rec, err := stream.Next()
		if err != nil {
			t.Fatalf("following %s's log for %q: %v (read %v)", entity, text, err, recs)
		}
		recs = append(recs, rec)
		if strings.Contains(rec.Message, text) {
			return recs
		}
	}
}

func hasMessage(recs []*pb.LogRecord, text string) bool {
	for _, r := range recs {
		if strings.Contains(r.Message, text) {
			return true
		}
	}
	return false
}
