package model

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// setModelConstraintsAPI is the part of the client "juju set-model-constraints" uses.
type setModelConstraintsAPI interface {
	SetModelConstraints(ctx context.Context, model, cons string) error
}

var _ setModelConstraintsAPI = (*client.Client)(nil)

type setModelConstraintsOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (setModelConstraintsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Constraints string // canonical form
}

// NewCmdSetModelConstraints returns "juju set-model-constraints <key>=<value> ...": replace the
// model's constraints. Machines created later get them; existing ones keep theirs.
func NewCmdSetModelConstraints(f *cmdutil.Factory, runF func(*setModelConstraintsOptions) error) *cobra.Command {
	opts := &setModelConstraintsOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[setModelConstraintsAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "set-model-constraints [options] <key>=<value> ...",
		Short: "Set the constraints of a model",
		Long: `Replace the model's constraints with the given ones (no argument clears them; "mem="
sets mem explicitly empty). Existing machines and units keep their constraints.`,
		Example:     "  juju set-model-constraints mem=8G cores=4",
		Annotations: map[string]string{cmdutil.SeeAlso: "model-constraints, set-constraints, add-machine"},
		RunE: func(cmd *cobra.Command, args []string) error {
			cons, err := cmdutil.ParseConstraints(opts.IO.ErrOut, args...)
			if err != nil {
				return err
			}
			opts.Constraints = cons.String()
			if runF != nil {
				return runF(opts)
			}
			return setModelConstraintsRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func setModelConstraintsRun(ctx context.Context, opts *setModelConstraintsOptions) error {
	m, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if err := c.SetModelConstraints(ctx, m.UUID, opts.Constraints); err != nil {
		return fmt.Errorf("setting constraints of model %q: %w", m.Name, err)
	}
	return nil
}
