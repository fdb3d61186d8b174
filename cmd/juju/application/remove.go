package application

import (
	"context"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// removeAPI is the part of the client "juju remove-application" uses.
type removeAPI interface {
	RemoveApplications(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error)
}

var _ removeAPI = (*client.Client)(nil)

type removeOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (removeAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model        string
	Applications []string
	cmdutil.RemoveFlags
}

// NewCmdRemove returns "juju remove-application <application> [...]": remove applications
// with their units and relations.
func NewCmdRemove(f *cmdutil.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[removeAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "remove-application [options] <application> [<application>...]",
		Short: "Remove applications from the model",
		Long: `Remove applications: their relations end, all their units (and the units of their
subordinates) are removed, and the application goes when the last unit has. Retrieve any
logs or data you need from the units first.

Asks for confirmation when stdin is a terminal, after showing what would be removed;
--no-prompt skips the question and --dry-run only shows the plan.

An application whose units cannot go (a failed hook, a stuck agent) can be removed with
--force: after a grace period of one minute, or at once with --no-wait, the controller
does the agents' work itself.`,
		Example: `  juju remove-application hadoop
  juju remove-application --dry-run wordpress mysql
  juju remove-application --force --no-wait hadoop
  juju remove-application -m test-model mariadb`,
		Args: cmdutil.AtLeastOneArg("no application specified", names.IsValidApplication, "invalid application name %q"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.RemoveFlags.Validate(); err != nil {
				return err
			}
			opts.Applications = args
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddRemoveFlags(cmd, &opts.RemoveFlags, "application")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func removeRun(ctx context.Context, opts *removeOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	return cmdutil.RunRemoval(ctx, &cmdutil.Removal{
		IO:      opts.IO,
		Flags:   opts.RemoveFlags,
		Noun:    "application",
		Request: &jujupb.RemoveRequest{Model: model.UUID, Names: opts.Applications},
		Remove:  c.RemoveApplications,
	})
}
