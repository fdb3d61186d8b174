package state

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
)

// Application config lives in Application.config as the user's values only, each in its JSON
// form ("8080", "true", "\"text\""): typed once, when set, against the charm's config.yaml
// (Charm.config). Defaults are never copied there, so what the user set stays distinguishable
// from what the charm defaults to.

// maxConfigBytes bounds an application's config values, in their stored form: the application
// document is written whole in one etcd request (1.5 MiB at most, maxTxnBytes), with room left
// for the rest of a deploy's transaction. Juju has no such bound; a value is never cut to fit.
const maxConfigBytes = 1 << 20

// checkConfigSize refuses config values that would not fit the application document.
func checkConfigSize(config map[string]string) error {
	size := 0
	for k, v := range config {
		size += len(k) + len(v)
	}
	if size > maxConfigBytes {
		return apierr.Errorf(apierr.NotValid, "config values of %s, more than the %s an application's config may hold", mib(size), mib(maxConfigBytes))
	}
	return nil
}

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

// TrustOption is the one option of Juju's own application config (as opposed to the charm's):
// whether the charm may read the cloud credentials. It is set with juju trust, deploy --trust or
// juju config <app> trust=true, and kept in Application.trust.
var TrustOption = charm.Option{
	Name: "trust", Type: "bool", Default: false,
	Description: "Does this application have access to trusted credentials",
}

// parseTrust reads a trust value as typed on the command line.
func parseTrust(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, apierr.Errorf(apierr.NotValid, "option %q: expected %s, got %q", TrustOption.Name, TrustOption.Type, s)
	}
	return b, nil
}

// SplitTrust takes the trust option out of values (the charm's options stay), reporting
// whether it was there and its value; a value that is not a boolean is NotValid.
func SplitTrust(values map[string]string) (charmValues map[string]string, trust, found bool, err error) {
	v, found := values[TrustOption.Name]
	if !found {
		return values, false, false, nil
	}
	if trust, err = parseTrust(v); err != nil {
		return nil, false, false, err
	}
	charmValues = maps.Clone(values)
	delete(charmValues, TrustOption.Name)
	return charmValues, trust, true, nil
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
	// ApplicationSettings are Juju's own options (trust), sorted by name. As in Juju, a value
	// equal to the default has source "default".
	ApplicationSettings []ConfigSetting
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
	trust := ConfigSetting{Option: TrustOption, DefaultJSON: "false", ValueJSON: "false", Source: "default"}
	if app.Trust {
		trust.ValueJSON, trust.Source = "true", "user"
	}
	out.ApplicationSettings = []ConfigSetting{trust}
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
// types) and resets options to their defaults; "trust" is Juju's application config option,
// whatever the charm's options are. Unknown options, bad values, and a key both set and reset
// are NotValid. Nothing is written when nothing changes, so unit agents (which watch their
// application document) run config-changed only for real changes.
func (s *State) SetApplicationConfig(ctx context.Context, uuid, name string, values map[string]string, reset []string) error {
	for _, k := range reset {
		if _, ok := values[k]; ok {
			return apierr.Errorf(apierr.NotValid, "cannot set and reset key %q simultaneously", k)
		}
	}
	values, trust, setTrust, err := SplitTrust(values)
	if err != nil {
		return err
	}
	resetTrust := slices.Contains(reset, TrustOption.Name)
	reset = slices.DeleteFunc(slices.Clone(reset), func(k string) bool { return k == TrustOption.Name })
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
		nextTrust := app.Trust
		switch {
		case setTrust:
			nextTrust = trust
		case resetTrust:
			nextTrust = false
		}
		if maps.Equal(next, app.Config) && nextTrust == app.Trust {
			return nil, nil
		}
		if err := checkConfigSize(next); err != nil {
			return nil, err
		}
		app.Config, app.Trust = next, nextTrust
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
