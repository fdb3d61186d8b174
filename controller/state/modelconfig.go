package state

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/modelconfig"
)

// SetModelConfig sets and resets keys of an alive model's configuration in one transaction,
// after checking them all (NotValid: nothing is written). The model's default base follows
// default-base, for the readers of that field (add-machine, deploy).
func (s *State) SetModelConfig(ctx context.Context, uuid string, set map[string]string, reset []string) error {
	if _, err := modelconfig.Apply(nil, set, reset); err != nil {
		return apierr.Errorf(apierr.NotValid, "%v", err)
	}
	return s.run(ctx, "setting model config", func(ctx context.Context, r *reader) (*writes, error) {
		m, err := r.model(ctx, uuid)
		if err != nil {
			return nil, err
		}
		config, err := modelconfig.Apply(m.Config, set, reset)
		if err != nil {
			// Valid alone, refused with what is stored (legacy and juju- proxies together).
			return nil, apierr.Errorf(apierr.NotValid, "%v", err)
		}
		if len(config) == 0 {
			config = nil
		}
		m.Config, m.DefaultBase = config, config[modelconfig.DefaultBase]
		w := &writes{}
		w.put(modelKey(uuid), m)
		return w, nil
	})
}

// SetModelDefaults sets and resets the controller's model defaults in one transaction, after
// checking them all as model configuration (NotValid: nothing is written). Every model is
// written again in the same transaction, unchanged, so that the agents watching it read the
// defaults they inherit now rather than at their next wake-up.
func (s *State) SetModelDefaults(ctx context.Context, set map[string]string, reset []string) error {
	if _, err := modelconfig.Apply(nil, set, reset); err != nil {
		return apierr.Errorf(apierr.NotValid, "%v", err)
	}
	names, err := s.kv.Get(ctx, modelNamePrefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("listing models: %w", err)
	}
	return s.run(ctx, "setting model defaults", func(ctx context.Context, r *reader) (*writes, error) {
		c := &storepb.Controller{}
		found, err := r.get(ctx, controllerKey, c)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, apierr.Errorf(apierr.NotFound, "controller not bootstrapped")
		}
		defaults, err := modelconfig.Apply(c.ModelDefaults, set, reset)
		if err != nil {
			return nil, apierr.Errorf(apierr.NotValid, "%v", err)
		}
		if len(defaults) == 0 {
			defaults = nil
		}
		c.ModelDefaults = defaults
		w := &writes{}
		w.put(controllerKey, c)
		for _, kv := range names.Kvs {
			m := &storepb.Model{}
			if found, err := r.get(ctx, modelKey(string(kv.Value)), m); err != nil {
				return nil, err
			} else if found {
				w.put(modelKey(m.Uuid), m)
			}
		}
		return w, nil
	})
}

// ModelDefaults returns the controller's model defaults (nil when it has none).
func (s *State) ModelDefaults(ctx context.Context) (map[string]string, error) {
	c, err := s.Controller(ctx)
	if err != nil {
		return nil, err
	}
	return c.ModelDefaults, nil
}
