package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// removeMemberAPI is the part of the client "juju remove-controller-member" uses: the members
// (to confirm what goes, and to refresh the client store after), and the removal.
type removeMemberAPI interface {
	ControllerMembers(ctx context.Context) ([]*jujupb.ControllerMember, string, error)
	RemoveControllerMember(ctx context.Context, id string) error
}

var _ removeMemberAPI = (*client.Client)(nil)

type removeMemberOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	Client func(ctx context.Context) (removeMemberAPI, error)

	ID         string
	NoPrompt   bool
	Controller string
}

// NewCmdRemoveControllerMember returns "juju remove-controller-member <id>": remove one member
// of the controller.
func NewCmdRemoveControllerMember(f *cmdutil.Factory, runF func(*removeMemberOptions) error) *cobra.Command {
	opts := &removeMemberOptions{
		IO:     f.IO,
		Store:  f.Store,
		Config: f.Config,
		Client: cmdutil.ClientFunc[removeMemberAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "remove-controller-member [options] <member id>",
		Short: "Remove a member of the controller",
		Long: `Remove one member of the controller, by the id "juju show-controller" lists under
controller-machines: its store (etcd) member leaves the cluster first, then its jujud
stops and its record goes. The controller refuses to remove a member whose removal would
cost the store its quorum. "juju enable-ha" brings the number of members back up.

Asks for confirmation after showing what would be removed; --no-prompt skips the question.
When stdin is not a terminal nothing is asked: without --no-prompt the command fails
(exit 1) before sending anything. With --no-prompt the plan line ("will remove controller
member 2") goes to stdout once the member is removed. Afterwards the client store no longer
lists the member's API address for the controller.`,
		Example: `  juju remove-controller-member 2
  juju remove-controller-member 2 --no-prompt -c local`,
		Annotations: map[string]string{cmdutil.SeeAlso: "enable-ha, show-controller, controllers"},
		Args:        cmdutil.ExactlyOneArg("no controller member specified"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !validMemberID(args[0]) {
				return cmdutil.FlagErrorf("invalid controller member id %q", args[0])
			}
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return removeMemberRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoPrompt, "no-prompt", false, "Do not ask for confirmation")
	cmdutil.AddControllerFlag(cmd, &opts.Controller)
	return cmd
}

// validMemberID: member ids are 0 (the bootstrap member), 1, 2, ... never reused.
func validMemberID(id string) bool {
	if id == "" || (len(id) > 1 && id[0] == '0') {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func removeMemberRun(ctx context.Context, opts *removeMemberOptions) error {
	if !opts.NoPrompt {
		if err := cmdutil.RequireTerminal(opts.IO); err != nil {
			return fmt.Errorf("controller member removal: %w", err)
		}
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	members, _, err := c.ControllerMembers(ctx)
	if err != nil {
		return fmt.Errorf("listing controller members: %w", err)
	}
	i := -1
	for j, m := range members {
		if m.GetId() == opts.ID {
			i = j
		}
	}
	if i < 0 {
		return apierr.Errorf(apierr.NotFound, "controller member %q not found", opts.ID)
	}
	plan := "will remove controller member " + opts.ID
	if !opts.NoPrompt {
		fmt.Fprintln(opts.IO.ErrOut, "WARNING This command will perform the following actions:")
		fmt.Fprintln(opts.IO.Out, plan)
		if err := cmdutil.Confirm(ctx, opts.IO); err != nil {
			return fmt.Errorf("controller member removal: %w", err)
		}
	}
	if err := c.RemoveControllerMember(ctx, opts.ID); err != nil {
		return fmt.Errorf("removing controller member %s failed: %w", opts.ID, err)
	}
	if opts.NoPrompt {
		fmt.Fprintln(opts.IO.Out, plan)
	}
	// The member's address goes from the store even when the members cannot be asked again
	// (the member removed may be the one this client talks to).
	after, _, err := c.ControllerMembers(ctx)
	if err != nil {
		after = nil
	}
	if err := recordMembers(opts.Store, cfg.Controller, after, members[i].GetApiAddress()); err != nil && !errors.Is(err, apierr.NotFound) {
		opts.IO.Warningf("cannot record the controller's members in the client store: %v", err)
	}
	return nil
}
