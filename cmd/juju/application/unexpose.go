package application

import (
	"context"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type unexposeOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (exposeAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Endpoints   []string
}

// NewCmdUnexpose returns "juju unexpose <application> [--endpoints ...]": remove expose
// rules, those of the endpoints named or all of them.
func NewCmdUnexpose(f *cmdutil.Factory, runF func(*unexposeOptions) error) *cobra.Command {
	opts := &unexposeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[exposeAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "unexpose [options] <application name>",
		Short: "Removes public availability over the network for an application",
		Long: `Remove the expose rules of the application ("juju expose"): without options all of
them, and the application is no longer exposed; with --endpoints only the rules of those
endpoints (an endpoint without a rule of its own is refused), and the application stays
exposed while a rule is left.`,
		Example: `  juju unexpose apache2
  juju unexpose apache2 --endpoints logs`,
		Annotations: map[string]string{cmdutil.SeeAlso: "expose, status"},
		Args:        appNameArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			opts.Endpoints = splitComma(opts.Endpoints)
			if runF != nil {
				return runF(opts)
			}
			return unexposeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Endpoints, "endpoints", nil, "Unexpose only the ports that charms have opened for this comma-delimited list of endpoints")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func unexposeRun(ctx context.Context, opts *unexposeOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	return c.Unexpose(ctx, &jujupb.UnexposeRequest{Model: model.UUID, Application: opts.Application, Endpoints: opts.Endpoints})
}
