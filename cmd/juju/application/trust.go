package application

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// trustAPI is the part of the client "juju trust" uses: trust is an application config option,
// set like the charm's.
type trustAPI interface {
	SetConfig(ctx context.Context, req *jujupb.SetConfigRequest) error
}

var _ trustAPI = (*client.Client)(nil)

type trustOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (trustAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Remove      bool
	Scope       string
}

// NewCmdTrust returns "juju trust <application> [--remove] [--scope cluster]": set the
// application config option trust, as "juju config <application> trust=true" does.
func NewCmdTrust(f *cmdutil.Factory, runF func(*trustOptions) error) *cobra.Command {
	opts := &trustOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[trustAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "trust [options] <application name>",
		Short: "Sets the trust status of a deployed application to true",
		Long: `Set the application config option trust to true (--remove: back to false), as
"juju config <application> trust=true" does; "juju config <application>" shows it under
application-config, and deploy --trust sets it from the start.

A trusted charm may read the cloud spec of its model, credentials included, with the
credential-get hook tool; an untrusted one is refused. The local provider needs no
credential: its cloud spec has type "local", the model's cloud and region, and auth type
"empty". A change of trust runs config-changed on every unit of the application.

--scope is for Kubernetes models, where it must be "cluster" to confirm that trust grants
the charm access to the whole cluster; this controller's models are machine models, where
Juju accepts --scope cluster and it has no effect. Any other scope is refused.`,
		Example: `  juju trust mysql
  juju trust mysql --remove`,
		Annotations: map[string]string{cmdutil.SeeAlso: "config, deploy"},
		Args:        appNameArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			if cmd.Flags().Changed("scope") && opts.Scope != "cluster" {
				return cmdutil.FlagErrorf("scope %q not valid", opts.Scope)
			}
			if runF != nil {
				return runF(opts)
			}
			return trustRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "Remove trusted access from a trusted application")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", `(Kubernetes models only) Needs to be set to "cluster"; no effect on machine models`)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func trustRun(ctx context.Context, opts *trustOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	req := &jujupb.SetConfigRequest{
		Model: model.UUID, Application: opts.Application,
		Values: map[string]string{"trust": strconv.FormatBool(!opts.Remove)},
	}
	if err := c.SetConfig(ctx, req); err != nil {
		return fmt.Errorf("setting trust of application %q: %w", opts.Application, err)
	}
	return nil
}
