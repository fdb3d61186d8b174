package state

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
)

// Application config lives in Application.config as the user's values only, each in its JSON
// form ("8080", "true", "\"text\""): typed once, when set, against the charm's config.yaml
// (Charm.config). Defaults are never copied there, so what the user set stays distinguishable
// from what the charm defaults to.

// CharmConfig parses a stored charm's config.yaml; a charm without one has no options.
func CharmConfig(doc *storepb.Charm) (*charm.Config, error) {
	c, err := charm.ParseConfig(doc.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("charm %q: %w", doc.GetUrl(), err)
	}
	return c, nil
}

// encodeSettings checks values typed on the command line against the charm's options and
// returns them in their stored (JSON) form.
func encodeSettings(cfg *charm.Config, values map[string]string) (map[string]string, error) {
	typed, err := cfg.ParseSettings(values)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	out := make(map[string]string, len(typed))
	for name, v := range typed {
		if out[name], err = charm.EncodeValue(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeployConfig checks deploy's --config values against the charm's options and returns what
// DeployArgs.Config stores: unknown options and values of the wrong type are NotValid.
func (s *State) DeployConfig(ctx context.Context, uuid, charmURL string, values map[string]string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	ch, err := s.Charm(ctx, uuid, charmURL)
	if err != nil {
		return nil, err
	}
	cfg, err := CharmConfig(ch)
	if err != nil {
		return nil, err
	}
	return encodeSettings(cfg, values)
}

// ConfigSetting is one option of an application's config.
type ConfigSetting struct {
	Option charm.Option
	// DefaultJSON and ValueJSON are JSON values, "" when there is none; ValueJSON is the
	// user's value when set, else the default.
	DefaultJSON, ValueJSON string
	// Source is "user" when the user set the value, else "default".
	Source string
}

// ApplicationConfig is an application's config with its charm's options.
type ApplicationConfig struct {
	Application, CharmURL string
	// Settings, sorted by option name.
	Settings []ConfigSetting
}

// ApplicationConfig returns the application's config: every option of its charm with its
// default and value.
func (s *State) ApplicationConfig(ctx context.Context, uuid, name string) (*ApplicationConfig, error) {
	app, err := s.Application(ctx, uuid, name)
	if err != nil {
		return nil, err
	}
	cfg, err := s.applicationCharmConfig(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	out := &ApplicationConfig{Application: app.Name, CharmURL: app.CharmUrl}
	for _, opt := range cfg.Names() {
		o := cfg.Options[opt]
		set := ConfigSetting{Option: o, Source: "default"}
		if o.Default != nil {
			if set.DefaultJSON, err = charm.EncodeValue(o.Default); err != nil {
				return nil, err
			}
		}
		set.ValueJSON = set.DefaultJSON
		if v, ok := app.Config[opt]; ok {
			set.ValueJSON, set.Source = v, "user"
		}
		out.Settings = append(out.Settings, set)
	}
	return out, nil
}

func (s *State) applicationCharmConfig(ctx context.Context, uuid string, app *storepb.Application) (*charm.Config, error) {
	key := uuid + " " + app.CharmUrl
	if cfg, ok := s.charmConfigs.Load(key); ok {
		return cfg.(*charm.Config), nil
	}
	ch, err := s.Charm(ctx, uuid, app.CharmUrl)
	if err != nil {
		return nil, err
	}
	cfg, err := CharmConfig(ch)
	if err != nil {
		return nil, err
	}
	s.charmConfigs.Store(key, cfg)
	return cfg, nil
}

// SetApplicationConfig sets values (typed on the command line, converted to the options'
// types) and resets options to their defaults. Unknown options, bad values, and a key both set
// and reset are NotValid. Nothing is written when nothing changes, so unit agents (which
// watch their application document) run config-changed only for real changes.
func (s *State) SetApplicationConfig(ctx context.Context, uuid, name string, values map[string]string, reset []string) error {
	for _, k := range reset {
		if _, ok := values[k]; ok {
			return apierr.Errorf(apierr.NotValid, "cannot set and reset key %q simultaneously", k)
		}
	}
	return s.run(ctx, fmt.Sprintf("setting config of %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		app, err := r.application(ctx, uuid, name)
		if err != nil {
			return nil, err
		}
		// A charm document never changes once stored, so it is read without a guard.
		cfg, err := s.applicationCharmConfig(ctx, uuid, app)
		if err != nil {
			return nil, err
		}
		encoded, err := encodeSettings(cfg, values)
		if err != nil {
			return nil, err
		}
		next := maps.Clone(app.Config)
		if next == nil {
			next = map[string]string{}
		}
		for _, k := range reset {
			if _, err := cfg.Option(k); err != nil {
				return nil, apierr.Errorf(apierr.NotValid, "%v", err)
			}
			delete(next, k)
		}
		maps.Copy(next, encoded)
		if maps.Equal(next, app.Config) {
			return nil, nil
		}
		app.Config = next
		w := &writes{}
		w.put(applicationKey(uuid, name), app)
		return w, nil
	})
}

// AgentConfigJSON is what config-get sees: a JSON object of typed values, the charm's defaults
// overridden by the user's values. Options with neither are left out.
func AgentConfigJSON(cfg *charm.Config, app *storepb.Application) (string, error) {
	values := map[string]json.RawMessage{}
	for name, v := range cfg.Defaults() {
		enc, err := charm.EncodeValue(v)
		if err != nil {
			return "", err
		}
		values[name] = json.RawMessage(enc)
	}
	for _, name := range slices.Sorted(maps.Keys(app.GetConfig())) {
		// Values stored before their charm had the option (or by an older controller that kept
		// raw strings) are passed on as strings rather than dropped.
		v := app.Config[name]
		if !json.Valid([]byte(v)) {
			enc, err := charm.EncodeValue(v)
			if err != nil {
				return "", err
			}
			v = enc
		}
		values[name] = json.RawMessage(v)
	}
	data, err := json.Marshal(values)
	if err != nil {
		return "", fmt.Errorf("encoding config: %w", err)
	}
	return string(data), nil
}
