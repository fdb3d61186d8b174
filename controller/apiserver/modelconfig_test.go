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

// Model defaults: checked as model configuration (nothing written when one is refused),
// shown with the source "controller" by model-config, overridden by a model's own value,
// inherited by the agents at once (the model document is written again, so that the agents
// watching it wake), default-base included; a reset brings Juju's default back.
func TestModelDefaultsAPI(t *testing.T) {
	env := startRelTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, bad := range []map[string]string{
		{"automatically-retry-hooks": "maybe"},
		{"agent-version": "1.0.0"},
		{"extra-info": "x", "no-such-key": "1"},
	} {
		if err := env.admin.SetModelDefaults(ctx, bad, nil); !errors.Is(err, apierr.NotValid) {
			t.Errorf("%v: %v, want NotValid", bad, err)
		}
	}
	if d, err := env.st.ModelDefaults(ctx); err != nil || len(d) != 0 {
		t.Fatalf("a refused change wrote %v (%v)", d, err)
	}
	unit := env.units["wordpress/0"]
	w, err := relWatch(ctx, unit, state.KindModel, "model")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	set := map[string]string{"automatically-retry-hooks": "F", "extra-info": "ctl", "default-base": "ubuntu@20.04"}
	if err := env.admin.SetModelDefaults(ctx, set, nil); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Kind != state.KindModel {
		t.Errorf("event %v", ev)
	}
	app, err := unit.GetApplication(ctx, env.model, "wordpress")
	if err != nil || app.ModelConfig["automatically-retry-hooks"] != "false" || app.ModelConfig["extra-info"] != "ctl" {
		t.Errorf("agent's view: %v %v", app.GetModelConfig(), err)
	}
	if err := env.admin.SetModelConfig(ctx, "default", map[string]string{"extra-info": "mine"}, nil); err != nil {
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
		"automatically-retry-hooks": {"false", "controller"},
		"extra-info":                {"mine", "model"},
		"default-base":              {"ubuntu@20.04", "controller"},
		"logging-config":            {"<root>=INFO", "default"},
	} {
		if v := got[key]; v == nil || v.Value != want[0] || v.Source != want[1] {
			t.Errorf("%s = %v, want %v", key, v, want)
		}
	}
	if m, err := env.admin.GetModel(ctx, "default"); err != nil || m.DefaultBase != "ubuntu@20.04" {
		t.Errorf("model's default base: %v %v", m.GetDefaultBase(), err)
	}
	id, err := env.st.AddMachine(ctx, env.model, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := env.st.Machine(ctx, env.model, id); err != nil || m.Base != "ubuntu@20.04" {
		t.Errorf("machine without a base: %v %v", m.GetBase(), err)
	}
	defaults, err := env.admin.GetModelDefaults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defaults {
		switch d.Key {
		case "automatically-retry-hooks":
			if d.Default != "true" || d.Controller != "false" || !d.ControllerSet {
				t.Errorf("%v", d)
			}
		case "logging-config":
			if d.Default != "<root>=INFO" || d.ControllerSet {
				t.Errorf("%v", d)
			}
		}
	}
	if err := env.admin.SetModelDefaults(ctx, nil, []string{"automatically-retry-hooks", "default-base", "extra-info"}); err != nil {
		t.Fatal(err)
	}
	app, err = unit.GetApplication(ctx, env.model, "wordpress")
	if err != nil || app.ModelConfig["automatically-retry-hooks"] != "true" {
		t.Errorf("after reset, agent's view: %v %v", app.GetModelConfig(), err)
	}
}
