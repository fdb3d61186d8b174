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
