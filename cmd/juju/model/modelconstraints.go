package model

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// modelConstraintsAPI is the part of the client "juju model-constraints" uses.
type modelConstraintsAPI interface {
	GetModelConstraints(ctx context.Context, model string) (string, error)
}

var _ modelConstraintsAPI = (*client.Client)(nil)

type modelConstraintsOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (modelConstraintsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model  string
	Format output.Format
	Output string
}

// NewCmdModelConstraints returns "juju model-constraints": print the model's constraints.
func NewCmdModelConstraints(f *cmdutil.Factory, runF func(*modelConstraintsOptions) error) *cobra.Command {
	opts := &modelConstraintsOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[modelConstraintsAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "model-constraints",
		Aliases: []string{"get-model-constraints"},
		Short:   "Show the constraints of a model",
		Example: "  juju model-constraints\n  juju model-constraints --format json",
		Long: `Show the constraints set on the model (the current one, or -m): what every new machine
must provide unless its application or the machine itself says otherwise, in Juju's
constraints format (mem=2048M cores=2), or as yaml or json. A model without constraints
prints an empty line.`,
		Annotations: map[string]string{cmdutil.SeeAlso: "set-model-constraints, constraints, set-constraints"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return modelConstraintsRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	cmdutil.AddConstraintsFormatFlag(cmd, &opts.Format, &opts.Output)
	return cmd
}

func modelConstraintsRun(ctx context.Context, opts *modelConstraintsOptions) error {
	m, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	cons, err := c.GetModelConstraints(ctx, m.UUID)
	if err != nil {
		return fmt.Errorf("getting constraints of model %q: %w", m.Name, err)
	}
	return cmdutil.WriteConstraints(opts.IO, opts.Output, opts.Format, cons)
}
