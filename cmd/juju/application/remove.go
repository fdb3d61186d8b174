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
	// WaitClient is the client --wait watches the removal with.
	WaitClient func(ctx context.Context) (cmdutil.WaitAPI, error)

	Model        string
	Applications []string
	cmdutil.RemoveFlags
	Wait cmdutil.WaitFlags
	// DestroyStorage is Juju's choice to destroy the units' storage; this controller has
	// none, so it is accepted and changes nothing.
	DestroyStorage bool
}

// NewCmdRemove returns "juju remove-application <application> [...]": remove applications
// with their units and relations.
func NewCmdRemove(f *cmdutil.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[removeAPI](f),
		WaitClient:   cmdutil.WaitClientFunc(f),
	}
	cmd := &cobra.Command{
		Use:   "remove-application [options] <application> [<application>...]",
		Short: "Remove applications from the model",
		Long: `Remove applications: their relations end, all their units (and the units of their
subordinates) are removed, and the application goes when the last unit has. Retrieve any
logs or data you need from the units first.

Asks for confirmation after showing what would be removed; --no-prompt skips the question
and --dry-run only shows the plan. When stdin is not a terminal nothing is asked: without
--no-prompt or --dry-run the command fails (exit 1) before sending anything.

With --no-prompt the plan lines ("will remove application wordpress") go to stdout for
what was removed. The command returns once the applications are dying; --wait waits
until they are gone, with progress on stderr, for at most --timeout (default 10m; exit 1
after it, saying what each application still waits for). --timeout is only valid with
--wait.

An application whose units cannot go (a failed hook, a stuck agent) can be removed with
--force: after a grace period of one minute, or at once with --no-wait, the controller
does the agents' work itself.

--destroy-storage is Juju's request to destroy the storage attached to the units. This
controller has no storage, so there is nothing to destroy: it is accepted, so that scripts
written for Juju (jubilant's remove_application) run unchanged.`,
		Example: `  juju remove-application hadoop
  juju remove-application --dry-run wordpress mysql
  juju remove-application --no-prompt --wait wordpress
  juju remove-application --force --no-wait hadoop
  juju remove-application -m test-model mariadb`,
		Annotations: map[string]string{cmdutil.SeeAlso: "remove-unit, remove-relation, remove-machine, deploy, status"},
		Args:        cmdutil.AtLeastOneArg("no application specified", names.IsValidApplication, "invalid application name %q"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.RemoveFlags.Validate(cmd, &opts.Wait); err != nil {
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
	cmdutil.AddWaitFlags(cmd, &opts.Wait, "the applications are gone")
	cmd.Flags().BoolVar(&opts.DestroyStorage, "destroy-storage", false, "Destroy storage attached to application units (there is none here)")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func removeRun(ctx context.Context, opts *removeOptions) error {
	if err := opts.RemoveFlags.CheckPrompt(opts.IO, "application"); err != nil {
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
		Noun:    "application",
		Request: &jujupb.RemoveRequest{Model: model.UUID, Names: opts.Applications},
		Wait:    cmdutil.RemovalWait(opts.IO, opts.WaitClient, model.UUID, "application", opts.Wait),
		Remove:  c.RemoveApplications,
	}
	return cmdutil.RunRemoval(ctx, r)
}
