package daemon_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/names"
)

// Operations are whole or not at all, against a real controller: deploys refused for their
// placement (a missing machine, a container, a provider directive, a machine of another base),
// their size or their name leave no application, unit or machine behind, so the same deploy
// retried succeeds under the same name and its units reach idle. The longest name allowed
// becomes a unit directory that deploys.
func TestRefusedDeployLeavesNothing(t *testing.T) {
	c, _, _ := startController(t)
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", zipCharm(t, filepath.Join(charmsDir(), "wordpress")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.AddMachines(ctx, &pb.AddMachinesRequest{Model: "default", Params: []*pb.AddMachineParams{{Base: &pb.Base{Name: "ubuntu", Channel: "20.04"}}}})
	if err != nil || res[0].Error != "" {
		t.Fatalf("add machine: %v %v", res, err)
	}
	focal := res[0].MachineId
	jammy := &pb.Base{Name: "ubuntu", Channel: "22.04"}
	deploy := func(name string, n int32, placement ...*pb.Placement) error {
		_, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: name, CharmUrl: up.Url, Base: jammy, NumUnits: n, Placement: placement})
		return err
	}
	bad := []struct {
		what string
		err  error
		kind error
	}{
		{"--to 99999", deploy("wordpress", 1, &pb.Placement{Scope: "#", Directive: "99999"}), apierr.NotFound},
		{"-n 2 --to 99999 as the second", deploy("wordpress", 2, &pb.Placement{}, &pb.Placement{Scope: "#", Directive: "99999"}), apierr.NotFound},
		{"--to lxd:99", deploy("wordpress", 1, &pb.Placement{Scope: "lxd", Directive: "99"}), apierr.NotSupported},
		{"--to zone=x", deploy("wordpress", 1, &pb.Placement{Directive: "zone=x"}), apierr.NotSupported},
		{"--to a focal machine", deploy("wordpress", 1, &pb.Placement{Scope: "#", Directive: focal}), apierr.NotValid},
		{"-n 100000000", deploy("wordpress", 100000000), apierr.NotValid},
		{"-n 1001", deploy("wordpress", limits.MaxUnitsPerCall+1), apierr.NotValid},
		{"-n -1", deploy("wordpress", -1), apierr.NotValid},
		{"a 300-character name", deploy(strings.Repeat("w", 300), 1), apierr.NotValid},
	}
	for _, b := range bad {
		if !errors.Is(b.err, b.kind) {
			t.Errorf("deploy %s: %v, want %v", b.what, b.err, b.kind)
		}
	}
	if _, err := c.AddMachines(ctx, &pb.AddMachinesRequest{Model: "default", Params: make([]*pb.AddMachineParams, limits.MaxMachinesPerCall+1)}); !errors.Is(err, apierr.NotValid) {
		t.Errorf("add-machine -n %d: %v", limits.MaxMachinesPerCall+1, err)
	}
	fs, err := c.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Applications) != 0 || len(fs.Machines) != 1 || len(fs.Relations) != 0 {
		t.Fatalf("refused calls left applications %v, machines %d, relations %v", fs.Applications, len(fs.Machines), fs.Relations)
	}

	// The same deploy, retried with a good placement, succeeds whole; unit numbers start at 0,
	// as no refused deploy took one.
	resp, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "wordpress", CharmUrl: up.Url, Base: jammy, NumUnits: 2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(resp.Units, ",") != "wordpress/0,wordpress/1" {
		t.Fatalf("units = %v", resp.Units)
	}
	long := "w" + strings.Repeat("p", names.MaxApplicationLength-1)
	if err := deploy(long, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "default", "units idle", func(fs *pb.FullStatusResponse) bool {
		units := 0
		for _, a := range fs.Applications {
			units += len(a.Units)
		}
		return units == 3 && allIdle(fsWithout(fs, focal))
	})
}

// fsWithout is status without one machine (one that no unit needs, whose start is not the
// point of the test).
func fsWithout(fs *pb.FullStatusResponse, machine string) *pb.FullStatusResponse {
	out := &pb.FullStatusResponse{Applications: fs.Applications}
	for _, m := range fs.Machines {
		if m.Id != machine {
			out.Machines = append(out.Machines, m)
		}
	}
	return out
}
