package apiserver

import (
	"context"
	"errors"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// A deploy whose placement the local provider can never honour (a container, a provider
// directive) is refused before the application exists: bad input changes nothing.
func TestDeployRefusesImpossiblePlacementFirst(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": blogMeta, "config.yaml": blogConfig}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*pb.Placement{{Scope: "lxd", Directive: "0"}, {Scope: "kvm"}, {Directive: "zone=a"}} {
		_, err := env.admin.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "blog", CharmUrl: up.Url,
			Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, NumUnits: 1, Placement: []*pb.Placement{p}})
		if !errors.Is(err, apierr.NotSupported) {
			t.Errorf("placement %v: %v, want NotSupported", p, err)
		}
	}
	if fs, _ := env.admin.FullStatus(ctx, "default", nil); len(fs.GetApplications()) != 0 {
		t.Fatalf("a refused deploy left %v", fs.GetApplications())
	}
}
