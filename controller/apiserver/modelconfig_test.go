package apiserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/version"
)

// model-config over the API: every key with its source, typed keys checked before anything is
// written, and add-model's cloud and region held to the controller's.
func TestModelConfigAPI(t *testing.T) {
	env := startTestEnv(t)
	ctx := context.Background()
	if err := env.admin.SetModelConfig(ctx, "default", map[string]string{"update-status-hook-interval": "1m", "automatically-retry-hooks": "yes"}, nil); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("bad bool: %v", err)
	}
	if err := env.admin.SetModelConfig(ctx, "default", map[string]string{"update-status-hook-interval": "1m", "automatically-retry-hooks": "1"}, nil); err != nil {
		t.Fatal(err)
	}
	values, err := env.admin.GetModelConfig(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*pb.ModelConfigValue{}
	for _, v := range values {
		got[v.Key] = v
	}
	for key, want := range map[string][2]string{
		"update-status-hook-interval": {"1m", "model"},
		"automatically-retry-hooks":   {"true", "model"},
		"logging-config":              {"<root>=INFO", "default"},
		"agent-version":               {version.Juju, "model"},
	} {
		if v := got[key]; v == nil || v.Value != want[0] || v.Source != want[1] {
			t.Errorf("%s = %v, want %v", key, v, want)
		}
	}
	if err := env.admin.SetModelConfig(ctx, "default", nil, []string{"update-status-hook-interval"}); err != nil {
		t.Fatal(err)
	}
	if m, err := env.admin.GetModel(ctx, "default"); err != nil || m.Config["update-status-hook-interval"] != "" || m.AgentVersion != version.Juju {
		t.Errorf("after reset: %v %v", m, err)
	}

	for _, tc := range []struct {
		cloud, region string
		err           error
	}{
		{"localhost", "", nil},
		{"localhost", "localhost", nil},
		{"aws", "", apierr.NotFound},
		{"", "mars", apierr.NotFound},
	} {
		name := "m-" + tc.cloud + "-" + tc.region
		_, err := env.admin.AddModelIn(ctx, &pb.AddModelRequest{Name: name, Cloud: tc.cloud, Region: tc.region})
		if (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
			t.Errorf("%s/%s: %v, want %v", tc.cloud, tc.region, err, tc.err)
		}
	}
}

// A unit agent watches its model's document (its configuration) and gets an event when the
// configuration changes; the rest of the model's keys stay closed to it.
func TestUnitWatchesModelConfig(t *testing.T) {
	env := startRelTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unit := env.units["wordpress/0"]
	w, err := relWatch(ctx, unit, state.KindModel, "model")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := env.admin.SetModelConfig(ctx, env.model, map[string]string{"logging-config": "<root>=DEBUG"}, nil); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Kind != state.KindModel {
		t.Errorf("event %v", ev)
	}
	app, err := unit.GetApplication(ctx, env.model, "wordpress")
	if err != nil || app.ModelConfig["logging-config"] != "<root>=DEBUG" || app.ModelConfig["update-status-hook-interval"] != "5m" {
		t.Errorf("agent's view of the model config: %v %v", app.GetModelConfig(), err)
	}
	w, err = relWatch(ctx, unit, state.KindModel, "")
	if err == nil {
		_, err = w.Next()
		w.Close()
	}
	if !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("a unit watching every key of the model: %v", err)
	}
}
