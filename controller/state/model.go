package state

import (
	"context"
	"fmt"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/constraints"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// Machine jobs.
const (
	JobHostUnits   = "host-units"
	JobManageModel = "manage-model"
)

// ControllerModelName and DefaultModelName are the models bootstrap creates.
const (
	ControllerModelName = "controller"
	DefaultModelName    = "default"
)

// BootstrapArgs describe a new controller.
type BootstrapArgs struct {
	ControllerName    string
	AdminPasswordHash string
	Cloud, Region     string
	// Base of machine 0, the controller host.
	Base string
	// ModelDefaults are the controller's model defaults (bootstrap --model-default), checked
	// as model configuration.
	ModelDefaults map[string]string
}

// Bootstrap creates the controller document, the "controller" model (with machine 0, the
// controller host itself, which manages the model) and the "default" model. It is idempotent:
// on an initialised store it returns the existing controller.
func (s *State) Bootstrap(ctx context.Context, args BootstrapArgs) (*storepb.Controller, error) {
	existing, err := s.Controller(ctx)
	if err == nil {
		return existing, nil
	}
	defaults, err := modelconfig.Apply(nil, args.ModelDefaults, nil)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "model defaults: %v", err)
	}
	if len(defaults) == 0 {
		defaults = nil
	}
	uuid, err := newUUID()
	if err != nil {
		return nil, err
	}
	ctrl := &storepb.Controller{
		Uuid: uuid, Name: args.ControllerName, AdminPasswordHash: args.AdminPasswordHash,
		Created: s.now().UnixNano(), ModelDefaults: defaults,
	}
	err = s.run(ctx, "bootstrapping controller", func(ctx context.Context, r *reader) (*writes, error) {
		found, err := r.get(ctx, controllerKey, nil)
		if err != nil || found {
			return nil, err
		}
		w := &writes{}
		w.put(controllerKey, ctrl)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	m, err := s.AddModel(ctx, ControllerModelName, "admin", "", args.Cloud, args.Region)
	if err != nil {
		return nil, err
	}
	// Machine 0 is the controller host; the provisioner gives it an instance and an agent like any
	// other machine.
	machine := &storepb.Machine{
		Id: "0", Life: string(life.Alive), Base: args.Base,
		Jobs:           []string{JobManageModel, JobHostUnits},
		AgentStatus:    s.status(string(status.Pending), ""),
		InstanceStatus: s.status(string(status.Pending), ""),
	}
	err = s.run(ctx, "adding controller machine", func(ctx context.Context, r *reader) (*writes, error) {
		w := &writes{}
		if _, err := r.nextSequence(ctx, m.Uuid, "machine"); err != nil {
			return nil, err
		}
		w.put(machineKey(m.Uuid, "0"), machine)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.AddModel(ctx, DefaultModelName, "admin", "", args.Cloud, args.Region); err != nil {
		return nil, err
	}
	return ctrl, nil
}

// Controller returns the controller document; NotFound before bootstrap.
func (s *State) Controller(ctx context.Context) (*storepb.Controller, error) {
	c := &storepb.Controller{}
	ok, err := s.getDoc(ctx, controllerKey, c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "controller not bootstrapped")
	}
	return c, nil
}

// AddModel creates a model; the name must be unused (L-G5).
func (s *State) AddModel(ctx context.Context, name, owner, cons, cloud, region string) (*storepb.Model, error) {
	return s.AddModelWithConfig(ctx, name, owner, cons, cloud, region, nil)
}

// AddModelWithConfig is AddModel with the model's configuration (add-model --config), checked
// before anything is written.
func (s *State) AddModelWithConfig(ctx context.Context, name, owner, cons, cloud, region string, config map[string]string) (*storepb.Model, error) {
	config, err := modelconfig.Apply(nil, config, nil)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	if len(config) == 0 {
		config = nil
	}
	if !names.IsValidModel(name) {
		return nil, apierr.Errorf(apierr.NotValid, "%q is not a valid name: model names may only contain lowercase letters, digits and hyphens", name)
	}
	canon, err := canonicalConstraints(cons)
	if err != nil {
		return nil, err
	}
	uuid, err := newUUID()
	if err != nil {
		return nil, err
	}
	m := &storepb.Model{
		Uuid: uuid, Name: name, Owner: owner, Life: string(life.Alive), Constraints: canon,
		Created: s.now().UnixNano(), Cloud: cloud, Region: region, Config: config,
		DefaultBase: config[modelconfig.DefaultBase],
	}
	err = s.run(ctx, fmt.Sprintf("adding model %q", name), func(ctx context.Context, r *reader) (*writes, error) {
		_, taken, err := r.getRaw(ctx, modelNamePrefix+name)
		if err != nil {
			return nil, err
		}
		if taken {
			return nil, apierr.Errorf(apierr.AlreadyExists, "model %q already exists", name)
		}
		w := &writes{}
		w.putRaw(modelNamePrefix+name, uuid)
		w.put(modelKey(uuid), m)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Model resolves a model by name or UUID.
func (s *State) Model(ctx context.Context, ref string) (*storepb.Model, error) {
	uuid, err := s.modelUUID(ctx, ref)
	if err != nil {
		return nil, err
	}
	m := &storepb.Model{}
	ok, err := s.getDoc(ctx, modelKey(uuid), m)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "model %q not found", ref)
	}
	return m, nil
}

// ModelSummary is a model with its counts.
type ModelSummary struct {
	Model        *storepb.Model
	Machines     int
	Units        int
	Applications int
}

// ListModels lists the models sorted by name, with machine and unit counts.
func (s *State) ListModels(ctx context.Context) ([]ModelSummary, error) {
	resp, err := s.kv.Get(ctx, modelNamePrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	var out []ModelSummary
	for _, kv := range resp.Kvs {
		m := &storepb.Model{}
		ok, err := s.getDoc(ctx, modelKey(string(kv.Value)), m)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		machines, err := s.count(ctx, ModelPrefix(m.Uuid)+"machines/")
		if err != nil {
			return nil, err
		}
		units, err := s.count(ctx, ModelPrefix(m.Uuid)+"units/")
		if err != nil {
			return nil, err
		}
		apps, err := s.count(ctx, ModelPrefix(m.Uuid)+"applications/")
		if err != nil {
			return nil, err
		}
		out = append(out, ModelSummary{Model: m, Machines: machines, Units: units, Applications: apps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model.Name < out[j].Model.Name })
	return out, nil
}

// SetModelConstraints replaces the model's constraints; existing units keep theirs (L-C2).
func (s *State) SetModelConstraints(ctx context.Context, uuid, cons string) error {
	canon, err := canonicalConstraints(cons)
	if err != nil {
		return err
	}
	return s.run(ctx, "setting model constraints", func(ctx context.Context, r *reader) (*writes, error) {
		m := &storepb.Model{}
		ok, err := r.get(ctx, modelKey(uuid), m)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.Errorf(apierr.NotFound, "model %q not found", uuid)
		}
		m.Constraints = canon
		w := &writes{}
		w.put(modelKey(uuid), m)
		return w, nil
	})
}

func (s *State) getDoc(ctx context.Context, key string, msg proto.Message) (bool, error) {
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return false, nil
	}
	if err := proto.Unmarshal(resp.Kvs[0].Value, msg); err != nil {
		return false, fmt.Errorf("decoding %s: %w", key, err)
	}
	return true, nil
}

func (s *State) count(ctx context.Context, prefix string) (int, error) {
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("counting %s: %w", prefix, err)
	}
	return int(resp.Count), nil
}

// canonicalConstraints validates a constraints string and returns its canonical form.
func canonicalConstraints(cons string) (string, error) {
	if cons == "" {
		return "", nil
	}
	v, err := constraints.Parse(cons)
	if err != nil {
		return "", apierr.Errorf(apierr.NotValid, "%v", err)
	}
	if err := constraints.Validate(v); err != nil {
		return "", apierr.Errorf(apierr.NotValid, "%v", err)
	}
	return v.String(), nil
}

// mergeConstraints collapses fallback (model) and cons (application) into one value (L-C2).
func mergeConstraints(fallback, cons string) (string, error) {
	fb, err := constraints.Parse(fallback)
	if err != nil {
		return "", fmt.Errorf("stored constraints %q: %w", fallback, err)
	}
	c, err := constraints.Parse(cons)
	if err != nil {
		return "", fmt.Errorf("stored constraints %q: %w", cons, err)
	}
	return constraints.Merge(fb, c).String(), nil
}
