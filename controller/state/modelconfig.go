package state

import (
	"context"

	"github.com/jujuclone/juju/api/apierr"
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
