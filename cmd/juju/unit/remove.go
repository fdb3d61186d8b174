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
	// WaitClient is the client --wait watches the removal with.
	WaitClient func(ctx context.Context) (cmdutil.WaitAPI, error)

	Model string
	Units []string
	cmdutil.RemoveFlags
	Wait cmdutil.WaitFlags
	// DestroyStorage is Juju's choice to destroy the unit's storage; this controller has
	// none, so it is accepted and changes nothing.
	DestroyStorage bool
}

// NewCmdRemove returns "juju remove-unit <unit> [...]": remove units from their applications.
func NewCmdRemove(f *cmdutil.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[removeAPI](f),
		WaitClient:   cmdutil.WaitClientFunc(f),
	}
	cmd := &cobra.Command{
		Use:   "remove-unit [options] <unit> [...]",
		Short: "Remove application units from the model",
		Long: `Remove units, named <application>/<number> as "juju status" shows them. Each unit
runs its stop and remove hooks and leaves its relations; its subordinate units go with it.
Removing all the units of an application does not remove the application: use
"juju remove-application" for that.

Asks for confirmation after showing what would be removed; --no-prompt skips the question
and --dry-run only shows the plan. When stdin is not a terminal nothing is asked: without
--no-prompt or --dry-run the command fails (exit 1) before sending anything.

With --no-prompt the plan lines ("will remove unit wordpress/2") go to stdout for what was
removed. The command returns once the units are dying; --wait waits until they are gone,
with progress on stderr, for at most --timeout (default 10m; exit 1 after it, saying what
each unit still waits for). --timeout is only valid with --wait.

A unit that cannot go (a failed hook, a stuck agent) can be removed with --force: after a
grace period of one minute, or at once with --no-wait, the controller does the agents'
work itself.

--destroy-storage is Juju's request to destroy the storage attached to the units. This
controller has no storage, so there is nothing to destroy: it is accepted, so that scripts
written for Juju (jubilant's remove_unit) run unchanged.`,
		Example: `  juju remove-unit wordpress/2 wordpress/3
  juju remove-unit wordpress/2 --dry-run
  juju remove-unit wordpress/2 --no-prompt --wait --timeout 2m
  juju remove-unit wordpress/2 --force --no-wait`,
		Annotations: map[string]string{cmdutil.SeeAlso: "add-unit, remove-application, resolved, status"},
		Args:        cmdutil.AtLeastOneArg("no units specified", names.IsValidUnit, "invalid unit name %q"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.RemoveFlags.Validate(cmd, &opts.Wait); err != nil {
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
	cmdutil.AddWaitFlags(cmd, &opts.Wait, "the units are gone")
	cmd.Flags().BoolVar(&opts.DestroyStorage, "destroy-storage", false, "Destroy storage attached to the units (there is none here)")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func removeRun(ctx context.Context, opts *removeOptions) error {
	if err := opts.RemoveFlags.CheckPrompt(opts.IO, "unit"); err != nil {
		return err
	}
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	r := &cmdutil.Removal{
		IO:      opts.IO,
		Flags:   opts.RemoveFlags,
		Noun:    "unit",
		Request: &jujupb.RemoveRequest{Model: model.UUID, Names: opts.Units},
		Wait:    cmdutil.RemovalWait(opts.IO, opts.WaitClient, model.UUID, "unit", opts.Wait),
		Remove:  c.RemoveUnits,
	}
	return cmdutil.RunRemoval(ctx, r)
}
