package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/fdlimit"
)

// add-machine is whole or not at all: a call with one machine the local provider cannot start
// adds none of its machines, each result saying why; a call over the bound per call is refused
// as a whole.
func TestAddMachinesWholeOrNothing(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	res, err := env.admin.AddMachines(ctx, &pb.AddMachinesRequest{Model: "default", Params: []*pb.AddMachineParams{
		{}, {Placement: &pb.Placement{Scope: "lxd"}}, {Placement: &pb.Placement{Directive: "zone=a"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"machine not added: another machine of this call was refused",
		"lxd containers are not supported by the local provider",
		`placement directive "zone=a" not supported by the local provider`,
	}
	for i, r := range res {
		if r.MachineId != "" || r.Error != want[i] {
			t.Errorf("result %d: %v, want %q", i, r, want[i])
		}
	}
	if _, err := env.admin.AddMachines(ctx, &pb.AddMachinesRequest{Model: "default", Params: make([]*pb.AddMachineParams, 10001)}); !errors.Is(err, apierr.NotValid) ||
		!strings.Contains(err.Error(), "cannot add 10001 machines: at most 10000 per call") {
		t.Errorf("add-machine -n 10001: %v", err)
	}
	if fs, _ := env.admin.FullStatus(ctx, "default", nil); len(fs.GetMachines()) != 0 {
		t.Fatalf("refused calls added machines: %v", fs.GetMachines())
	}
	res, err = env.admin.AddMachines(ctx, &pb.AddMachinesRequest{Model: "default", Params: []*pb.AddMachineParams{{}, {}}})
	if err != nil || len(res) != 2 || res[0].MachineId != "0" || res[1].MachineId != "1" {
		t.Fatalf("add-machine -n 2: %v, %v", res, err)
	}
}

// Near their open-file limit, the processes that would run new agents make deploy, add-unit and
// add-machine refused whole, with the numbers, before anything is written; nothing else is.
func TestAddingRefusedNearTheFileLimit(t *testing.T) {
	ctx := context.Background()
	var full atomic.Bool
	env := &workloadEnv{startTestEnv(t, withCapacity(func(context.Context) error {
		if full.Load() {
			return fmt.Errorf("the agent host is near its open-file limit: %w", &fdlimit.LimitError{InUse: 9800, Limit: 10000})
		}
		return nil
	}))}
	if _, err := env.deployBlog(t, "blog", 1, "", nil); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	want := "the agent host is near its open-file limit: too many open files: 9,800 in use of a limit of 10,000"
	_, err := env.admin.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "blog", NumUnits: 3})
	if !errors.Is(err, apierr.Unavailable) || err.Error() != "cannot add units: "+want {
		t.Errorf("add-unit: %v", err)
	}
	if _, err := env.admin.AddMachines(ctx, &pb.AddMachinesRequest{Model: "default", Params: make([]*pb.AddMachineParams, 2)}); err == nil || err.Error() != "cannot add machines: "+want {
		t.Errorf("add-machine: %v", err)
	}
	if _, err := env.deployBlog(t, "blog2", 2, "", nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("deploy: %v", err)
	}
	fs, err := env.admin.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.GetApplications()) != 1 || len(fs.GetApplications()[0].GetUnits()) != 1 || len(fs.GetMachines()) != 1 {
		t.Fatalf("refused calls wrote: %d applications, %d machines", len(fs.GetApplications()), len(fs.GetMachines()))
	}
	// Status and the rest still answer; adding works again once there is room.
	full.Store(false)
	if _, err := env.admin.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "blog", NumUnits: 1}); err != nil {
		t.Fatal(err)
	}
}
