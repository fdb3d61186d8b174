package action

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// showTaskAPI is the part of the client "juju show-task" uses.
type showTaskAPI interface {
	GetTask(ctx context.Context, model, id string) (*jujupb.Task, error)
	taskWatcher
}

var _ showTaskAPI = (*client.Client)(nil)

type showTaskOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (showTaskAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	ID    string
	// Wait is how long to wait for the task to finish: negative not at all, 0 as long as it
	// takes (--watch).
	Wait   time.Duration
	Format output.Format
	Output string
	UTC    bool
}

// noWait is the default --wait of show-task and show-operation: look once and return.
const noWait = -1 * time.Second

// taskIDRe is a task (or operation) id: a number, or an action UUID of old models.
var taskIDRe = regexp.MustCompile(`^(?:0|[1-9][0-9]*|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// NewCmdShowTask returns "juju show-task <id>": a task's status, results, log and timing,
// optionally once it has finished.
func NewCmdShowTask(f *cmdutil.Factory, runF func(*showTaskOptions) error) *cobra.Command {
	opts := &showTaskOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[showTaskAPI](f),
	}
	var watch bool
	cmd := &cobra.Command{
		Use:   "show-task [options] <task ID>",
		Short: "Show results of a task by ID",
		Long: `Show a task (one unit's or machine's part of an operation started by "juju run" or
"juju exec"): its status, the results it set, its failure message, log and timing.

By default the task is shown as it is now, pending or not. --wait <duration> waits up to
that long for it to finish, printing the lines it logs as they come (on stderr); --watch
waits as long as it takes. A wait that runs out fails with "maximum wait time reached".

The plain format shows the values the task set and its output; --format yaml or json
shows everything.`,
		Example: `  juju show-task 2
  juju show-task 2 --wait 2m
  juju show-task 2 --watch --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "run, exec, cancel-task, operations, show-operation"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				if opts.Wait != noWait {
					return cmdutil.FlagErrorf("specify either --watch or --wait but not both")
				}
				opts.Wait = 0
			}
			id, err := oneID(args, "no task ID specified", "task ID %q not valid")
			if err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(opts)
			}
			return showTaskRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, Plain, output.JSON, Plain, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().DurationVar(&opts.Wait, "wait", noWait, "Maximum wait time for a task to complete")
	cmd.Flags().BoolVar(&watch, "watch", false, "Wait indefinitely for results")
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Show times in UTC")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// oneID reads the one id argument of show-task and show-operation; invalid (a format taking
// the id) is "" when any id is accepted.
func oneID(args []string, missing, invalid string) (string, error) {
	switch {
	case len(args) == 0:
		return "", cmdutil.FlagErrorf("%s", missing)
	case len(args) > 1:
		return "", cmdutil.UnrecognizedArgs(args[1:])
	case invalid != "" && !taskIDRe.MatchString(args[0]):
		return "", cmdutil.FlagErrorf(invalid, args[0])
	}
	return args[0], nil
}

func showTaskRun(ctx context.Context, opts *showTaskOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	task, err := c.GetTask(ctx, model.UUID, opts.ID)
	if err != nil {
		return err
	}
	if opts.Wait >= 0 && !finished(task.GetStatus()) {
		if task, err = followTask(ctx, c, model.UUID, task.GetId(), opts); err != nil {
			return err
		}
	}
	v, err := newTaskView(task, opts.UTC)
	if err != nil {
		return err
	}
	if opts.Format == Plain {
		return output.WriteFile(opts.Output, opts.Format, taskResults{opts.ID: v}, opts.IO)
	}
	return output.WriteFile(opts.Output, opts.Format, v, opts.IO)
}

// followTask waits for a task to finish, printing its log lines on stderr as they come.
func followTask(ctx context.Context, c taskWatcher, model, id string, opts *showTaskOptions) (*jujupb.Task, error) {
	watchCtx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Wait > 0 {
		watchCtx, cancel = context.WithTimeout(ctx, opts.Wait)
	}
	defer cancel()
	var last *jujupb.Task
	logged := 0
	err := c.WatchTasks(watchCtx, model, []string{id}, func(t *jujupb.Task) error {
		for _, l := range t.GetLog()[min(logged, len(t.GetLog())):] {
			fmt.Fprintf(opts.IO.ErrOut, "%s %s\n", formatClock(l.GetTime(), opts.UTC), l.GetMessage())
		}
		logged = max(logged, len(t.GetLog()))
		last = t
		if finished(t.GetStatus()) {
			return errAllDone
		}
		return nil
	})
	if logged > 0 {
		fmt.Fprintln(opts.IO.ErrOut) // the logs apart from the results
	}
	switch {
	case errors.Is(err, errAllDone):
		return last, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("stopped waiting for task %s", id)
	case errors.Is(err, context.DeadlineExceeded) || watchCtx.Err() != nil:
		return nil, errors.New("maximum wait time reached")
	case err != nil:
		return nil, fmt.Errorf("waiting for task %s: %w", id, err)
	}
	return nil, fmt.Errorf("waiting for task %s: the controller stopped reporting before it finished", id)
}
