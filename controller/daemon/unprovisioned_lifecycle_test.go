package daemon_test

import (
	"context"
	"strings"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// L-F2, L-M5, L-A1, L-U6: a unit on a machine that never got an instance has no agent to follow
// its dying application; the provisioner, which stands in for the machine's agent, removes it.
// An application with one deployed unit and one that never deployed goes as a whole: the
// deployed unit through its agent (L-U2, L-U3), the other at once, and the last one out takes the
// application (L-A3). The machine that failed provisioning stays, with its error, until removed.
func TestRemoveApplicationWithUndeployedUnit_LF2_LM5(t *testing.T) {
	c, _, _ := startController(t)
	ctx := context.Background()
	deploy(t, c, "wordpress", "wordpress", 0)
	deploy(t, c, "mysql", "mysql", 1)
	rel := integrate(t, c, "wordpress", "mysql")
	waitFor(t, c, "default", "mysql/0 idle in its peer relation", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 1 && allIdle(fs) && len(findApp(fs, "mysql").GetUnits()) == 1
	})
	// L-C2: the next unit takes constraints this host cannot meet, so its machine fails
	// provisioning (L-M5).
	if err := c.SetConstraints(ctx, "default", "mysql", "mem=100000G"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "mysql", NumUnits: 1}); err != nil {
		t.Fatal(err)
	}
	fs := waitFor(t, c, "default", "provisioning error", func(fs *pb.FullStatusResponse) bool {
		for _, m := range fs.Machines {
			if m.GetInstanceStatus().GetStatus() == "provisioning error" {
				return findUnit(fs, "mysql/1") != nil
			}
		}
		return false
	})
	failed := findUnit(fs, "mysql/1").Machine

	res := remove(t, c.RemoveApplications, &pb.RemoveRequest{Names: []string{"mysql"}})
	if res.Error != "" || res.Outcome != "dying" || strings.Join(res.Units, ",") != "mysql/0,mysql/1" {
		t.Fatalf("remove-application: %v", res)
	}
	fs = waitFor(t, c, "default", "mysql gone", func(fs *pb.FullStatusResponse) bool {
		return findApp(fs, "mysql") == nil && findRelation(fs, rel.Id) == nil
	})
	if a := findApp(fs, "wordpress"); a.RelationCount != 1 || a.Life != "alive" { // its peer relation
		t.Fatalf("wordpress after: %v", a)
	}
	for _, m := range fs.Machines {
		if m.Life != "alive" {
			t.Errorf("machine %s: %s", m.Id, m.Life)
		}
	}

	// The machine that failed goes like any empty one (L-M1), through the provisioner (L-M3).
	if res := remove(t, c.RemoveMachines, &pb.RemoveRequest{Names: []string{failed}}); res.Error != "" || res.Outcome != "dying" {
		t.Fatalf("remove-machine: %v", res)
	}
	waitFor(t, c, "default", "failed machine gone", func(fs *pb.FullStatusResponse) bool {
		for _, m := range fs.Machines {
			if m.Id == failed {
				return false
			}
		}
		return true
	})
}
