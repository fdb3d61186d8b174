package model

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/output"
)

// providerType is the "type" of every model of this controller: its cloud's provider, which
// runs machines as directories and agents on this host.
const providerType = "local"

// showModelAPI is the part of the client "juju show-model" uses: the model, and its machines.
type showModelAPI interface {
	GetModel(ctx context.Context, ref string) (*jujupb.Model, error)
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ showModelAPI = (*client.Client)(nil)

type showModelOptions struct {
	IO    *output.Streams
	Store *cmdutil.Store
	// Lookup resolves [<controller>:][<owner>/]<model>; "" is the current model (or -m).
	Lookup func(ctx context.Context, spec string) (*cmdutil.ModelRef, error)
	Client func(ctx context.Context, controller string) (showModelAPI, error)
	// Now is the time status.since is told relative to.
	Now func() time.Time

	Model  string
	Format output.Format
	Output string
}

// NewCmdShowModel returns "juju show-model [<model>]": a model's details, as Juju shows them.
func NewCmdShowModel(f *cmdutil.Factory, runF func(*showModelOptions) error) *cobra.Command {
	opts := &showModelOptions{
		IO:     f.IO,
		Store:  f.Store,
		Lookup: resolveNamedModel(f),
		Client: func(ctx context.Context, controller string) (showModelAPI, error) {
			return f.Connect(ctx, controller)
		},
		Now: time.Now,
	}
	cmd := &cobra.Command{
		Use:   "show-model [options] [<model name>]",
		Short: "Shows information about the current or specified model",
		Long: `Show a model's details: its name (owner/name), UUID, controller, cloud and region, life,
status, users, machines (with their cores) and the Juju version its agents implement. The
document is a map from the model's short name to its details, as Juju prints it; yaml by
default, or json.

The model is the current one, or the one named as [<controller>:][<owner>/]<model>.`,
		Example: `  juju show-model
  juju show-model test --format json
  juju show-model local:admin/test`,
		Annotations: map[string]string{cmdutil.SeeAlso: "models, add-model, model-config, status"},
		Args:        cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
				if _, name := cmdutil.SplitModel(opts.Model); name == "" {
					return cmdutil.FlagErrorf("%q is not a valid model name", opts.Model)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return showModelRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// resolveNamedModel resolves a model named on the command line, or the current one.
func resolveNamedModel(f *cmdutil.Factory) func(ctx context.Context, spec string) (*cmdutil.ModelRef, error) {
	return func(ctx context.Context, spec string) (*cmdutil.ModelRef, error) {
		if spec == "" {
			return f.Model(ctx)
		}
		controller, name := cmdutil.SplitModel(spec)
		if controller == "" {
			cfg, err := f.Config()
			if err != nil {
				return nil, err
			}
			if controller = cfg.Controller; controller == "" {
				return f.Model(ctx) // says why there is no controller
			}
		}
		return f.LookupModel(ctx, controller, name)
	}
}

func showModelRun(ctx context.Context, opts *showModelOptions) error {
	ref, err := opts.Lookup(ctx, opts.Model)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx, ref.Controller)
	if err != nil {
		return err
	}
	m, err := c.GetModel(ctx, ref.UUID)
	if errors.Is(err, apierr.NotFound) {
		return fmt.Errorf("model %s not found", ref)
	}
	if err != nil {
		return fmt.Errorf("getting model %q: %w", ref.Name, err)
	}
	st, err := c.FullStatus(ctx, m.GetUuid(), nil)
	if err != nil {
		return fmt.Errorf("getting the machines of model %q: %w", ref.Name, err)
	}
	ctrl, err := opts.Store.ControllerByName(ref.Controller)
	if err != nil {
		return err
	}
	info := newModelInfo(ref.Controller, ctrl.UUID, ref.Owner, m, opts.Now())
	info.Machines = map[string]modelMachine{}
	for _, mc := range st.GetMachines() {
		info.Machines[mc.GetId()] = modelMachine{Cores: hardwareCores(mc.GetHardware())}
	}
	if len(info.Machines) == 0 {
		info.Machines = nil
	}
	return output.WriteFile(opts.Output, opts.Format, map[string]*modelInfo{info.ShortName: info}, opts.IO)
}

// modelInfo is a model as "juju show-model" and "juju models" print it: Juju's ModelInfo.
type modelInfo struct {
	Name           string                  `json:"name" yaml:"name"`
	ShortName      string                  `json:"short-name" yaml:"short-name"`
	UUID           string                  `json:"model-uuid" yaml:"model-uuid"`
	Type           string                  `json:"model-type" yaml:"model-type"`
	ControllerUUID string                  `json:"controller-uuid" yaml:"controller-uuid"`
	ControllerName string                  `json:"controller-name" yaml:"controller-name"`
	IsController   bool                    `json:"is-controller" yaml:"is-controller"`
	Owner          string                  `json:"owner" yaml:"owner"`
	Cloud          string                  `json:"cloud" yaml:"cloud"`
	Region         string                  `json:"region,omitempty" yaml:"region,omitempty"`
	ProviderType   string                  `json:"type,omitempty" yaml:"type,omitempty"`
	Life           string                  `json:"life" yaml:"life"`
	Status         *statusItem             `json:"status,omitempty" yaml:"status,omitempty"`
	Users          map[string]modelUser    `json:"users,omitempty" yaml:"users,omitempty"`
	Machines       map[string]modelMachine `json:"machines,omitempty" yaml:"machines,omitempty"`
	SLA            string                  `json:"sla,omitempty" yaml:"sla,omitempty"`
	AgentVersion   string                  `json:"agent-version,omitempty" yaml:"agent-version,omitempty"`
	Features       []modelSupportedFeature `json:"supported-features,omitempty" yaml:"supported-features,omitempty"`
}

// modelUser is a user's access to the model. This controller has one user, the admin, who is
// connected as the command runs.
type modelUser struct {
	DisplayName    string `json:"display-name,omitempty" yaml:"display-name,omitempty"`
	Access         string `json:"access" yaml:"access"`
	LastConnection string `json:"last-connection" yaml:"last-connection"`
}

// modelMachine is a machine of the model: Juju shows its cores alone.
type modelMachine struct {
	Cores int `json:"cores" yaml:"cores"`
}

// modelSupportedFeature is a feature the model's agents offer: here, the Juju version.
type modelSupportedFeature struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
	Version     string `json:"version,omitempty" yaml:"version,omitempty"`
}

// newModelInfo describes m of controller (named and with uuid) for user, the account in the
// client store (the owner when the controller does not say).
func newModelInfo(controller, controllerUUID, user string, m *jujupb.Model, now time.Time) *modelInfo {
	owner := m.GetOwner()
	if owner == "" {
		owner = user
	}
	life := m.GetLife()
	if life == "" {
		life = "alive"
	}
	agentVersion := m.GetAgentVersion()
	if agentVersion == "" {
		agentVersion = version.Juju
	}
	info := &modelInfo{
		Name:           owner + "/" + m.GetName(),
		ShortName:      m.GetName(),
		UUID:           m.GetUuid(),
		Type:           modelType(m.GetType()),
		ControllerUUID: controllerUUID,
		ControllerName: controller,
		IsController:   m.GetName() == "controller",
		Owner:          owner,
		Cloud:          m.GetCloud(),
		Region:         m.GetRegion(),
		ProviderType:   providerType,
		Life:           life,
		Users:          map[string]modelUser{user: {DisplayName: user, Access: "admin", LastConnection: "just now"}},
		SLA:            "unsupported",
		AgentVersion:   agentVersion,
		Features: []modelSupportedFeature{
			{Name: "juju", Description: "the version of Juju used by the model", Version: agentVersion},
		},
	}
	if st := m.GetStatus(); st != nil && st.GetStatus() != "" {
		info.Status = &statusItem{Current: st.GetStatus(), Message: st.GetMessage()}
		if st.GetSince() != 0 { // relative to now, as Juju tells it ("2 minutes ago")
			info.Status.Since = friendlyDuration(time.Unix(0, st.GetSince()), now)
		}
	}
	return info
}

// friendlyDuration tells when, a time in the past, relative to now as Juju does: "just now",
// "N seconds ago", "N minutes ago", "N hours ago" (singular for 1), and from a day on the date
// alone.
func friendlyDuration(when, now time.Time) string {
	since := now.Sub(when)
	plural := func(n int, unit string) string {
		if n != 1 {
			unit += "s"
		}
		return fmt.Sprintf("%d %s ago", n, unit)
	}
	switch {
	case since >= 24*time.Hour:
		return when.UTC().Format(time.DateOnly)
	case since >= time.Hour:
		return plural(int(since.Hours()), "hour")
	case since >= time.Minute:
		return plural(int(since.Minutes()), "minute")
	case since >= 2*time.Second:
		return fmt.Sprintf("%d seconds ago", int(since.Seconds()))
	}
	return "just now"
}

// hardwareCores reads cores=N from a machine's hardware characteristics (0 when unknown).
func hardwareCores(hw string) int {
	for _, f := range strings.Fields(hw) {
		if v, ok := strings.CutPrefix(f, "cores="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
