package state

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/actions"
	"github.com/jujuclone/juju/core/actions/paramschema"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/names"
)

// Watch kinds of actions: KindTask is one task document (id: the task id), what WatchTasks
// follows; KindTasks is a receiver's queue (id: the unit name or machine id), what agents watch
// to learn of new, cancelled and aborting tasks.
const (
	KindTask  = "task"
	KindTasks = "tasks"
)

// Task statuses, as Juju names them.
const (
	TaskPending   = "pending"
	TaskRunning   = "running"
	TaskAborting  = "aborting"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	TaskAborted   = "aborted"
	TaskError     = "error"
)

// JujuExecAction is the action name Juju gives the tasks of juju exec.
const JujuExecAction = "juju-exec"

// DefaultExecTimeout is how long an exec command may run when the request names no timeout.
const DefaultExecTimeout = 5 * time.Minute

// Messages Juju records on tasks that never ran to their end.
const (
	msgCancelled      = "action cancelled via the API"
	msgUnitRemoved    = "unit removed"
	msgMachineRemoved = "machine removed"
)

// CleanupReceiverTasks is the kind of cleanup that cancels what a removed unit or machine left
// in its queue beyond what the removal's own transaction could take (L-G4).
const CleanupReceiverTasks = "receiver-tasks"

const (
	// MaxReceivers is how many tasks one operation may have: they are written in one bulk
	// transaction, all or nothing, as deploy writes as many units (limits.MaxUnitsPerCall).
	MaxReceivers = limits.MaxUnitsPerCall
	// removalTaskBatch is how many unfinished tasks a unit's removal cancels in its own
	// transaction; a cleanup takes the rest.
	removalTaskBatch = 16
	// maxEnqueueBytes keeps an enqueue transaction (each task written twice) well inside one
	// etcd request; maxTaskBytes keeps a task with its results and log inside one too.
	maxEnqueueBytes = 1 << 20
	maxTaskBytes    = 1 << 20
	// maxExecutionGroup bounds an execution group's name, which agents make a lock's name.
	maxExecutionGroup = 100
)

// TaskFinished reports whether a task status is final.
func TaskFinished(status string) bool {
	switch status {
	case TaskPending, TaskRunning, TaskAborting:
		return false
	}
	return true
}

// Ids are decimal in documents and zero-padded in keys, so that key order is id order.
func padID(n int64) string { return fmt.Sprintf("%020d", n) }

func parseID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == id
}

func operationsPrefix(uuid string) string { return ModelPrefix(uuid) + "operations/" }
func tasksPrefix(uuid string) string      { return ModelPrefix(uuid) + "tasks/" }
func taskQueuesPrefix(uuid string) string { return ModelPrefix(uuid) + "taskqueue/" }

func operationKey(uuid string, n int64) string { return operationsPrefix(uuid) + padID(n) }
func taskKey(uuid string, n int64) string      { return tasksPrefix(uuid) + padID(n) }

// taskQueuePrefix is a receiver's queue. Receivers appear as tags ("unit-mysql-0",
// "machine-0-lxd-1"): machine 0's queue must not contain its container 0/lxd/1's.
func taskQueuePrefix(uuid, receiver string) string {
	return taskQueuesPrefix(uuid) + receiverTag(receiver) + "/"
}

func taskQueueKey(uuid, receiver string, n int64) string {
	return taskQueuePrefix(uuid, receiver) + padID(n)
}

// receiverTag is a unit's or machine's tag, as Juju writes receivers.
func receiverTag(receiver string) string {
	if names.IsValidMachine(receiver) {
		return "machine-" + strings.ReplaceAll(receiver, "/", "-")
	}
	return "unit-" + strings.ReplaceAll(receiver, "/", "-")
}

// receiverFromTag undoes receiverTag ("" for anything else).
func receiverFromTag(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "machine-"); ok {
		return strings.ReplaceAll(rest, "-", "/")
	}
	if rest, ok := strings.CutPrefix(tag, "unit-"); ok {
		if i := strings.LastIndex(rest, "-"); i > 0 {
			return rest[:i] + "/" + rest[i+1:]
		}
	}
	return ""
}

// classifyTaskKey maps "tasks/<id>" and "taskqueue/<tag>/<id>" (kind and rest already split)
// to their watch kind and id.
func classifyTaskKey(kind, rest string) (string, string) {
	switch kind {
	case "tasks":
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
			return KindTask, strconv.FormatInt(n, 10)
		}
	case "taskqueue":
		tag, _, _ := strings.Cut(rest, "/")
		if r := receiverFromTag(tag); r != "" {
			return KindTasks, r
		}
	}
	return "", ""
}

// taskWatchKey is what KeyPrefix gives for the two task kinds.
func taskWatchKey(uuid, kind, id string) (string, error) {
	if kind == KindTask {
		n, ok := parseID(id)
		if !ok {
			return "", apierr.Errorf(apierr.NotValid, "watching a task needs a task id, not %q", id)
		}
		return taskKey(uuid, n), nil
	}
	if id == "" {
		return taskQueuesPrefix(uuid), nil
	}
	if !names.IsValidUnit(id) && !names.IsValidMachine(id) {
		return "", apierr.Errorf(apierr.NotValid, "watching tasks needs a unit name or machine id, not %q", id)
	}
	return taskQueuePrefix(uuid, id), nil
}

// notFound is the error for a receiver or action that does not exist. The "(not found)" is
// what Juju's CLI prints after such errors and what scripts (jubilant) look for.
func notFound(format string, args ...any) error {
	return apierr.Errorf(apierr.NotFound, format+" (not found)", args...)
}

func taskNotFound(id string) error { return apierr.Errorf(apierr.NotFound, "action %q not found", id) }

// EnqueueArgs is one juju run or juju exec request.
type EnqueueArgs struct {
	// Unit names, "<application>/leader" and, for exec, machine ids and application names.
	Receivers []string
	// The action's name (run) or the shell command (exec): exactly one of them.
	Action  string
	Command string
	// The action's params as a JSON object (run only).
	ParamsJSON []byte
	// How long an exec command may run; 0 means DefaultExecTimeout.
	ExecTimeout time.Duration
	// Juju's parallel and execution-group for the tasks, nil for the default: parallel and no
	// group for exec (Juju's juju-exec), the charm's actions.yaml for an action. Their agents
	// read them to know which of the machine's execution locks a task takes.
	Parallel       *bool
	ExecutionGroup *string
}

// OperationInfo is an operation with its tasks and what is derived from them.
type OperationInfo struct {
	Operation          *storepb.Operation
	Tasks              []*storepb.Task
	Status             string
	Started, Completed int64
}

// target is one resolved receiver: a unit, or a machine for exec.
type target struct {
	receiver string
	unit     *storepb.Unit // nil for a machine
}

// Enqueue validates every receiver, the action and its params (against the action's JSON
// schema in the unit's charm: the controller is the authority, whatever the client checked),
// then writes the operation and all its tasks, pending, in one transaction (L-G3: all or
// nothing). Operation and task ids come from one per-model sequence.
func (s *State) Enqueue(ctx context.Context, uuid string, args EnqueueArgs) (*OperationInfo, error) {
	exec := args.Command != ""
	if err := checkEnqueueArgs(args); err != nil {
		return nil, err
	}
	var params map[string]any
	if exec {
		timeout := args.ExecTimeout
		if timeout == 0 {
			timeout = DefaultExecTimeout
		}
		params = map[string]any{"command": args.Command, "timeout": timeout.Nanoseconds()}
	} else {
		var err error
		if params, err = decodeParams(args.ParamsJSON); err != nil {
			return nil, err
		}
	}
	paramsJSON, err := json.Marshal(params)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "params are not JSON: %v", err)
	}

	var info *OperationInfo
	err = s.run(ctx, "cannot enqueue operation", func(ctx context.Context, r *reader) (*writes, error) {
		// What is known up front comes in one round trip: juju run waits on this.
		keys := []string{modelKey(uuid), sequenceKey(uuid, "task")}
		for _, rcv := range args.Receivers {
			if names.IsValidUnit(rcv) {
				keys = append(keys, unitKey(uuid, rcv))
			}
		}
		if err := r.prefetch(ctx, keys...); err != nil {
			return nil, err
		}
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		targets, summaryNames, err := r.resolveReceivers(ctx, uuid, args.Receivers, exec)
		if err != nil {
			return nil, err
		}
		if len(targets) > MaxReceivers {
			return nil, tooManyReceivers(len(targets))
		}
		if 2*len(targets)*len(paramsJSON) > maxEnqueueBytes {
			return nil, apierr.Errorf(apierr.NotValid, "params of %d bytes are too large for %d receivers", len(paramsJSON), len(targets))
		}
		name := args.Action
		if exec {
			name = JujuExecAction
		}
		specs, targetParams, err := r.actionSpecs(ctx, uuid, targets, name, params)
		if err != nil {
			return nil, err
		}

		seq, err := r.nextSequence(ctx, uuid, "task")
		if err != nil {
			return nil, err
		}
		now := r.s.now().UnixNano()
		op := &storepb.Operation{
			Id:       strconv.FormatInt(seq+1, 10),
			Summary:  fmt.Sprintf("%s run on %s", name, strings.Join(summaryNames, ",")),
			Enqueued: now,
		}
		w := &writes{bulk: true}
		info = &OperationInfo{Operation: op, Status: TaskPending}
		for i, t := range targets {
			n, err := r.nextSequence(ctx, uuid, "task")
			if err != nil {
				return nil, err
			}
			task := &storepb.Task{
				Id: strconv.FormatInt(n+1, 10), OperationId: op.Id, Receiver: t.receiver, Action: name,
				ParamsJson: paramsJSON, Status: TaskPending, Enqueued: now,
				Parallel: specs[i].Parallel || exec, ExecutionGroup: specs[i].ExecutionGroup,
			}
			if args.Parallel != nil {
				task.Parallel = *args.Parallel
			}
			if args.ExecutionGroup != nil {
				task.ExecutionGroup = *args.ExecutionGroup
			}
			if targetParams[i] != nil {
				task.ParamsJson = targetParams[i]
			}
			op.TaskIds = append(op.TaskIds, task.Id)
			w.putTask(uuid, task)
			info.Tasks = append(info.Tasks, task)
		}
		w.put(operationKey(uuid, seq+1), op)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

func checkEnqueueArgs(args EnqueueArgs) error {
	switch {
	case len(args.Receivers) == 0:
		return apierr.Errorf(apierr.NotValid, "no receivers specified")
	case args.Action == "" && args.Command == "":
		return apierr.Errorf(apierr.NotValid, "no action specified")
	case args.Action != "" && args.Command != "":
		return apierr.Errorf(apierr.NotValid, "an operation runs an action or a command, not both")
	case args.Command != "" && len(bytes.TrimSpace(args.ParamsJSON)) > 0:
		return apierr.Errorf(apierr.NotValid, "exec takes no params")
	case args.ExecTimeout < 0:
		return apierr.Errorf(apierr.NotValid, "exec timeout %v is negative", args.ExecTimeout)
	case len(args.Receivers) > MaxReceivers:
		return tooManyReceivers(len(args.Receivers))
	case args.ExecutionGroup != nil && len(*args.ExecutionGroup) > maxExecutionGroup:
		return apierr.Errorf(apierr.NotValid, "execution group is longer than %d bytes", maxExecutionGroup)
	}
	seen := map[string]bool{}
	for _, rcv := range args.Receivers {
		if seen[rcv] {
			return apierr.Errorf(apierr.NotValid, "receiver %q given more than once", rcv)
		}
		seen[rcv] = true
	}
	return nil
}

func tooManyReceivers(n int) error {
	return apierr.Errorf(apierr.NotValid, "cannot run on %d receivers at once: at most %d per operation", n, MaxReceivers)
}

// decodeParams reads the params JSON object, keeping numbers as written.
func decodeParams(data []byte) (map[string]any, error) {
	params := map[string]any{}
	if len(bytes.TrimSpace(data)) == 0 {
		return params, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil || params == nil {
		return nil, apierr.Errorf(apierr.NotValid, "params are not a JSON object")
	}
	if dec.More() {
		return nil, apierr.Errorf(apierr.NotValid, "params are not a JSON object")
	}
	return params, nil
}

// resolveReceivers turns the request's receivers into units (and, for exec, machines), every
// read guarded, and names them as Juju's summary does: tags, "app/leader" as given. An
// application given to exec stands for its alive units.
func (r *reader) resolveReceivers(ctx context.Context, uuid string, receivers []string, exec bool) ([]target, []string, error) {
	var targets []target
	var summary []string
	seen := map[string]bool{}
	add := func(t target) {
		if !seen[t.receiver] {
			seen[t.receiver] = true
			targets = append(targets, t)
		}
	}
	for _, rcv := range receivers {
		switch {
		case names.IsValidUnit(rcv):
			u, err := r.aliveUnit(ctx, uuid, rcv)
			if err != nil {
				return nil, nil, err
			}
			add(target{receiver: rcv, unit: u})
			summary = append(summary, receiverTag(rcv))
		case strings.HasSuffix(rcv, "/leader") && names.IsValidApplication(strings.TrimSuffix(rcv, "/leader")):
			app := strings.TrimSuffix(rcv, "/leader")
			if err := r.applicationExists(ctx, uuid, app); err != nil {
				return nil, nil, err
			}
			leader, _, err := r.getRaw(ctx, leaseKey(uuid, app))
			if err != nil {
				return nil, nil, err
			}
			if leader == "" {
				return nil, nil, apierr.Errorf(apierr.NotFound, "could not determine leader for %q", app)
			}
			u, err := r.aliveUnit(ctx, uuid, leader)
			if err != nil {
				return nil, nil, err
			}
			add(target{receiver: leader, unit: u})
			summary = append(summary, rcv)
		case exec && names.IsValidMachine(rcv):
			m := &storepb.Machine{}
			found, err := r.get(ctx, machineKey(uuid, rcv), m)
			if err != nil {
				return nil, nil, err
			}
			if !found {
				return nil, nil, notFound("machine %q not found", rcv)
			}
			if m.Life != string(life.Alive) {
				return nil, nil, apierr.Errorf(apierr.NotAlive, "machine %q is %s", rcv, m.Life)
			}
			add(target{receiver: rcv})
			summary = append(summary, receiverTag(rcv))
		case exec && names.IsValidApplication(rcv):
			if err := r.applicationExists(ctx, uuid, rcv); err != nil {
				return nil, nil, err
			}
			units, err := r.s.applicationUnitNames(ctx, uuid, rcv)
			if err != nil {
				return nil, nil, err
			}
			n := 0
			for _, name := range units {
				u := &storepb.Unit{}
				found, err := r.get(ctx, unitKey(uuid, name), u)
				if err != nil {
					return nil, nil, err
				}
				if !found || u.Life != string(life.Alive) {
					continue // going away: nothing would run it
				}
				n++
				add(target{receiver: name, unit: u})
				summary = append(summary, receiverTag(name))
			}
			if n == 0 {
				return nil, nil, apierr.Errorf(apierr.NotValid, "application %q has no alive units", rcv)
			}
		case exec:
			return nil, nil, apierr.Errorf(apierr.NotValid, "invalid machine, application or unit %q", rcv)
		default:
			return nil, nil, apierr.Errorf(apierr.NotValid, "invalid unit name %q", rcv)
		}
	}
	return targets, summary, nil
}

// aliveUnit reads a unit that tasks may be queued for: it exists and is alive.
func (r *reader) aliveUnit(ctx context.Context, uuid, name string) (*storepb.Unit, error) {
	u := &storepb.Unit{}
	found, err := r.get(ctx, unitKey(uuid, name), u)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, notFound("unit %q not found", name)
	}
	if u.Life != string(life.Alive) {
		return nil, apierr.Errorf(apierr.NotAlive, "unit %q is %s", name, u.Life)
	}
	return u, nil
}

func (r *reader) applicationExists(ctx context.Context, uuid, name string) error {
	found, err := r.get(ctx, applicationKey(uuid, name), nil)
	if err != nil {
		return err
	}
	if !found {
		return notFound("application %q not found", name)
	}
	return nil
}

// actionSpecs finds the action in each unit's charm, fills in its schema's defaults and checks
// the params against the schema (once per charm): the spec and the params JSON of each target.
// Exec needs no charm: its specs and params are empty (the caller's params stand).
func (r *reader) actionSpecs(ctx context.Context, uuid string, targets []target, name string, params map[string]any) ([]charm.Action, [][]byte, error) {
	specs := make([]charm.Action, len(targets))
	targetParams := make([][]byte, len(targets))
	if name == JujuExecAction {
		return specs, targetParams, nil
	}
	type checked struct {
		spec   *charm.Action
		params []byte
	}
	byCharm := map[string]checked{}
	for i, t := range targets {
		url := t.unit.CharmUrl
		if url == "" {
			// Not yet deployed: it will run its application's charm.
			app, err := r.application(ctx, uuid, t.unit.Application)
			if err != nil {
				return nil, nil, err
			}
			url = app.CharmUrl
		}
		c, ok := byCharm[url]
		if !ok {
			acts, err := r.s.charmActions(ctx, uuid, url)
			if err != nil {
				return nil, nil, err
			}
			if a, defined := acts[name]; defined {
				schema, err := json.Marshal(a.Params)
				if err != nil {
					return nil, nil, fmt.Errorf("action %q: encoding its schema: %w", name, err)
				}
				full := actions.WithDefaults(a.Params, params)
				if err := paramschema.ValidateParams(name, schema, full); err != nil {
					return nil, nil, apierr.Errorf(apierr.NotValid, "%v", err)
				}
				data, err := json.Marshal(full)
				if err != nil {
					return nil, nil, apierr.Errorf(apierr.NotValid, "params are not JSON: %v", err)
				}
				c = checked{spec: &a, params: data}
			}
			byCharm[url] = c
		}
		if c.spec == nil {
			return nil, nil, notFound("action %q not defined for unit %q", name, t.receiver)
		}
		specs[i], targetParams[i] = *c.spec, c.params
	}
	return specs, targetParams, nil
}

// charmActions parses a stored charm's actions. A stored charm never changes, so its document
// needs no guard.
func (s *State) charmActions(ctx context.Context, uuid, url string) (map[string]charm.Action, error) {
	doc, err := s.Charm(ctx, uuid, url)
	if err != nil {
		return nil, err
	}
	acts, err := charm.ParseActions(doc.Actions)
	if err != nil {
		return nil, fmt.Errorf("charm %q: %w", url, err)
	}
	return acts.Actions, nil
}

// ApplicationActions lists the actions of an application's current charm, sorted by name.
func (s *State) ApplicationActions(ctx context.Context, uuid, app string) ([]charm.Action, error) {
	a, err := s.Application(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	acts, err := s.charmActions(ctx, uuid, a.CharmUrl)
	if err != nil {
		return nil, err
	}
	out := make([]charm.Action, 0, len(acts))
	for _, act := range acts {
		out = append(out, act)
	}
	slices.SortFunc(out, func(a, b charm.Action) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// putTask writes a task and keeps its receiver's queue in step: a copy without the log while
// the task is unfinished, nothing once it is finished.
func (w *writes) putTask(uuid string, t *storepb.Task) {
	n, _ := strconv.ParseInt(t.Id, 10, 64)
	w.put(taskKey(uuid, n), t)
	q := taskQueueKey(uuid, t.Receiver, n)
	if TaskFinished(t.Status) {
		w.del(q)
		return
	}
	c := proto.Clone(t).(*storepb.Task)
	c.Log = nil
	w.put(q, c)
}

// Task returns one task.
func (s *State) Task(ctx context.Context, uuid, id string) (*storepb.Task, error) {
	n, ok := parseID(id)
	if !ok {
		return nil, taskNotFound(id)
	}
	t := &storepb.Task{}
	found, err := s.getDoc(ctx, taskKey(uuid, n), t)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, taskNotFound(id)
	}
	return t, nil
}

// Operation returns one operation with its tasks.
func (s *State) Operation(ctx context.Context, uuid, id string) (*OperationInfo, error) {
	n, ok := parseID(id)
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "operation %s not found", id)
	}
	op := &storepb.Operation{}
	found, err := s.getDoc(ctx, operationKey(uuid, n), op)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierr.Errorf(apierr.NotFound, "operation %s not found", id)
	}
	// A task's id is above its operation's and below the next operation's.
	resp, err := s.kv.Get(ctx, taskKey(uuid, n+1), clientv3.WithRange(taskKey(uuid, n+int64(len(op.TaskIds))+1)))
	if err != nil {
		return nil, fmt.Errorf("reading operation %s: %w", id, err)
	}
	var tasks []*storepb.Task
	for _, kv := range resp.Kvs {
		t := &storepb.Task{}
		if err := unmarshal(kv, t); err != nil {
			return nil, err
		}
		if t.OperationId == op.Id {
			tasks = append(tasks, t)
		}
	}
	return deriveOperation(op, tasks), nil
}

// deriveOperation computes an operation's status and times from its tasks as Juju 3.6 does:
// pending until a task starts; running from then until every task has finished; then the
// first of error, failed, cancelled, completed that some task has (aborted when all were
// aborted). Started is the first task's start, completed the last task's end.
func deriveOperation(op *storepb.Operation, tasks []*storepb.Task) *OperationInfo {
	info := &OperationInfo{Operation: op, Tasks: tasks}
	has := map[string]bool{}
	finished := true
	for _, t := range tasks {
		has[t.Status] = true
		if t.Started != 0 && (info.Started == 0 || t.Started < info.Started) {
			info.Started = t.Started
		}
		if !TaskFinished(t.Status) {
			finished = false
		} else if t.Completed > info.Completed {
			info.Completed = t.Completed
		}
	}
	switch {
	case len(tasks) == 0:
		info.Status = TaskError
	case !finished:
		info.Completed = 0
		info.Status = TaskPending
		if info.Started != 0 || has[TaskRunning] || has[TaskAborting] {
			info.Status = TaskRunning
		}
	default:
		info.Status = TaskAborted
		for _, st := range []string{TaskError, TaskFailed, TaskCancelled, TaskCompleted} {
			if has[st] {
				info.Status = st
				break
			}
		}
	}
	return info
}

// OperationFilter selects operations (juju operations). Receiver filters (applications,
// units, machines) are one union; an operation matches when one of its tasks does, and only
// its matching tasks are listed.
type OperationFilter struct {
	Applications, Units, Machines []string
	Actions, Statuses             []string
	// Newest first: Offset skips that many; Limit 0 means all.
	Offset, Limit int
}

func (f OperationFilter) taskMatches(t *storepb.Task) bool {
	if len(f.Actions) > 0 && !slices.Contains(f.Actions, t.Action) {
		return false
	}
	if len(f.Applications)+len(f.Units)+len(f.Machines) == 0 {
		return true
	}
	if names.IsValidUnit(t.Receiver) {
		app, _ := names.UnitApplication(t.Receiver)
		return slices.Contains(f.Units, t.Receiver) || slices.Contains(f.Applications, app)
	}
	return slices.Contains(f.Machines, t.Receiver)
}

// ListOperations lists a model's operations, newest first, and whether more match beyond
// offset+limit. It reads every operation and task of the model at one revision.
func (s *State) ListOperations(ctx context.Context, uuid string, f OperationFilter) ([]*OperationInfo, bool, error) {
	if f.Offset < 0 || f.Limit < 0 {
		return nil, false, apierr.Errorf(apierr.NotValid, "offset and limit must not be negative")
	}
	resp, err := s.kv.Txn(ctx).Then(
		clientv3.OpGet(operationsPrefix(uuid), clientv3.WithPrefix()),
		clientv3.OpGet(tasksPrefix(uuid), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, false, fmt.Errorf("listing operations: %w", err)
	}
	tasksOf := map[string][]*storepb.Task{}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		t := &storepb.Task{}
		if err := unmarshal(kv, t); err != nil {
			return nil, false, err
		}
		tasksOf[t.OperationId] = append(tasksOf[t.OperationId], t)
	}
	opKVs := resp.Responses[0].GetResponseRange().Kvs
	var out []*OperationInfo
	for i := len(opKVs) - 1; i >= 0; i-- {
		op := &storepb.Operation{}
		if err := unmarshal(opKVs[i], op); err != nil {
			return nil, false, err
		}
		info := deriveOperation(op, tasksOf[op.Id])
		if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, info.Status) {
			continue
		}
		var matching []*storepb.Task
		for _, t := range info.Tasks {
			if f.taskMatches(t) {
				matching = append(matching, t)
			}
		}
		if len(matching) == 0 {
			continue
		}
		info.Tasks = matching
		out = append(out, info)
	}
	if f.Offset >= len(out) {
		return nil, false, nil
	}
	out = out[f.Offset:]
	if f.Limit > 0 && len(out) > f.Limit {
		return out[:f.Limit], true, nil
	}
	return out, false, nil
}

// ReceiverTasks is a receiver's queue, oldest first: its pending, running and aborting tasks
// (without their logs), one range read.
func (s *State) ReceiverTasks(ctx context.Context, uuid, receiver string) ([]*storepb.Task, error) {
	if !names.IsValidUnit(receiver) && !names.IsValidMachine(receiver) {
		return nil, apierr.Errorf(apierr.NotValid, "invalid receiver %q", receiver)
	}
	resp, err := s.kv.Get(ctx, taskQueuePrefix(uuid, receiver), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading the tasks of %s: %w", receiver, err)
	}
	return decodeTasks(resp.Kvs)
}

// decodeTasks decodes a read of a task queue.
func decodeTasks(kvs []*mvccpb.KeyValue) ([]*storepb.Task, error) {
	out := make([]*storepb.Task, 0, len(kvs))
	for _, kv := range kvs {
		t := &storepb.Task{}
		if err := unmarshal(kv, t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// receiverTask reads, guarded, a task that must belong to receiver.
func (r *reader) receiverTask(ctx context.Context, uuid, receiver, id string) (*storepb.Task, error) {
	n, ok := parseID(id)
	if !ok {
		return nil, taskNotFound(id)
	}
	t := &storepb.Task{}
	found, err := r.get(ctx, taskKey(uuid, n), t)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, taskNotFound(id)
	}
	if t.Receiver != receiver {
		return nil, apierr.Errorf(apierr.PermissionDenied, "task %s is not for %s", id, receiver)
	}
	return t, nil
}

// StartTask moves one of receiver's pending tasks to running. A task that is no longer
// pending (cancelled meanwhile, or already started) is refused with NotAlive: the agent skips
// it.
func (s *State) StartTask(ctx context.Context, uuid, receiver, id string) (*storepb.Task, error) {
	var out *storepb.Task
	err := s.run(ctx, fmt.Sprintf("cannot start task %s", id), func(ctx context.Context, r *reader) (*writes, error) {
		t, err := r.receiverTask(ctx, uuid, receiver, id)
		if err != nil {
			return nil, err
		}
		if t.Status != TaskPending {
			return nil, apierr.Errorf(apierr.NotAlive, "task %s is %s, not pending", id, t.Status)
		}
		t.Status = TaskRunning
		t.Started = r.s.now().UnixNano()
		w := &writes{}
		w.putTask(uuid, t)
		out = t
		return w, nil
	})
	return out, err
}

// LogTask appends a message to an unfinished task's log (action-log). The queue copy is not
// written: the agent does not need to wake for its own log lines.
func (s *State) LogTask(ctx context.Context, uuid, receiver, id, message string) error {
	return s.run(ctx, fmt.Sprintf("cannot log to task %s", id), func(ctx context.Context, r *reader) (*writes, error) {
		t, err := r.receiverTask(ctx, uuid, receiver, id)
		if err != nil {
			return nil, err
		}
		if TaskFinished(t.Status) {
			return nil, apierr.Errorf(apierr.NotAlive, "task %s is %s", id, t.Status)
		}
		t.Log = append(t.Log, &storepb.TaskLog{Time: r.s.now().UnixNano(), Message: message})
		if proto.Size(t) > maxTaskBytes {
			return nil, apierr.Errorf(apierr.NotValid, "task %s: log is full (%d bytes at most)", id, maxTaskBytes)
		}
		n, _ := parseID(id)
		w := &writes{}
		w.put(taskKey(uuid, n), t)
		return w, nil
	})
}

// TaskResult is how a task ended.
type TaskResult struct {
	// completed, failed, aborted or error.
	Status  string
	Message string
	// A JSON object (action-set's values, return-code, stdout, stderr).
	ResultsJSON []byte
}

// FinishTask ends one of receiver's unfinished tasks. A task already finished (cancelled
// when its unit went) is refused with NotAlive.
func (s *State) FinishTask(ctx context.Context, uuid, receiver, id string, res TaskResult) error {
	switch res.Status {
	case TaskCompleted, TaskFailed, TaskAborted, TaskError:
	default:
		return apierr.Errorf(apierr.NotValid, "cannot finish a task as %q", res.Status)
	}
	if len(bytes.TrimSpace(res.ResultsJSON)) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(res.ResultsJSON, &obj); err != nil || obj == nil {
			return apierr.Errorf(apierr.NotValid, "task results are not a JSON object")
		}
	}
	return s.run(ctx, fmt.Sprintf("cannot finish task %s", id), func(ctx context.Context, r *reader) (*writes, error) {
		t, err := r.receiverTask(ctx, uuid, receiver, id)
		if err != nil {
			return nil, err
		}
		if TaskFinished(t.Status) {
			return nil, apierr.Errorf(apierr.NotAlive, "task %s is already %s", id, t.Status)
		}
		t.Status, t.Message, t.ResultsJson = res.Status, res.Message, res.ResultsJSON
		t.Completed = r.s.now().UnixNano()
		if proto.Size(t) > maxTaskBytes {
			return nil, apierr.Errorf(apierr.NotValid, "task %s: results of %d bytes are too large (%d bytes at most)", id, len(res.ResultsJSON), maxTaskBytes)
		}
		w := &writes{}
		w.putTask(uuid, t)
		return w, nil
	})
}

// cancelBatch bounds how many tasks one cancel transaction changes.
const cancelBatch = 25

// CancelTasks cancels tasks as juju cancel-task does: a pending task is cancelled at once; a
// running one goes aborting (its agent, watching its queue, kills it and finishes it as
// aborted); a finished one is left as it is. Every id is checked before anything changes. It
// returns each task as it is afterwards.
func (s *State) CancelTasks(ctx context.Context, uuid string, ids []string) ([]*storepb.Task, error) {
	var unique []string
	for _, id := range ids {
		if !slices.Contains(unique, id) {
			unique = append(unique, id)
		}
	}
	if len(unique) == 0 {
		return nil, apierr.Errorf(apierr.NotValid, "no task ids specified")
	}
	for _, id := range unique {
		if _, err := s.Task(ctx, uuid, id); err != nil {
			return nil, err
		}
	}
	out := make([]*storepb.Task, 0, len(unique))
	for batch := range slices.Chunk(unique, cancelBatch) {
		var done []*storepb.Task
		err := s.run(ctx, "cannot cancel tasks", func(ctx context.Context, r *reader) (*writes, error) {
			done = done[:0]
			w := &writes{}
			now := r.s.now().UnixNano()
			for _, id := range batch {
				n, _ := parseID(id)
				t := &storepb.Task{}
				if _, err := r.get(ctx, taskKey(uuid, n), t); err != nil {
					return nil, err
				}
				switch t.Status {
				case TaskPending:
					t.Status, t.Message, t.Completed = TaskCancelled, msgCancelled, now
					w.putTask(uuid, t)
				case TaskRunning:
					t.Status = TaskAborting
					w.putTask(uuid, t)
				}
				done = append(done, t)
			}
			return w, nil
		})
		if err != nil {
			return out, err
		}
		out = append(out, done...)
	}
	return out, nil
}

// cancelRemovedReceiverTasks cancels, in the transaction that removes a unit or machine, its
// unfinished tasks, as Juju does ("unit removed"). A queue longer than one batch is left to a
// cleanup (L-G4), whose transactions can no longer race an enqueue: the receiver is gone.
func (r *reader) cancelRemovedReceiverTasks(ctx context.Context, w *writes, uuid, receiver, message string) error {
	more, err := r.cancelReceiverTasks(ctx, w, uuid, receiver, message)
	if err != nil || !more {
		return err
	}
	seq, err := r.nextSequence(ctx, uuid, "cleanup")
	if err != nil {
		return err
	}
	w.put(cleanupKey(uuid, seq), &storepb.Cleanup{Kind: CleanupReceiverTasks, Receiver: receiver, Created: r.s.now().UnixNano()})
	return nil
}

// cancelReceiverTasks cancels, in the caller's transaction, the first removalTaskBatch tasks
// of a receiver's queue and reports whether more remain.
func (r *reader) cancelReceiverTasks(ctx context.Context, w *writes, uuid, receiver, message string) (bool, error) {
	prefix := taskQueuePrefix(uuid, receiver)
	end := clientv3.GetPrefixRangeEnd(prefix)
	resp, err := r.s.kv.Get(ctx, prefix, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(removalTaskBatch+1))
	if err != nil {
		return false, fmt.Errorf("reading the tasks of %s: %w", receiver, err)
	}
	kvs := resp.Kvs
	more := len(kvs) > removalTaskBatch
	if more {
		kvs = kvs[:removalTaskBatch]
	} else {
		// Enqueues need the receiver alive, so none commits while it is being removed; the
		// guard (any key after the last one read) keeps that true whatever else writes queues.
		from := prefix
		if len(kvs) > 0 {
			from = string(kvs[len(kvs)-1].Key) + "\x00"
		}
		r.assertEmpty(from, end)
	}
	now := r.s.now().UnixNano()
	for _, kv := range kvs {
		n, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), prefix), 10, 64)
		if err != nil {
			return false, fmt.Errorf("task queue key %s: %w", kv.Key, err)
		}
		t := &storepb.Task{}
		found, err := r.get(ctx, taskKey(uuid, n), t)
		if err != nil {
			return false, err
		}
		if !found || TaskFinished(t.Status) {
			w.del(string(kv.Key))
			continue
		}
		t.Status, t.Message, t.Completed = TaskCancelled, message, now
		w.putTask(uuid, t)
	}
	return more, nil
}

// cancelLeftoverTasks is the receiver-tasks cleanup: it cancels what remains in a removed
// receiver's queue, one bounded transaction at a time.
func (s *State) cancelLeftoverTasks(ctx context.Context, uuid, receiver string) error {
	message := msgUnitRemoved
	if names.IsValidMachine(receiver) {
		message = msgMachineRemoved
	}
	for {
		var more bool
		err := s.run(ctx, fmt.Sprintf("cannot cancel the tasks of %s", receiver), func(ctx context.Context, r *reader) (*writes, error) {
			w := &writes{}
			var err error
			more, err = r.cancelReceiverTasks(ctx, w, uuid, receiver, message)
			return w, err
		})
		if err != nil || !more {
			return err
		}
	}
}

// taskAudit gathers a model's operations, tasks and queues for Audit.
type taskAudit struct {
	ops      map[string]*storepb.Operation
	tasks    map[string]*storepb.Task
	queued   map[string]*storepb.Task // by task id
	queueKey map[string]string        // task id → receiver the queue key names
	leftover map[string]bool          // receivers with a receiver-tasks cleanup pending
}

func (a *taskAudit) cleanup(c *storepb.Cleanup) {
	if c.Kind == CleanupReceiverTasks {
		if a.leftover == nil {
			a.leftover = map[string]bool{}
		}
		a.leftover[c.Receiver] = true
	}
}

func (a *taskAudit) add(kind, rest string, kv *mvccpb.KeyValue) error {
	if a.ops == nil {
		a.ops, a.tasks, a.queued, a.queueKey = map[string]*storepb.Operation{}, map[string]*storepb.Task{}, map[string]*storepb.Task{}, map[string]string{}
	}
	switch kind {
	case "operations":
		op := &storepb.Operation{}
		if err := unmarshal(kv, op); err != nil {
			return err
		}
		a.ops[op.Id] = op
	case "tasks":
		t := &storepb.Task{}
		if err := unmarshal(kv, t); err != nil {
			return err
		}
		a.tasks[t.Id] = t
	case "taskqueue":
		t := &storepb.Task{}
		if err := unmarshal(kv, t); err != nil {
			return err
		}
		tag, _, _ := strings.Cut(rest, "/")
		a.queued[t.Id] = t
		a.queueKey[t.Id] = receiverFromTag(tag)
	}
	return nil
}

// check: every task belongs to its operation; a task is in its receiver's queue exactly while
// it is unfinished, with the same status; an unfinished task's receiver exists, unless a
// cleanup is cancelling what it left.
func (a *taskAudit) check(bad func(string, ...any), exists func(string) bool) {
	for id, op := range a.ops {
		for _, tid := range op.TaskIds {
			if t, ok := a.tasks[tid]; !ok || t.OperationId != id {
				bad("operation %s: task %s missing or not its own", id, tid)
			}
		}
	}
	for id, t := range a.tasks {
		q, queued := a.queued[id]
		switch {
		case TaskFinished(t.Status) && queued:
			bad("task %s is %s but still queued", id, t.Status)
		case !TaskFinished(t.Status) && !queued:
			bad("task %s is %s but not queued", id, t.Status)
		case queued && (q.Status != t.Status || a.queueKey[id] != t.Receiver):
			bad("task %s: queued as %s for %s, is %s for %s", id, q.Status, a.queueKey[id], t.Status, t.Receiver)
		}
		if !TaskFinished(t.Status) && !exists(t.Receiver) && !a.leftover[t.Receiver] {
			bad("task %s is %s for %s, which does not exist", id, t.Status, t.Receiver)
		}
	}
	for id := range a.queued {
		if _, ok := a.tasks[id]; !ok {
			bad("queued task %s does not exist", id)
		}
	}
}
