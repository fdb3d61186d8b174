package model

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// addModelAPI is the part of the client "juju add-model" uses.
type addModelAPI interface {
	AddModelIn(ctx context.Context, req *jujupb.AddModelRequest) (*jujupb.Model, error)
}

var _ addModelAPI = (*client.Client)(nil)

type addModelOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	Client func(ctx context.Context) (addModelAPI, error)

	Name string
	// CloudRegion is the optional second argument: <cloud>, <region> or <cloud>/<region>.
	CloudRegion string
	Controller  string
	Constraints []string
	ConfigArgs  []string
	NoSwitch    bool

	cons   string
	config map[string]string
}

// NewCmdAddModel returns "juju add-model <name>": create a model and switch to it.
func NewCmdAddModel(f *cmdutil.Factory, runF func(*addModelOptions) error) *cobra.Command {
	opts := &addModelOptions{
		IO:     f.IO,
		Store:  f.Store,
		Config: f.Config,
		Client: cmdutil.ClientFunc[addModelAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "add-model [options] <model name> [<cloud>[/<region>] | <region>]",
		Short: "Add a model to the controller",
		Long: `Add a model to the current controller (or -c) and make it the current model, unless
--no-switch.

The model is in the controller's cloud and region, the only ones it has: "localhost" (a
controller started by "juju bootstrap"). Naming that cloud, its region, or both as
<cloud>/<region> is accepted, as Juju accepts it; any other name is refused.

--config sets the model's configuration (see "juju model-config --help" for the keys), as
<key>=<value> or the path of a YAML file of them; every key and value is checked before
anything is sent.`,
		Example: `  juju add-model test
  juju add-model test localhost
  juju add-model big --constraints mem=8G
  juju add-model ci --config update-status-hook-interval=10s --config automatically-retry-hooks=true`,
		Annotations: map[string]string{cmdutil.SeeAlso: "models, switch, destroy-model, model-config, model-constraints, whoami"},
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ExactlyOneArg("model name is required")(cmd, args[:min(len(args), 1)]); err != nil {
				return err
			}
			return cmdutil.MaxArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.CloudRegion = args[0], ""
			if len(args) > 1 {
				opts.CloudRegion = args[1]
				if opts.CloudRegion == "" || strings.Count(opts.CloudRegion, "/") > 1 {
					return cmdutil.FlagErrorf("cloud name %q not valid", opts.CloudRegion)
				}
			}
			if !names.IsValidModel(opts.Name) {
				return cmdutil.FlagErrorf("%q is not a valid name: model names may only contain lowercase letters, digits and hyphens", opts.Name)
			}
			cons, err := cmdutil.ParseConstraints(opts.IO.ErrOut, opts.Constraints...)
			if err != nil {
				return err
			}
			opts.cons = cons.String()
			if opts.config, err = parseModelConfig(opts.ConfigArgs); err != nil {
				return cmdutil.FlagErrorf("%v", err)
			}
			if runF != nil {
				return runF(opts)
			}
			return addModelRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddControllerFlag(cmd, &opts.Controller)
	cmd.Flags().StringArrayVar(&opts.Constraints, "constraints", nil, "Constraints of the model's machines (repeatable)")
	cmd.Flags().StringArrayVar(&opts.ConfigArgs, "config", nil, "Model configuration: <key>=<value> or a YAML file of them (repeatable; juju model-config --help lists the keys)")
	cmd.Flags().BoolVar(&opts.NoSwitch, "no-switch", false, "Do not make the new model the current one")
	return cmd
}

func addModelRun(ctx context.Context, opts *addModelOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	ctrl, err := opts.Store.ControllerByName(cfg.Controller)
	if err != nil {
		return err
	}
	cloud, region, err := resolveCloudRegion(opts.CloudRegion, ctrl.Cloud, ctrl.Region)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	m, err := c.AddModelIn(ctx, &jujupb.AddModelRequest{Name: opts.Name, Constraints: opts.cons, Config: opts.config, Cloud: cloud, Region: region})
	if err != nil {
		return fmt.Errorf("adding model %q: %w", opts.Name, err)
	}
	if err := opts.Store.UpdateModel(cfg.Controller, m.GetName(), cmdutil.ModelDetails{UUID: m.GetUuid(), Type: modelType(m.GetType())}); err != nil {
		return err
	}
	if !opts.NoSwitch {
		if err := opts.Store.SetCurrentModel(cfg.Controller, m.GetName()); err != nil {
			return err
		}
	}
	user := m.GetOwner()
	if acct, err := opts.Store.AccountDetails(cfg.Controller); err == nil && user == "" {
		user = acct.User
	}
	on := m.GetCloud()
	if on == "" {
		on = "localhost"
	}
	opts.IO.Infof("Added '%s' model on %s with credential '%s' for user '%s'", m.GetName(), on, user, user)
	return nil
}

// resolveCloudRegion reads add-model's second argument as Juju does: <cloud>/<region>, else a
// cloud's name, else a region of the controller's cloud. This controller has one cloud with one
// region, so anything else is refused before anything is sent.
func resolveCloudRegion(arg, ctrlCloud, ctrlRegion string) (cloud, region string, err error) {
	if arg == "" {
		return "", "", nil
	}
	if ctrlCloud == "" {
		ctrlCloud = "localhost"
	}
	if ctrlRegion == "" {
		ctrlRegion = ctrlCloud
	}
	if c, r, ok := strings.Cut(arg, "/"); ok {
		if c != ctrlCloud {
			return "", "", fmt.Errorf("cloud %q not found", c)
		}
		if r != ctrlRegion {
			return "", "", fmt.Errorf("region %q not found (expected one of [%q])", r, ctrlRegion)
		}
		return c, r, nil
	}
	switch arg {
	case ctrlCloud:
		return arg, "", nil
	case ctrlRegion:
		return ctrlCloud, arg, nil
	}
	return "", "", fmt.Errorf("%q is neither a cloud supported by this controller, nor a region in the controller's default cloud %q", arg, ctrlCloud)
}

// parseModelConfig reads --config values: <key>=<value>, or the path of a YAML file holding a
// map of them (later values win), and checks them before anything is sent.
func parseModelConfig(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	config := map[string]string{}
	for _, arg := range args {
		if key, value, ok := strings.Cut(arg, "="); ok {
			if key == "" {
				return nil, fmt.Errorf("invalid --config value %q: expected <key>=<value>", arg)
			}
			config[key] = value
			continue
		}
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("reading --config file: %w", err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("--config file %q: %v", arg, err)
		}
		for k, v := range m {
			switch v.(type) {
			case map[string]any, []any, nil:
				return nil, fmt.Errorf("--config file %q: %q must be a single value", arg, k)
			}
			config[k] = fmt.Sprint(v)
		}
	}
	if err := modelconfig.Validate(config); err != nil {
		return nil, err
	}
	return config, nil
}
