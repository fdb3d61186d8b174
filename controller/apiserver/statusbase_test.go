package apiserver

import (
	"context"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

func TestPBBase(t *testing.T) {
	for in, want := range map[string]*pb.Base{
		"ubuntu@22.04":        {Name: "ubuntu", Channel: "22.04/stable"},
		"ubuntu@22.04/stable": {Name: "ubuntu", Channel: "22.04/stable"},
		"ubuntu@22.04/edge":   {Name: "ubuntu", Channel: "22.04/edge"},
		"ubuntu@24.04/beta":   {Name: "ubuntu", Channel: "24.04/beta"},
		"":                    nil,
		"ubuntu":              nil,
	} {
		got := pbBase(in)
		if (got == nil) != (want == nil) || got.GetName() != want.GetName() || got.GetChannel() != want.GetChannel() {
			t.Errorf("pbBase(%q) = %v, want %v", in, got, want)
		}
	}
}

// A base's risk reaches status: deployed on ubuntu@22.04/edge, the
// application and its machine say "22.04/edge", not the track alone.
func TestStatusKeepsBaseRisk(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": blogMeta, "config.yaml": blogConfig}))
	if err != nil {
		t.Fatal(err)
	}
	for app, channel := range map[string]string{"edgy": "22.04/edge", "steady": "22.04"} {
		if _, err := env.admin.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: app, CharmUrl: up.Url,
			Base: &pb.Base{Name: "ubuntu", Channel: channel}, NumUnits: 1}); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := env.admin.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"edgy": "22.04/edge", "steady": "22.04/stable"}
	for _, a := range fs.GetApplications() {
		if got := a.GetBase().GetName() + "@" + a.GetBase().GetChannel(); got != "ubuntu@"+want[a.GetName()] {
			t.Errorf("application %s base %s, want ubuntu@%s", a.GetName(), got, want[a.GetName()])
		}
	}
	machines := map[string]string{}
	for _, m := range fs.GetMachines() {
		machines[m.GetId()] = m.GetBase().GetChannel()
	}
	for _, a := range fs.GetApplications() {
		for _, u := range a.GetUnits() {
			if got := machines[u.GetMachine()]; got != want[a.GetName()] {
				t.Errorf("machine %s of %s: channel %q, want %q", u.GetMachine(), u.GetName(), got, want[a.GetName()])
			}
		}
	}
	if len(machines) != 2 {
		t.Errorf("machines %v, want two", machines)
	}
}
