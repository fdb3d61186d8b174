package machine

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// removeAPI is the part of the client "juju remove-machine" uses.
type removeAPI interface {
	RemoveMachines(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error)
}

var _ removeAPI = (*client.Client)(nil)

type removeOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (removeAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	// WaitClient is the client --wait watches the removal with.
	WaitClient func(ctx context.Context) (cmdutil.WaitAPI, error)

	Model        string
	Machines     []string
	KeepInstance bool
	cmdutil.RemoveFlags
	Wait cmdutil.WaitFlags
}

// NewCmdRemove returns "juju remove-machine <machine> ...": remove machines and containers.
func NewCmdRemove(f *cmdutil.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[removeAPI](f),
		WaitClient:   cmdutil.WaitClientFunc(f),
	}
	cmd := &cobra.Command{
		Use:   "remove-machine [options] <machine number> ...",
		Short: "Remove machines from the model",
		Long: `Remove machines or containers, by the ids "juju status" shows (3, 0/lxd/1). The
cloud instance is stopped unless --keep-instance is given. Machines the model needs
cannot be removed.

A machine that runs units or containers is only removed with --force, which removes them
too without giving them the chance to stop cleanly: after a grace period of one minute,
or at once with --no-wait, the controller does the agents' work itself.

Asks for confirmation after showing what would be removed; --no-prompt skips the question
and --dry-run only shows the plan. A plan that requires --force is refused without asking
when --force is not given. When stdin is not a terminal nothing is asked: without
--no-prompt or --dry-run the command fails (exit 1) before sending anything.

With --no-prompt the plan lines ("will remove machine 5") go to stdout for what was
removed. The command returns once the machines are dying; --wait waits until they are
gone, with progress on stderr, for at most --timeout (default 10m; exit 1 after it,
saying what each machine still waits for). --timeout is only valid with --wait.`,
		Example: `  juju remove-machine 5
  juju remove-machine 5 --no-prompt --wait
  juju remove-machine 6 --force
  juju remove-machine 6 --force --no-wait
  juju remove-machine 7 --keep-instance`,
		Annotations: map[string]string{cmdutil.SeeAlso: "machines, add-machine, remove-unit, show-machine, status"},
		Args:        cmdutil.AtLeastOneArg("no machines specified", names.IsValidMachine, "invalid machine id %q"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.RemoveFlags.Validate(cmd, &opts.Wait); err != nil {
				return err
			}
			opts.Machines = args
			if runF != nil {
				return runF(opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddRemoveFlags(cmd, &opts.RemoveFlags, "machine")
	cmdutil.AddWaitFlags(cmd, &opts.Wait, "the machines are gone")
	cmd.Flags().BoolVar(&opts.KeepInstance, "keep-instance", false, "Do not stop the running cloud instance")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func removeRun(ctx context.Context, opts *removeOptions) error {
	if err := opts.RemoveFlags.CheckPrompt(opts.IO, "machine"); err != nil {
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
		Noun:    "machine",
		Request: &jujupb.RemoveRequest{Model: model.UUID, Names: opts.Machines, KeepInstance: opts.KeepInstance},
		Wait:    cmdutil.RemovalWait(opts.IO, opts.WaitClient, model.UUID, "machine", opts.Wait),
		Remove:  c.RemoveMachines,
		Plan: func(w io.Writer, r *jujupb.RemoveResult) {
			writeMachinePlan(w, r, opts.KeepInstance)
		},
		// Juju does not name the machine here; its error does.
		Failure: func(r *jujupb.RemoveResult) string { return "removing machine failed: " + r.GetError() },
	}
	return cmdutil.RunRemoval(ctx, r)
}

// writeMachinePlan writes "will remove machine 5", the units that go with it, then each of
// its containers in the same words.
func writeMachinePlan(w io.Writer, r *jujupb.RemoveResult, keepInstance bool) {
	suffix := ""
	if keepInstance {
		suffix = " (but retaining cloud instance)"
	}
	cmdutil.WriteRemovePlan(w, "machine "+r.GetName()+suffix, r.GetUnits())
	for _, id := range r.GetMachines() {
		cmdutil.WriteRemovePlan(w, "machine "+id+suffix, nil)
	}
}
