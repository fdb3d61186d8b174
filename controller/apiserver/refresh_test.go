package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// juju refresh through the API: the admin switches the application's charm, the unit's agent
// sees it in GetApplication (AgentApplication.charm_url) while its own unit keeps the old one,
// and only that agent may report the new charm, and only the application's current one.
func TestSetCharmAndSetUnitCharm(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 2, "", map[string]string{"title": "News", "port": "80"})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := env.admin.GetConfig(ctx, "default", "blog")
	if err != nil {
		t.Fatal(err)
	}
	// v2 has no port option: its value is dropped, title's is kept.
	v2Config := "options:\n  title:\n    type: string\n    default: My Blog\n"
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": blogMeta, "config.yaml": v2Config}))
	if err != nil {
		t.Fatal(err)
	}
	other, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": strings.Replace(blogMeta, "name: blog", "name: vlog", 1)}))
	if err != nil {
		t.Fatal(err)
	}

	_, err = env.admin.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "blog", CharmUrl: other.Url})
	wantErr(t, "another charm's name", err, apierr.NotValid)
	_, err = env.admin.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "Blog", CharmUrl: up.Url})
	wantErr(t, "bad application name", err, apierr.NotValid)
	_, err = env.admin.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "nope", CharmUrl: up.Url})
	wantErr(t, "unknown application", err, apierr.NotFound)

	agent0 := env.unitAgent(t, units[0])
	agent1 := env.unitAgent(t, units[1])
	// An agent may not refresh its application: that is the admin's.
	_, err = agent0.SetCharm(ctx, &pb.SetCharmRequest{Model: env.model, Application: "blog", CharmUrl: up.Url})
	wantErr(t, "agent refreshing", err, apierr.PermissionDenied)

	resp, err := env.admin.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "blog", CharmUrl: up.Url})
	if err != nil || resp.PreviousCharmUrl != v1.Charm {
		t.Fatalf("set charm: %v %v", resp, err)
	}
	cfg, err := env.admin.GetConfig(ctx, "default", "blog")
	if err != nil || cfg.Charm != up.Url || len(cfg.Options) != 1 || cfg.Options[0].ValueJson != `"News"` {
		t.Fatalf("config after refresh: %v %v", cfg, err)
	}
	app, err := agent0.GetApplication(ctx, env.model, "blog")
	if err != nil || app.CharmUrl != up.Url {
		t.Fatalf("agent's application: %v %v", app, err)
	}
	u, err := agent0.GetUnit(ctx, env.model, units[0])
	if err != nil || u.CharmUrl != v1.Charm {
		t.Fatalf("the unit keeps its charm until its agent upgrades: %v %v", u.GetCharmUrl(), err)
	}

	wantErr(t, "another unit's charm", agent1.SetUnitCharm(ctx, env.model, units[0], up.Url), apierr.PermissionDenied)
	wantErr(t, "not the application's charm", agent0.SetUnitCharm(ctx, env.model, units[0], other.Url), apierr.NotValid)
	if err := agent0.SetUnitCharm(ctx, env.model, units[0], up.Url); err != nil {
		t.Fatal(err)
	}
	if u, err := agent0.GetUnit(ctx, env.model, units[0]); err != nil || u.CharmUrl != up.Url {
		t.Fatalf("unit's charm after SetUnitCharm: %v %v", u.GetCharmUrl(), err)
	}
	if err := agent1.SetUnitCharm(ctx, env.model, units[1], ""); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("empty url: %v", err)
	}
}

// refresh --force-units and --config through the API: the agent's application carries the
// flag and the grown charm_modified_version; config the new charm refuses changes nothing.
func TestSetCharmForceUnitsConfig(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 1, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := env.unitAgent(t, units[0])
	before, err := agent.GetApplication(ctx, env.model, "blog")
	if err != nil || before.CharmModifiedVersion != 0 || before.ForceCharm {
		t.Fatalf("before refresh: %v %v", before, err)
	}
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": blogMeta, "config.yaml": blogConfig}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.admin.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "blog", CharmUrl: up.Url,
		ForceUnits: true, Config: map[string]string{"port": "eighty"}})
	wantErr(t, "config of the wrong type", err, apierr.NotValid)
	if app, _ := agent.GetApplication(ctx, env.model, "blog"); app.CharmUrl != before.CharmUrl || app.ForceCharm {
		t.Fatalf("a refused refresh changed the application: %v", app)
	}
	if _, err := env.admin.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "blog", CharmUrl: up.Url,
		ForceUnits: true, Config: map[string]string{"port": "81", "trust": "true"}}); err != nil {
		t.Fatal(err)
	}
	app, err := agent.GetApplication(ctx, env.model, "blog")
	if err != nil || app.CharmUrl != up.Url || app.CharmModifiedVersion != 1 || !app.ForceCharm || !app.Trust ||
		!strings.Contains(app.ConfigJson, `"port":81`) {
		t.Fatalf("after refresh: %v %v", app, err)
	}
}
