package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// execAPI is the part of the client "juju exec" uses.
type execAPI interface {
	Enqueue(ctx context.Context, req *jujupb.EnqueueRequest) (*jujupb.Operation, error)
	// FullStatus lists the model's machines for --all.
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
	taskWatcher
}

var _ execAPI = (*client.Client)(nil)

type execOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (execAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	// Command is the shell command: the one argument as given, or the arguments quoted for
	// the shell and joined.
	Command      string
	All          bool
	Machines     []string
	Applications []string
	Units        []string
	Background   bool
	// Wait bounds both the waiting and the command's run time; negative waits as long as it
	// takes (the command then gets the controller's default time).
	Wait   time.Duration
	Format output.Format
	Output string
	UTC    bool
	// Parallel and ExecutionGroup are Juju's --parallel (true by default) and
	// --execution-group: which of the machine's execution locks each task waits for.
	Parallel       bool
	ExecutionGroup string
	// Operator is --operator, for Kubernetes models only: refused here.
	Operator bool
	// Color and NoColor are --color and --no-color (useColor).
	Color   bool
	NoColor bool
}

// errOperator is Juju's refusal of --operator on a machine model; this controller has no other.
var errOperator = errors.New("only k8s models support the --operator flag")

// NewCmdExec returns "juju exec --unit|--machine|--application|--all ... -- <command>": run a
// shell command on units (in their hook context) or machines.
func NewCmdExec(f *cmdutil.Factory, runF func(*execOptions) error) *cobra.Command {
	opts := &execOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[execAPI](f),
	}
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "exec [options] <commands>",
		Short: "Run the commands on the remote targets specified",
		Long: `Run a shell command on units, every unit of applications, or machines, and wait for
the results. On a unit the command runs in the unit's hook context, with the hook tools
(config-get, relation-get ...) available; on a machine it runs as a plain shell command. Each target runs it as a task, which "juju show-task" and "juju operations
--actions juju-exec" show later.

Targets: --unit (a unit, or <application>/leader), --application (each of its units),
--machine, each repeatable and taking comma-separated lists, or --all (every machine of
the model, alone). Put the command after "--" when it has options of its own.

The command waits up to --wait (5 minutes by default), which also bounds how long the
command may run. With one target the plain format prints its output as it is; with
several, each target's output under its name. --format yaml or json prints each target's
return code, stdout, stderr and timing, keyed by unit name or machine id. A non-zero exit
fails exec (exit 1) after the results are printed; past --wait it fails with "timed out".

Commands run in parallel by default (--parallel): they take no lock, and run on a machine
beside its other commands, on a unit beside the tasks of the machine's other units (a unit
runs one thing at a time, between its hooks, whatever the flags say). With --parallel=false
each command waits for its machine's execution lock and holds it while it runs, so that such
commands run one after another, in the order they were queued. --execution-group <name> does
the same with a lock of the group's own: the commands of one group run one after another,
beside other groups and parallel commands. As in Juju, commands on units take the lock the
units' non-parallel actions take, commands on the machine itself another one. Unlike in Juju,
hooks here run without the machine's lock, so a command waits for its own unit's hooks only.
With --all the flags apply too.

--operator runs commands in a Kubernetes model's operator pod; this controller has machine
models only, so it is refused ("only k8s models support the --operator flag").

With --format yaml or json the results are coloured when stdout is a terminal; --color
colours them wherever they go, --no-color, NO_COLOR or TERM=dumb turn colour off (--no-color
wins over --color). The plain format, the commands' own output, is never coloured.`,
		Example: `  juju exec --all -- hostname -f
  juju exec --unit mysql/0 -- ls -la /var/lib/mysql
  juju exec --application mysql --format json -- config-get port
  juju exec --machine 0,1 --wait 30s uptime
  juju exec --application mysql --parallel=false -- systemctl restart mysql
  juju exec --all --execution-group upgrades -- apt-get -y upgrade`,
		Annotations: map[string]string{cmdutil.SeeAlso: "run, show-task, operations"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseExecArgs(opts, wait, args); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return execRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, Plain, output.JSON, Plain, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	fl := cmd.Flags()
	fl.BoolVar(&opts.All, "all", false, "Run the commands on all the machines")
	fl.Var(&stringsValue{&opts.Machines}, "machine", "One or more machine ids")
	fl.VarP(&stringsValue{&opts.Applications}, "application", "a", "One or more application names")
	fl.Var(&stringsValue{&opts.Applications}, "app", "One or more application names (same as --application)")
	fl.VarP(&stringsValue{&opts.Units}, "unit", "u", "One or more unit ids")
	fl.BoolVar(&opts.Background, "background", false, "Run the task in the background")
	fl.DurationVar(&wait, "wait", 0, "Maximum wait time for a task to complete")
	fl.BoolVar(&opts.UTC, "utc", false, "Show times in UTC")
	fl.BoolVar(&opts.Operator, "operator", false, "Run the commands on the operator (k8s-only)")
	fl.BoolVar(&opts.Parallel, "parallel", true, "Run the commands in parallel without first acquiring a lock")
	fl.StringVar(&opts.ExecutionGroup, "execution-group", "", "Commands in the same execution group are run sequentially")
	addColorFlags(cmd, &opts.Color, &opts.NoColor)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// parseExecArgs checks the targets and builds the command, in Juju's order and words.
func parseExecArgs(opts *execOptions, wait time.Duration, args []string) error {
	var err error
	if opts.Wait, err = resolveWait(wait, opts.Background, defaultExecWait); err != nil {
		return err
	}
	switch len(args) {
	case 0:
		return errors.New("no commands specified")
	case 1:
		// One argument is the command line as the user quoted it ("sudo whatever").
		opts.Command = args[0]
	default:
		opts.Command = shellJoin(args)
	}
	if opts.All {
		switch {
		case len(opts.Machines) > 0:
			return errors.New("You cannot specify --all and individual machines")
		case len(opts.Applications) > 0:
			return errors.New("You cannot specify --all and individual applications")
		case len(opts.Units) > 0:
			return errors.New("You cannot specify --all and individual units")
		}
	} else if len(opts.Machines)+len(opts.Applications)+len(opts.Units) == 0 {
		return errors.New("You must specify a target, either through --all, --machine, --application or --unit")
	}
	var bad []string
	for _, m := range opts.Machines {
		if !names.IsValidMachine(m) {
			bad = append(bad, fmt.Sprintf("%q is not a valid machine id", m))
		}
	}
	for _, a := range opts.Applications {
		if !names.IsValidApplication(a) {
			bad = append(bad, fmt.Sprintf("%q is not a valid application name", a))
		}
	}
	for _, u := range opts.Units {
		if !unitOrLeaderRe.MatchString(u) {
			bad = append(bad, fmt.Sprintf("%q is not a valid unit name", u))
		}
	}
	if len(bad) > 0 {
		// Juju's words, on one line (Juju puts each target on a line of its own).
		return fmt.Errorf("The following exec targets are not valid: %s", strings.Join(bad, "; "))
	}
	return nil
}

func execRun(ctx context.Context, opts *execOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	if opts.Operator {
		// Juju refuses it once it knows the model's type; every model here is a machine model.
		return errOperator
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	receivers := slices.Concat(opts.Units, opts.Applications, opts.Machines)
	if opts.All {
		st, err := c.FullStatus(ctx, model.UUID, nil)
		if err != nil {
			return fmt.Errorf("listing the model's machines: %w", err)
		}
		for _, m := range st.GetMachines() {
			receivers = append(receivers, m.GetId())
		}
		if len(receivers) == 0 {
			return errors.New("the model has no machines to run the commands on")
		}
		slices.SortFunc(receivers, names.NaturalCompare)
	}
	// Sent whatever they are, as Juju does (also with --all, which Juju's CLI leaves at the
	// defaults).
	req := &jujupb.EnqueueRequest{Model: model.UUID, Receivers: receivers, Command: opts.Command,
		Parallel: proto.Bool(opts.Parallel), ExecutionGroup: proto.String(opts.ExecutionGroup)}
	if opts.Wait > 0 {
		req.ExecTimeoutSeconds = int64(math.Ceil(opts.Wait.Seconds()))
	}
	op, err := c.Enqueue(ctx, req)
	if err != nil {
		return notFound(err)
	}
	e := &enqueued{IO: opts.IO, API: c, Model: model.UUID, Format: opts.Format, Output: opts.Output,
		UTC: opts.UTC, Wait: opts.Wait, Background: opts.Background, HideProgress: true,
		Color: useColor(opts.IO, opts.Color, opts.NoColor, opts.Output)}
	if e.Format == Plain {
		e.Format = execPlain
	}
	return e.report(ctx, op)
}

// execPlain selects execResults' rendering of the plain format: the commands' output.
const execPlain output.Format = "exec-plain"

// writeExecPlain writes exec's plain format: with one target its stdout and stderr as they are,
// with several each target's under "<name>:" and a blank line, in natural order.
func (r taskResults) writeExecPlain(w io.Writer) error {
	outputs := map[string]string{}
	for name, t := range r {
		var s string
		if t.Results != nil {
			if out, ok := t.Results["stdout"].(string); ok {
				s += withNewline(out)
			}
			if errOut, ok := t.Results["stderr"].(string); ok {
				s += withNewline(errOut)
			}
		}
		outputs[name] = s
	}
	var b strings.Builder
	for _, name := range sortedKeys(outputs) {
		if len(outputs) > 1 {
			b.WriteString(name + ":\n")
		}
		b.WriteString(outputs[name])
		if len(outputs) > 1 {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// withNewline ends a non-empty s with a newline.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// shellJoin joins a command's arguments into one shell command line, double-quoting those the
// shell would split or expand (as Juju does).
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		needsQuotes := a == ""
		var b strings.Builder
		for _, r := range a {
			switch {
			case r == '"' || r == '$' || r == '\\' || r == '`':
				needsQuotes = true
				b.WriteByte('\\')
			case strings.ContainsRune(" \t\n\r'&|;<>()*?[]{}~#!", r):
				needsQuotes = true
			}
			b.WriteRune(r)
		}
		if needsQuotes {
			quoted[i] = `"` + b.String() + `"`
		} else {
			quoted[i] = b.String()
		}
	}
	return strings.Join(quoted, " ")
}

// stringsValue is a repeatable flag taking comma-separated values, as Juju's target flags.
type stringsValue struct{ values *[]string }

func (v *stringsValue) String() string { return strings.Join(*v.values, ",") }
func (v *stringsValue) Type() string   { return "strings" }

func (v *stringsValue) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*v.values = append(*v.values, part)
		}
	}
	return nil
}
