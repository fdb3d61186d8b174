package action

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

type showActionOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (actionsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Action      string
}

// NewCmdShowAction returns "juju show-action <application> <action>": an action's
// description and arguments.
func NewCmdShowAction(f *cmdutil.Factory, runF func(*showActionOptions) error) *cobra.Command {
	opts := &showActionOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[actionsAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "show-action [options] <application> <action>",
		Short: "Shows detailed information about an action",
		Long: `Show an action of an application's charm: its description, then under "Arguments" each
param it takes with its type, description and default, as YAML.`,
		Example:     `  juju show-action postgresql backup`,
		Annotations: map[string]string{cmdutil.SeeAlso: "actions, run"},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return cmdutil.FlagErrorf("no application specified")
			case len(args) == 1:
				return cmdutil.FlagErrorf("no action specified")
			case len(args) > 2:
				return cmdutil.UnrecognizedArgs(args[2:])
			case !names.IsValidApplication(args[0]):
				return cmdutil.FlagErrorf("invalid application name %q", args[0])
			}
			opts.Application, opts.Action = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return showActionRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// actionArg is one param of an action as show-action prints it, fields in Juju's order.
type actionArg struct {
	Type        any `yaml:"type"`
	Description any `yaml:"description"`
	Default     any `yaml:"default,omitempty"`
}

func showActionRun(ctx context.Context, opts *showActionOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	specs, err := c.ApplicationActions(ctx, model.UUID, opts.Application)
	if err != nil {
		return err
	}
	spec := findAction(specs, opts.Action)
	if spec == nil {
		return fmt.Errorf("unknown action %q", opts.Action)
	}
	schema, err := decodeObject(spec.GetSchemaJson())
	if err != nil {
		return fmt.Errorf("action %q: params schema: %w", opts.Action, err)
	}
	args := map[string]actionArg{}
	properties, _ := schema["properties"].(map[string]any)
	for name, p := range properties {
		info, ok := p.(map[string]any)
		if !ok {
			continue
		}
		args[name] = actionArg{Type: info["type"], Description: info["description"], Default: info["default"]}
	}
	data, err := yamlv2.Marshal(args)
	if err != nil {
		return err
	}
	_, err = io.WriteString(opts.IO.Out, spec.GetDescription()+"\n\nArguments\n"+string(data)+"\n")
	return err
}
