package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
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
