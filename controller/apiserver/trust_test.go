package apiserver

import (
	"context"
	"errors"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// Trust is Juju's application config, beside the charm's: deploy's --config (or --trust) sets
// it, GetConfig reports it as an application option, SetConfig changes it like any option.
func TestApplicationTrust(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	if _, err := env.deployBlog(t, "bad", 0, "", map[string]string{"trust": "perhaps"}); !errors.Is(err, apierr.NotValid) ||
		err.Error() != `option "trust": expected bool, got "perhaps"` {
		t.Fatalf("bad trust: %v", err)
	}
	if _, err := env.deployBlog(t, "blog", 0, "", map[string]string{"trust": "true", "port": "81"}); err != nil {
		t.Fatal(err)
	}
	trust := func() string {
		t.Helper()
		cfg, err := env.admin.GetConfig(ctx, "default", "blog")
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.ApplicationOptions) != 1 {
			t.Fatalf("application options = %v", cfg.ApplicationOptions)
		}
		o := cfg.ApplicationOptions[0]
		if o.Name != "trust" || o.Type != "bool" || o.DefaultJson != "false" || o.Description == "" {
			t.Fatalf("trust option = %v", o)
		}
		return o.ValueJson + " " + o.Source
	}
	if got := trust(); got != "true user" {
		t.Fatalf("deployed with trust: %s", got)
	}
	if err := env.admin.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "blog", Values: map[string]string{"trust": "false"}}); err != nil {
		t.Fatal(err)
	}
	if got := trust(); got != "false default" {
		t.Fatalf("after trust=false: %s", got)
	}
	if err := env.admin.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "blog", Values: map[string]string{"trust": "yes"}}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("bad value: %v", err)
	}
	// DeployRequest.trust (deploy --trust) does the same as --config trust=true.
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": blogMeta, "config.yaml": blogConfig}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.admin.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "trusted", CharmUrl: up.Url,
		Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, Trust: true}); err != nil {
		t.Fatal(err)
	}
	cfg, err := env.admin.GetConfig(ctx, "default", "trusted")
	if err != nil || cfg.ApplicationOptions[0].ValueJson != "true" {
		t.Fatalf("deploy --trust: %v %v", cfg, err)
	}
}

// credential-get through the agent API: a unit of a trusted application gets the model's
// cloud, any other gets Juju's "permission denied"; both follow the current trust, which
// GetApplication reports too (its change runs config-changed). A unit asks only for itself.
func TestCloudSpecFollowsTrust(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 2, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := env.unitAgent(t, units[0])
	check := func(when string, trusted bool) {
		t.Helper()
		app, err := agent.GetApplication(ctx, "", "blog")
		if err != nil || app.Trust != trusted {
			t.Fatalf("%s: application trust %v, %v", when, app.GetTrust(), err)
		}
		spec, err := agent.CloudSpec(ctx, "", units[0])
		if !trusted {
			if !errors.Is(err, apierr.PermissionDenied) || err.Error() != "permission denied" {
				t.Fatalf("%s: %v, %v", when, spec, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if spec.Type != "local" || spec.Name != "localhost" || spec.Region != "localhost" || spec.Endpoint != "" ||
			spec.GetCredential().GetAuthType() != "empty" || len(spec.GetCredential().GetAttrs()) != 0 || !spec.IsControllerCloud {
			t.Fatalf("%s: %v", when, spec)
		}
	}
	check("untrusted", false)
	if err := env.admin.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "blog", Values: map[string]string{"trust": "true"}}); err != nil {
		t.Fatal(err)
	}
	check("trusted", true)
	if _, err := agent.CloudSpec(ctx, "", units[1]); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("another unit's cloud spec: %v", err)
	}
	if err := env.admin.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "blog", Values: map[string]string{"trust": "false"}}); err != nil {
		t.Fatal(err)
	}
	check("trust removed", false)
}
