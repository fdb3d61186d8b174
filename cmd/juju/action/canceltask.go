package action

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// cancelTaskAPI is the part of the client "juju cancel-task" uses.
type cancelTaskAPI interface {
	CancelTasks(ctx context.Context, model string, ids []string) ([]*jujupb.Task, error)
}

var _ cancelTaskAPI = (*client.Client)(nil)

type cancelTaskOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (cancelTaskAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model  string
	IDs    []string
	Format output.Format
	Output string
}

// NewCmdCancelTask returns "juju cancel-task <id>...": cancel pending tasks.
func NewCmdCancelTask(f *cmdutil.Factory, runF func(*cancelTaskOptions) error) *cobra.Command {
	opts := &cancelTaskOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[cancelTaskAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "cancel-task [options] (<task-id>|<task-id-prefix>) [...]",
		Short: "Cancel pending or running tasks",
		Long: `Cancel tasks that have not started yet: they will not run. Each task named is listed
with its action, unit, status after the request and when it completed; a task that was
already running or finished keeps its status.`,
		Example: `  juju cancel-task 2
  juju cancel-task 2 4 6 --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "show-task, operations"},
		Args:        cmdutil.AtLeastOneArg("no task IDs specified", taskIDRe.MatchString, "task ID %q not valid"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if runF != nil {
				return runF(opts)
			}
			return cancelTaskRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// cancelledTasks is what cancel-task prints (Juju's shape).
type cancelledTasks struct {
	Actions []cancelledTask `json:"actions" yaml:"actions"`
}

// cancelledTask is one task after the cancel request, its fields in Juju's (alphabetical)
// order.
type cancelledTask struct {
	Action string `json:"action" yaml:"action"`
	// CompletedAt is when the task finished (UTC), or "n/a".
	CompletedAt string `json:"completed at" yaml:"completed at"`
	ID          string `json:"id" yaml:"id"`
	Status      string `json:"status" yaml:"status"`
	// Unit is the unit name, or for a machine receiver its tag (machine-0), as Juju shows it.
	Unit string `json:"unit" yaml:"unit"`
}

func cancelTaskRun(ctx context.Context, opts *cancelTaskOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	tasks, err := c.CancelTasks(ctx, model.UUID, opts.IDs)
	if err != nil {
		return err
	}
	if len(tasks) == 0 {
		return errors.New("no tasks found, no tasks have been canceled")
	}
	view := cancelledTasks{Actions: []cancelledTask{}}
	for _, t := range tasks {
		ct := cancelledTask{Action: t.GetAction(), ID: t.GetId(), Status: t.GetStatus(), CompletedAt: "n/a", Unit: t.GetReceiver()}
		if !isUnit(t.GetReceiver()) {
			ct.Unit = receiverTag(t.GetReceiver())
		}
		if t.GetCompleted() != 0 {
			ct.CompletedAt = time.Unix(0, t.GetCompleted()).UTC().Format(time.DateTime)
		}
		view.Actions = append(view.Actions, ct)
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}
