package application

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// constraintsAPI is the part of the client "juju constraints" uses.
type constraintsAPI interface {
	GetConstraints(ctx context.Context, model, app string) (string, error)
}

var _ constraintsAPI = (*client.Client)(nil)

type constraintsOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (constraintsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Format      output.Format
	Output      string
}

// NewCmdConstraints returns "juju constraints <application>": print an application's
// constraints.
func NewCmdConstraints(f *cmdutil.Factory, runF func(*constraintsOptions) error) *cobra.Command {
	opts := &constraintsOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[constraintsAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "constraints [options] <application name>",
		Aliases: []string{"get-constraints"},
		Short:   "Show the constraints of an application",
		Example: "  juju constraints mysql\n  juju constraints mysql --format json",
		Long: `Show the constraints set on an application: what its new machines must provide (cores, memory,
architecture...), in Juju's constraints format (mem=2048M cores=2), or as yaml or json.
Machines added for the application's units get the model's constraints merged with these,
the application's winning where both set a key. An application without constraints prints
an empty line.`,
		Annotations: map[string]string{cmdutil.SeeAlso: "set-constraints, model-constraints, set-model-constraints, show-application"},
		Args:        appNameArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			if runF != nil {
				return runF(opts)
			}
			return constraintsRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	cmdutil.AddConstraintsFormatFlag(cmd, &opts.Format, &opts.Output)
	return cmd
}

// appNameArgs checks that the first argument is a valid application name; max is the number
// of arguments allowed (0: any).
func appNameArgs(max int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmdutil.FlagErrorf("no application name specified")
		}
		if err := names.ValidateApplicationName(args[0]); err != nil {
			return cmdutil.FlagErrorWrap(err)
		}
		if max > 0 && len(args) > max {
			return cmdutil.UnrecognizedArgs(args[max:])
		}
		return nil
	}
}

func constraintsRun(ctx context.Context, opts *constraintsOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	cons, err := c.GetConstraints(ctx, model.UUID, opts.Application)
	if err != nil {
		return fmt.Errorf("getting constraints of application %q: %w", opts.Application, err)
	}
	return cmdutil.WriteConstraints(opts.IO, opts.Output, opts.Format, cons)
}
