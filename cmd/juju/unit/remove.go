// Package unit holds the commands that manage units.
package unit

import (
	"context"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// removeAPI is the part of the client "juju remove-unit" uses.
type removeAPI interface {
	RemoveUnits(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error)
}

var _ removeAPI = (*client.Client)(nil)

type removeOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (removeAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	Units []string
	cmdutil.RemoveFlags
}

// NewCmdRemove returns "juju remove-unit <unit> [...]": remove units from their applications.
func NewCmdRemove(f *cmdutil.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[removeAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "remove-unit [options] <unit> [...]",
		Short: "Remove application units from the model",
		Long: `Remove units, named <application>/<number> as "juju status" shows them. Each unit
runs its stop and remove hooks and leaves its relations; its subordinate units go with it.
Removing all the units of an application does not remove the application: use
"juju remove-application" for that.

Asks for confirmation when stdin is a terminal, after showing what would be removed;
--no-prompt skips the question and --dry-run only shows the plan.

A unit that cannot go (a failed hook, a stuck agent) can be removed with --force: after a
grace period of one minute, or at once with --no-wait, the controller does the agents'
work itself.`,
		Example: `  juju remove-unit wordpress/2 wordpress/3
  juju remove-unit wordpress/2 --dry-run
  juju remove-unit wordpress/2 --force --no-wait`,
		Args: cmdutil.AtLeastOneArg("no units specified", names.IsValidUnit, "invalid unit name %q"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.RemoveFlags.Validate(); err != nil {
				return err
			}
			opts.Units = args
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddRemoveFlags(cmd, &opts.RemoveFlags, "unit")
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
		Noun:    "unit",
		Request: &jujupb.RemoveRequest{Model: model.UUID, Names: opts.Units},
		Remove:  c.RemoveUnits,
	})
}
