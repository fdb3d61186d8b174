package apiserver

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
)

// An agent downloads only the charms it runs or deploys: a unit its own application's, a
// machine agent those of the units on its machine; another application's charm is refused.
func TestAgentCharmDownloadIsTheirsOnly(t *testing.T) {
	env := startRelTestServer(t)
	ctx := context.Background()
	wp, err := env.st.Application(ctx, env.model, "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	my, err := env.st.Application(ctx, env.model, "mysql")
	if err != nil {
		t.Fatal(err)
	}
	wp0, my0 := env.units["wordpress/0"], env.units["mysql/0"]
	if _, err := wp0.GetCharmArchive(ctx, "", wp.CharmUrl); err != nil {
		t.Errorf("a unit downloading its own charm: %v", err)
	}
	_, err = wp0.GetCharmArchive(ctx, "", my.CharmUrl)
	wantErr(t, "a unit downloading another application's charm", err, apierr.PermissionDenied)
	if _, err := my0.GetCharmArchive(ctx, "", my.CharmUrl); err != nil {
		t.Errorf("mysql/0 downloading its own charm: %v", err)
	}
	u, err := env.st.Unit(ctx, env.model, "mysql/0")
	if err != nil {
		t.Fatal(err)
	}
	machine := env.sshMachineAgent(t, u.MachineId)
	if _, err := machine.GetCharmArchive(ctx, "", my.CharmUrl); err != nil {
		t.Errorf("the machine agent downloading its unit's charm: %v", err)
	}
	_, err = machine.GetCharmArchive(ctx, "", wp.CharmUrl)
	wantErr(t, "a machine agent downloading a charm none of its units runs", err, apierr.PermissionDenied)
	if _, err := env.admin.GetCharmArchive(ctx, "default", wp.CharmUrl); err != nil {
		t.Errorf("the admin: %v", err)
	}
}
