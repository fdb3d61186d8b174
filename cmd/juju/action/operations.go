package action

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// operationsAPI is the part of the client "juju operations" uses.
type operationsAPI interface {
	ListOperations(ctx context.Context, req *jujupb.ListOperationsRequest) (*jujupb.ListOperationsResponse, error)
}

var _ operationsAPI = (*client.Client)(nil)

type operationsOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (operationsAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model        string
	Applications []string
	Units        []string
	Machines     []string
	Actions      []string
	Statuses     []string
	Offset       uint
	Limit        uint
	Format       output.Format
	Output       string
	UTC          bool
}

// taskStatuses are the statuses --status accepts, in Juju's order.
var taskStatuses = []string{"pending", "running", "completed", "failed", "cancelled", "aborting", "aborted", "error"}

// defaultOperationsLimit is the batch size the paging hint suggests when --limit is not given.
const defaultOperationsLimit = 50

// NewCmdOperations returns "juju operations": the model's operations, filtered.
func NewCmdOperations(f *cmdutil.Factory, runF func(*operationsOptions) error) *cobra.Command {
	opts := &operationsOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[operationsAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "operations [options]",
		Aliases: []string{"list-operations"},
		Short:   "Lists pending, running, or completed operations for specified application, units, machines, or all",
		Long: `List the model's operations (each "juju run" or "juju exec"), with their status, times,
task ids and summary. The filters narrow the list: --apps keeps the operations with a task
on a unit of those applications, --units on those units, --machines on those machines
(exec), --actions those running those actions ("juju-exec" for exec), --status those in
those statuses; each takes a comma-separated list. --offset and --limit page through long
lists; the plain format says when more operations match.

--format yaml or json prints each operation, keyed by id, with its action and params and
each task's receiver, status, results, log and timing.`,
		Example: `  juju operations
  juju operations --format yaml
  juju operations --actions juju-exec
  juju operations --apps mysql,wordpress --status running,pending
  juju operations --units mysql/0 --actions backup --limit 10`,
		Annotations: map[string]string{cmdutil.SeeAlso: "run, exec, show-operation, show-task"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOperationFilters(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return operationsRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, Plain, output.JSON, Plain, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	fl := cmd.Flags()
	fl.BoolVar(&opts.UTC, "utc", false, "Show times in UTC")
	fl.Var(&stringsValue{&opts.Applications}, "applications", "Comma separated list of applications to filter on")
	fl.Var(&stringsValue{&opts.Applications}, "apps", "Comma separated list of applications to filter on")
	fl.Var(&stringsValue{&opts.Units}, "units", "Comma separated list of units to filter on")
	fl.Var(&stringsValue{&opts.Machines}, "machines", "Comma separated list of machines to filter on")
	fl.Var(&stringsValue{&opts.Actions}, "actions", "Comma separated list of actions names to filter on")
	fl.Var(&stringsValue{&opts.Statuses}, "status", "Comma separated list of operation status values to filter on")
	fl.UintVar(&opts.Limit, "limit", 0, "The maximum number of operations to return")
	fl.UintVar(&opts.Offset, "offset", 0, "Return operations from offset onwards")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// checkOperationFilters refuses bad names and statuses, all of them at once, in Juju's words.
func checkOperationFilters(opts *operationsOptions) error {
	var bad []string
	for _, a := range opts.Applications {
		if !names.IsValidApplication(a) {
			bad = append(bad, fmt.Sprintf("invalid application name %q", a))
		}
	}
	for _, u := range opts.Units {
		if !names.IsValidUnit(u) {
			bad = append(bad, fmt.Sprintf("invalid unit name %q", u))
		}
	}
	for _, m := range opts.Machines {
		if !names.IsValidMachine(m) {
			bad = append(bad, fmt.Sprintf("invalid machine id %q", m))
		}
	}
	for _, s := range opts.Statuses {
		if !slices.Contains(taskStatuses, s) {
			bad = append(bad, fmt.Sprintf("%q is not a valid task status, want one of %v", s, taskStatuses))
		}
	}
	if len(bad) > 0 {
		// Juju's words, on one line (Juju puts each on a line of its own).
		return cmdutil.FlagErrorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func operationsRun(ctx context.Context, opts *operationsOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	resp, err := c.ListOperations(ctx, &jujupb.ListOperationsRequest{
		Model: model.UUID, Applications: opts.Applications, Units: opts.Units, Machines: opts.Machines,
		Actions: opts.Actions, Statuses: opts.Statuses, Offset: int32(opts.Offset), Limit: int32(opts.Limit),
	})
	if err != nil {
		return err
	}
	ops := resp.GetOperations()
	if len(ops) == 0 {
		opts.IO.Infof("no matching operations")
		return nil
	}
	if opts.Format == Plain {
		list := &operationList{ops: slices.Clone(ops), utc: opts.UTC}
		slices.SortFunc(list.ops, func(a, b *jujupb.Operation) int { return compareIDs(a.GetId(), b.GetId()) })
		if opts.Offset > 0 || resp.GetTruncated() {
			list.header = fmt.Sprintf("Displaying operation results %d to %d.\n", opts.Offset+1, int(opts.Offset)+len(ops))
			if resp.GetTruncated() {
				limit := opts.Limit
				if limit == 0 {
					limit = defaultOperationsLimit
				}
				list.header += fmt.Sprintf("Run the command again with --offset=%d --limit=%d to see the next batch.\n\n",
					opts.Offset+limit, limit)
			}
		}
		return output.WriteFile(opts.Output, opts.Format, list, opts.IO)
	}
	view := map[string]*operationView{}
	for _, op := range ops {
		v, err := newOperationView(op, opts.UTC)
		if err != nil {
			return err
		}
		view[op.GetId()] = v
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// compareIDs orders ids by number (Juju's order; an id that is not a number, from old
// models, sorts first).
func compareIDs(a, b string) int {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	switch {
	case errA != nil && errB == nil:
		return -1
	case errA == nil && errB != nil:
		return 1
	case errA == nil && errB == nil:
		return na - nb
	}
	return strings.Compare(a, b)
}

// operationList is the plain format of operations: a table, after the paging hint.
type operationList struct {
	ops    []*jujupb.Operation
	utc    bool
	header string
}

// maxTaskIDs is how many task ids a table row lists before "...".
const maxTaskIDs = 5

func (l *operationList) WriteText(w io.Writer, f output.Format) error {
	if f != Plain {
		return fmt.Errorf("format %q not supported", f)
	}
	t := output.Table{Header: []string{"ID", "Status", "Started", "Finished", "Task IDs", "Summary"}, RightAlign: []int{0}}
	for _, op := range l.ops {
		ids := operationTaskIDs(op)
		tasks := strings.Join(ids[:min(len(ids), maxTaskIDs)], ",")
		if len(ids) > maxTaskIDs {
			tasks += "..."
		}
		t.Rows = append(t.Rows, []string{op.GetId(), op.GetStatus(), formatTimePlain(op.GetStarted(), l.utc),
			formatTimePlain(op.GetCompleted(), l.utc), tasks, op.GetSummary()})
	}
	if _, err := io.WriteString(w, l.header); err != nil {
		return err
	}
	return output.WriteTables(w, t)
}

// operationView is one operation of operations and show-operation: the action (when every
// task runs the same one with the same params) and each task by id.
type operationView struct {
	Summary string                   `json:"summary" yaml:"summary"`
	Status  string                   `json:"status" yaml:"status"`
	Action  *actionSummary           `json:"action,omitempty" yaml:"action,omitempty"`
	Timing  operationTiming          `json:"timing,omitempty" yaml:"timing,omitempty"`
	Tasks   map[string]operationTask `json:"tasks,omitempty" yaml:"tasks,omitempty"`
}

// operationTiming is when an operation or one of its tasks was queued, started and finished.
type operationTiming struct {
	Enqueued  string `json:"enqueued,omitempty" yaml:"enqueued,omitempty"`
	Started   string `json:"started,omitempty" yaml:"started,omitempty"`
	Completed string `json:"completed,omitempty" yaml:"completed,omitempty"`
}

// actionSummary is the action an operation runs and its params.
type actionSummary struct {
	Name       string         `json:"name" yaml:"name"`
	Parameters map[string]any `json:"parameters" yaml:"parameters"`
}

// operationTask is one task of an operation; Name is set only when the tasks run different
// actions.
type operationTask struct {
	Name    string          `json:"name,omitempty" yaml:"name,omitempty"`
	Host    string          `json:"host" yaml:"host"`
	Status  string          `json:"status" yaml:"status"`
	Timing  operationTiming `json:"timing,omitempty" yaml:"timing,omitempty"`
	Log     []string        `json:"log,omitempty" yaml:"log,omitempty"`
	Message string          `json:"message,omitempty" yaml:"message,omitempty"`
	Results map[string]any  `json:"results,omitempty" yaml:"results,omitempty"`
}

func newOperationTiming(enqueued, started, completed int64, utc bool) operationTiming {
	return operationTiming{
		Enqueued:  formatTime(enqueued, utc),
		Started:   formatTime(started, utc),
		Completed: formatTime(completed, utc),
	}
}

func newOperationView(op *jujupb.Operation, utc bool) (*operationView, error) {
	v := &operationView{
		Summary: op.GetSummary(),
		Status:  op.GetStatus(),
		Timing:  newOperationTiming(op.GetEnqueued(), op.GetStarted(), op.GetCompleted(), utc),
		Tasks:   map[string]operationTask{},
	}
	var first *actionSummary
	same := true
	for _, t := range op.GetTasks() {
		results, err := decodeObject(t.GetResultsJson())
		if err != nil {
			return nil, fmt.Errorf("task %s: results: %w", t.GetId(), err)
		}
		params, err := decodeObject(t.GetParamsJson())
		if err != nil {
			return nil, fmt.Errorf("task %s: params: %w", t.GetId(), err)
		}
		task := operationTask{
			Host:    t.GetReceiver(),
			Status:  t.GetStatus(),
			Timing:  newOperationTiming(t.GetEnqueued(), t.GetStarted(), t.GetCompleted(), utc),
			Message: t.GetMessage(),
			Results: results,
		}
		for _, l := range t.GetLog() {
			task.Log = append(task.Log, formatTime(l.GetTime(), utc)+" "+l.GetMessage())
		}
		v.Tasks[t.GetId()] = task
		if params == nil {
			params = map[string]any{}
		}
		if first == nil {
			first = &actionSummary{Name: t.GetAction(), Parameters: params}
		} else if same {
			same = t.GetAction() == first.Name && reflect.DeepEqual(params, first.Parameters)
		}
	}
	if first != nil && same && first.Name != "" {
		v.Action = first
		return v, nil
	}
	for _, t := range op.GetTasks() {
		task := v.Tasks[t.GetId()]
		task.Name = t.GetAction()
		v.Tasks[t.GetId()] = task
	}
	return v, nil
}

// operationTaskIDs lists an operation's task ids.
func operationTaskIDs(op *jujupb.Operation) []string {
	var ids []string
	for _, t := range op.GetTasks() {
		ids = append(ids, t.GetId())
	}
	return ids
}
