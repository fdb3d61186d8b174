package relation

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

// removeAPI is the part of the client "juju remove-relation" uses.
type removeAPI interface {
	RemoveRelation(ctx context.Context, req *jujupb.RemoveRelationRequest) (*jujupb.RemoveRelationResponse, error)
}

var _ removeAPI = (*client.Client)(nil)

type removeOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (removeAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	// WaitClient is the client --wait watches the removal with.
	WaitClient func(ctx context.Context) (cmdutil.WaitAPI, error)

	Model  string
	Force  bool
	NoWait bool
	Wait   cmdutil.WaitFlags

	// Either two endpoints, or an id.
	Endpoints []string
	ID        int64
	ByID      bool
}

// NewCmdRemove returns "juju remove-relation <app1>[:<ep1>] <app2>[:<ep2>] | <relation-id>":
// remove a relation.
func NewCmdRemove(f *cmdutil.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[removeAPI](f),
		WaitClient:   cmdutil.WaitClientFunc(f),
	}
	cmd := &cobra.Command{
		Use:   "remove-relation [options] <application1>[:<endpoint1>] <application2>[:<endpoint2>] | <relation-id>",
		Short: "Remove a relation between two applications",
		Long: `Remove the relation between two applications, named by its endpoints (an endpoint
name is needed only when the applications have more than one relation) or by the id shown
by "juju status --relations". Each unit leaves the relation in turn, running its
relation-departed and relation-broken hooks; the relation goes when the last one has left.
Removing an application removes its relations too.

--force does not wait for units that fail to leave: after a grace period of one minute,
or at once with --no-wait, the controller does the agents' work itself.

There is no prompt. What was done goes to stderr ("removing relation 4 (wordpress:db
mysql:db): its units are leaving it"; --quiet hides it). The command returns once the
relation is dying; --wait waits until it is gone, with progress on stderr, for at most
--timeout (default 10m; exit 1 after it, saying which units are still in its scope).
--timeout is only valid with --wait.`,
		Example: `  juju remove-relation wordpress mysql
  juju remove-relation wordpress:db mysql:db --wait
  juju remove-relation 4 --force`,
		Annotations: map[string]string{cmdutil.SeeAlso: "integrate, remove-application, status"},
		Args:        cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateRemove(opts, args); err != nil {
				return err
			}
			if err := opts.Wait.Validate(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Force remove a relation")
	cmd.Flags().BoolVar(&opts.NoWait, "no-wait", false, "With --force, do not wait for the units to leave the relation")
	cmdutil.AddWaitFlags(cmd, &opts.Wait, "the relation is gone")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func validateRemove(opts *removeOptions, args []string) error {
	switch len(args) {
	case 1:
		id, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil || id < 0 {
			return cmdutil.FlagErrorf("relation ID %q not valid", args[0])
		}
		opts.ID, opts.ByID = id, true
	case 2:
		if err := validateEndpoints(args); err != nil {
			return err
		}
		opts.Endpoints = args
	default:
		return cmdutil.FlagErrorf("a relation must involve two applications")
	}
	return cmdutil.ValidateNoWait(opts.Force, opts.NoWait)
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
	resp, err := c.RemoveRelation(ctx, &jujupb.RemoveRelationRequest{
		Model:     model.UUID,
		Endpoints: opts.Endpoints,
		Id:        opts.ID,
		ById:      opts.ByID,
		Force:     opts.Force,
		NoWait:    opts.NoWait,
	})
	if err != nil {
		// The controller's errors (relation matching "a b" not found, ambiguous relation)
		// already say what is wrong.
		return err
	}
	rel := fmt.Sprintf("relation %d (%s)", resp.GetId(), resp.GetKey())
	switch resp.GetOutcome() {
	case "removed":
		opts.IO.Infof("removed %s", rel)
		return nil
	case "none":
		opts.IO.Infof("%s is already being removed", rel)
	default:
		opts.IO.Infof("removing %s: its units are leaving it", rel)
	}
	if !opts.Wait.Wait {
		return nil
	}
	wc, err := opts.WaitClient(ctx)
	if err != nil {
		return err
	}
	return cmdutil.WaitForRelationRemoval(ctx, opts.IO, wc, model.UUID, resp.GetId(), resp.GetKey(), opts.Wait.Timeout)
}
