package application

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// setConstraintsAPI is the part of the client "juju set-constraints" uses.
type setConstraintsAPI interface {
	SetConstraints(ctx context.Context, model, app, cons string) error
}

var _ setConstraintsAPI = (*client.Client)(nil)

type setConstraintsOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (setConstraintsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Constraints string // canonical form
}

// NewCmdSetConstraints returns "juju set-constraints <application> <key>=<value> ...": replace
// an application's constraints.
func NewCmdSetConstraints(f *cmdutil.Factory, runF func(*setConstraintsOptions) error) *cobra.Command {
	opts := &setConstraintsOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[setConstraintsAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "set-constraints [options] <application name> <key>=<value> ...",
		Short: "Set the constraints of an application",
		Long: `Replace the application's constraints with the given ones ("mem=" sets mem explicitly
empty). Units added later get them; existing units keep theirs.`,
		Example:     "  juju set-constraints mysql mem=8G cores=4",
		Annotations: map[string]string{cmdutil.SeeAlso: "constraints, set-model-constraints, deploy, add-unit"},
		Args:        appNameArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			cons, err := cmdutil.ParseConstraints(opts.IO.ErrOut, args[1:]...)
			if err != nil {
				return err
			}
			opts.Constraints = cons.String()
			if runF != nil {
				return runF(opts)
			}
			return setConstraintsRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func setConstraintsRun(ctx context.Context, opts *setConstraintsOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if err := c.SetConstraints(ctx, model.UUID, opts.Application, opts.Constraints); err != nil {
		return fmt.Errorf("setting constraints of application %q: %w", opts.Application, err)
	}
	return nil
}
