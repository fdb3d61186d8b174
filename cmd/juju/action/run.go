package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/actions"
	"github.com/jujuclone/juju/output"
)

// runAPI is the part of the client "juju run" uses.
type runAPI interface {
	ApplicationActions(ctx context.Context, model, app string) ([]*jujupb.ActionSpec, error)
	Enqueue(ctx context.Context, req *jujupb.EnqueueRequest) (*jujupb.Operation, error)
	taskWatcher
}

var _ runAPI = (*client.Client)(nil)

type runOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (runAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	// Units are unit names or <application>/leader, all of one application.
	Units  []string
	Action string
	Args   []actions.Arg
	// ParamsFile is --params: a YAML file of params ("-" reads stdin), under the Args.
	ParamsFile string
	StringArgs bool
	Background bool
	// Wait is how long to wait for the results; negative waits as long as it takes.
	Wait   time.Duration
	Format output.Format
	Output string
	UTC    bool
	// Color and NoColor are --color and --no-color (useColor).
	Color   bool
	NoColor bool
}

// unitOrLeaderRe is a unit name or <application>/leader; group 1 is the application.
var unitOrLeaderRe = regexp.MustCompile(`^([a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*)/(?:0|[1-9][0-9]*|leader)$`)

// NewCmdRun returns "juju run <unit>... <action> [key=value ...]": run a charm's action on
// units and wait for the results.
func NewCmdRun(f *cmdutil.Factory, runF func(*runOptions) error) *cobra.Command {
	opts := &runOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[runAPI](f),
	}
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "run [options] <unit> [<unit> ...] <action-name> [<key>=<value> [<key>[.<key> ...]=<value>]]",
		Short: "Run an action on a specified unit",
		Long: `Run a charm action on one or more units of an application and wait for its results.
Each unit runs the action as a task; the tasks together are an operation. "juju
show-task <id>" and "juju show-operation <id>" show them later.

A unit is named as mysql/0, or as mysql/leader for the application's leader.

Params are checked against the action's schema ("juju actions <app> --schema") before
anything is queued. They come from a YAML file given with --params ("-" reads stdin), and
from key=value arguments, which override the file; a dotted key nests (file.kind=xz gives
{file: {kind: xz}}). Values are read as YAML (1000 is a number, y is true) unless
--string-args keeps them as strings.

The command waits up to --wait (1 minute by default; a negative value waits as long as
it takes) and prints each unit's results: for one unit, the values the action set, its
failure message and its output; --format yaml or json prints everything, keyed by unit,
including its log and timing. A task whose process exits non-zero fails the command
(exit 1) after its results are printed. Past --wait the command fails with "timed out";
the tasks go on. Ctrl-C stops the waiting too, not the tasks. --background only queues
the operation and says how to follow it.

When stdout is a terminal the results are coloured (the values green, or red for a failed
task; yaml and json throughout), and so are the ids on stderr. --color colours them wherever
they go (a pipe, a file); --no-color, NO_COLOR or TERM=dumb turn colour off, and --no-color
wins over --color.`,
		Example: `  juju run mysql/3 backup
  juju run mysql/leader backup --wait 2m
  juju run mysql/3 backup --format yaml
  juju run mysql/3 backup --background
  juju run mysql/3 backup out=out.tar.bz2 file.kind=xz file.quality=high
  juju run mysql/3 backup --params p.yml file.kind=xz
  juju run sleeper/0 pause --string-args time=1000
  juju run mysql/3 backup --format yaml --color | less -R`,
		Annotations: map[string]string{cmdutil.SeeAlso: "actions, show-action, operations, show-operation, show-task, exec"},
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Wait, err = resolveWait(wait, opts.Background, defaultRunWait); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if err := parseRunArgs(opts, args); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, Plain, output.JSON, Plain, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Background, "background", false, "Run the task in the background")
	cmd.Flags().DurationVar(&wait, "wait", 0, "Maximum wait time for a task to complete")
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Show times in UTC")
	cmd.Flags().StringVar(&opts.ParamsFile, "params", "", "Path to yaml-formatted params file")
	cmd.Flags().BoolVar(&opts.StringArgs, "string-args", false, "Use raw string values of CLI args")
	addColorFlags(cmd, &opts.Color, &opts.NoColor)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// parseRunArgs reads the units, the action and its key=value arguments, as Juju does: units
// first, then the action's name, then the arguments.
func parseRunArgs(opts *runOptions, args []string) error {
	apps := map[string]bool{}
	opts.Units, opts.Action, opts.Args = nil, "", nil
	for _, a := range args {
		if m := unitOrLeaderRe.FindStringSubmatch(a); m != nil {
			apps[m[1]] = true
			opts.Units = append(opts.Units, a)
			continue
		}
		if actions.NameRule.MatchString(a) {
			opts.Action = a
			break
		}
		return fmt.Errorf("invalid unit or action name %q", a)
	}
	switch {
	case len(opts.Units) == 0:
		return errors.New("no unit specified")
	case opts.Action == "":
		return errors.New("no action specified")
	case len(apps) > 1:
		return errors.New("all units must be of the same application")
	}
	for _, a := range args[len(opts.Units)+1:] {
		arg, err := actions.ParseArg(a)
		if err != nil {
			return err
		}
		opts.Args = append(opts.Args, arg)
	}
	return nil
}

func runRun(ctx context.Context, opts *runOptions) error {
	var file []byte
	if opts.ParamsFile != "" {
		var err error
		if file, err = readParamsFile(opts.ParamsFile, opts.IO.In); err != nil {
			return err
		}
	}
	params, err := actions.BuildParams(file, opts.Args, opts.StringArgs)
	if err != nil {
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
	app, _, _ := strings.Cut(opts.Units[0], "/")
	specs, err := c.ApplicationActions(ctx, model.UUID, app)
	if err != nil {
		return notFound(err)
	}
	spec := findAction(specs, opts.Action)
	if spec == nil {
		// Juju's words, with the code Juju appends to not-found errors ("(not found)"), which
		// jubilant looks for.
		return fmt.Errorf("action %q not defined on unit %q (not found)", opts.Action, opts.Units[0])
	}
	// The params are checked against the action's schema by the controller, before it queues
	// anything: its refusal is the error shown (core/actions/paramschema says why not here).
	paramsJSON, err := jsonObject(params)
	if err != nil {
		return err
	}
	op, err := c.Enqueue(ctx, &jujupb.EnqueueRequest{
		Model: model.UUID, Receivers: opts.Units, Action: opts.Action, ParamsJson: paramsJSON,
	})
	if err != nil {
		return notFound(err)
	}
	e := &enqueued{IO: opts.IO, API: c, Model: model.UUID, Format: opts.Format, Output: opts.Output,
		UTC: opts.UTC, Wait: opts.Wait, Background: opts.Background,
		Color: useColor(opts.IO, opts.Color, opts.NoColor, opts.Output)}
	return e.report(ctx, op)
}

// readParamsFile reads --params: a file, or stdin for "-".
func readParamsFile(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading params from stdin: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading params file: %w", err)
	}
	return data, nil
}

// notFound appends Juju's error code to a not-found error from the controller, as Juju prints
// it ("... not found (not found)"): scripts and jubilant tell a missing unit or action by it.
func notFound(err error) error {
	if errors.Is(err, apierr.NotFound) && !strings.HasSuffix(err.Error(), "(not found)") {
		return fmt.Errorf("%w (not found)", err)
	}
	return err
}

// jsonObject encodes params for the request.
func jsonObject(params map[string]any) ([]byte, error) {
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("params are not JSON: %w", err)
	}
	return data, nil
}
