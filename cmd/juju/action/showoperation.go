package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// showOperationAPI is the part of the client "juju show-operation" uses.
type showOperationAPI interface {
	GetOperation(ctx context.Context, model, id string) (*jujupb.Operation, error)
	taskWatcher
}

var _ showOperationAPI = (*client.Client)(nil)

type showOperationOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (showOperationAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	ID    string
	// Wait is how long to wait for the operation to finish: negative not at all, 0 as long as
	// it takes (--watch).
	Wait   time.Duration
	Format output.Format
	Output string
	UTC    bool
}

// NewCmdShowOperation returns "juju show-operation <id>": an operation with its tasks,
// optionally once it has finished.
func NewCmdShowOperation(f *cmdutil.Factory, runF func(*showOperationOptions) error) *cobra.Command {
	opts := &showOperationOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[showOperationAPI](f),
	}
	var watch bool
	cmd := &cobra.Command{
		Use:   "show-operation [options] <operation-id>",
		Short: "Show results of an operation",
		Long: `Show an operation ("juju run" or "juju exec" on one or more targets): its summary and
status, the action and params it runs, and each task with its receiver, status, results,
log and timing.

By default the operation is shown as it is now. --wait <duration> waits up to that long
for every task to finish; --watch waits as long as it takes. A wait that runs out fails
with "timeout reached".`,
		Example: `  juju show-operation 1
  juju show-operation 1 --wait 2m
  juju show-operation 1 --watch --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "run, exec, operations, show-task"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				if opts.Wait != noWait {
					return cmdutil.FlagErrorf("specify either --watch or --wait but not both")
				}
				opts.Wait = 0
			}
			id, err := oneID(args, "no operation ID specified", "")
			if err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(opts)
			}
			return showOperationRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().DurationVar(&opts.Wait, "wait", noWait, "Wait for results")
	cmd.Flags().BoolVar(&watch, "watch", false, "Wait indefinitely for results")
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Show times in UTC")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func showOperationRun(ctx context.Context, opts *showOperationOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	op, err := c.GetOperation(ctx, model.UUID, opts.ID)
	if err != nil {
		return err
	}
	if opts.Wait >= 0 && !finished(op.GetStatus()) {
		if err := waitForOperation(ctx, c, model.UUID, op, opts.Wait); err != nil {
			return err
		}
		if op, err = c.GetOperation(ctx, model.UUID, opts.ID); err != nil {
			return err
		}
	}
	v, err := newOperationView(op, opts.UTC)
	if err != nil {
		return err
	}
	return output.WriteFile(opts.Output, opts.Format, v, opts.IO)
}

// waitForOperation waits until each task of op has finished, for up to wait (0: no limit).
func waitForOperation(ctx context.Context, c taskWatcher, model string, op *jujupb.Operation, wait time.Duration) error {
	ids := operationTaskIDs(op)
	if len(ids) == 0 {
		return nil
	}
	watchCtx, cancel := ctx, context.CancelFunc(func() {})
	if wait > 0 {
		watchCtx, cancel = context.WithTimeout(ctx, wait)
	}
	defer cancel()
	done := map[string]bool{}
	err := c.WatchTasks(watchCtx, model, ids, func(t *jujupb.Task) error {
		if finished(t.GetStatus()) {
			done[t.GetId()] = true
		}
		if len(done) == len(ids) {
			return errAllDone
		}
		return nil
	})
	switch {
	case errors.Is(err, errAllDone):
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("stopped waiting for operation %s", op.GetId())
	case errors.Is(err, context.DeadlineExceeded) || watchCtx.Err() != nil:
		return errors.New("timeout reached")
	case err != nil:
		return fmt.Errorf("waiting for operation %s: %w", op.GetId(), err)
	}
	return nil // the stream ends once every task has finished
}
