package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/actions/paramschema"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/status"
	"github.com/jujuclone/juju/internal/timerslack"
)

// A receiver's tasks: the unit agent runs its unit's actions and juju exec commands one at a
// time, between hooks and never during one; the machine agent runs juju exec commands on its
// machine, side by side. Both learn of tasks by watching their queue, take the machine's
// execution lock a task needs (execlock.go: not parallel, or in an execution group), start it
// (pending → running), run it and finish it with its status, message and results, as Juju
// 3.6's uniter and machine actions worker do.

// Short names for the store's words.
const (
	execAction    = state.JujuExecAction
	taskPending   = state.TaskPending
	taskRunning   = state.TaskRunning
	taskAborting  = state.TaskAborting
	taskCompleted = state.TaskCompleted
	taskFailed    = state.TaskFailed
	taskAborted   = state.TaskAborted
)

const (
	// maxTaskOutput bounds what a task keeps of its stdout and of its stderr: the results are
	// one document of the store.
	maxTaskOutput = 256 << 10
	// outputWait bounds the wait for a task's output once its process has ended: a daemon it
	// started may hold the pipes open.
	outputWait = 2 * time.Second
	// monitorRetry is the pause before reading the queue again after a failed read while a
	// task runs (the read looks for its cancellation), and between tries to finish a task.
	monitorRetry = time.Second
	// finishTries is how many times the agent tries to record a task's outcome when the
	// controller cannot be reached.
	finishTries = 5
)

// taskRun is one task being run: its params, and what the action tools record.
type taskRun struct {
	id, name string
	params   map[string]any

	mu      sync.Mutex
	results map[string]any
	failed  bool
	message string
}

func newTaskRun(t *pb.Task) (*taskRun, error) {
	params := map[string]any{}
	if raw := t.GetParamsJson(); len(raw) > 0 {
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, fmt.Errorf("cannot run %q action: params are not a JSON object: %v", t.GetAction(), err)
		}
		if params == nil { // "null"
			params = map[string]any{}
		}
	}
	return &taskRun{id: t.GetId(), name: t.GetAction(), params: params, results: map[string]any{}}, nil
}

// set puts value at a key path of the results: {a: {b: value}} for [a b]. A value on the way
// is replaced by a map, a map at the end by the value, as Juju's action-set does.
func (r *taskRun) set(keys []string, value any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.results
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}

func (r *taskRun) fail(message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed, r.message = true, message
}

// outcome starts the task's outcome from what its tools recorded: completed, or failed with
// action-fail's message. The results are the tool's map itself: the process has ended.
func (r *taskRun) outcome() taskOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed {
		return taskOutcome{status: taskFailed, message: r.message, results: r.results}
	}
	return taskOutcome{status: taskCompleted, results: r.results}
}

// timeout is juju exec's time limit: the "timeout" param in nanoseconds (a JSON number), 0 for
// none.
func (r *taskRun) timeout() time.Duration {
	ns, _ := r.params["timeout"].(float64)
	if ns <= 0 {
		return 0
	}
	return time.Duration(ns)
}

// taskOutcome is how a task ended, as FinishTask records it.
type taskOutcome struct {
	status, message string
	// results is nil when there are none to record.
	results map[string]any
}

// procSpec is the process a task runs, in its own process group.
type procSpec struct {
	path    string
	args    []string
	dir     string
	env     []string
	timeout time.Duration // 0: none
	// log, when set, gets the output line by line under module, as a hook's: stdout at DEBUG,
	// stderr at WARNING.
	log    *unitLog
	module string
	// as is the agent's configuration: the process runs as its machine's uid when it has one
	// (Conf.procAttr).
	as Conf
}

// procResult is how a task's process ended.
type procResult struct {
	// state is nil when the process did not start (startErr says why).
	state    *os.ProcessState
	startErr error
	stdout   []byte
	stderr   []byte
	// timedOut, aborted: the agent killed it at its time limit, or because the task was
	// cancelled; stopped: because the agent itself is stopping.
	timedOut, aborted, stopped bool
}

// runProc runs p until it exits, its time limit passes, abort is closed or ctx ends; the last
// three kill its whole process group.
func runProc(ctx context.Context, abort <-chan struct{}, p procSpec) procResult {
	defer slotOf(ctx).during(ctx)() // a process's run holds no permit (workslots.go)
	cmd := exec.Command(p.path, p.args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.SysProcAttr = p.as.procAttr()
	cmd.WaitDelay = outputWait
	stdout := &capture{limit: maxTaskOutput}
	stderr := &capture{limit: maxTaskOutput}
	var outLog, errLog *lineLogger
	if p.log != nil {
		outLog = &lineLogger{log: p.log, level: "DEBUG", module: p.module}
		errLog = &lineLogger{log: p.log, level: "WARNING", module: p.module}
		stdout.tee, stderr.tee = outLog, errLog
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := timerslack.Start(cmd); err != nil {
		return procResult{startErr: err}
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // how it ended is in cmd.ProcessState
		close(waited)
	}()
	var limit <-chan time.Time
	if p.timeout > 0 {
		t := time.NewTimer(p.timeout)
		defer t.Stop()
		limit = t.C
	}
	var res procResult
	select {
	case <-waited:
	case <-abort:
		res.aborted = true
	case <-limit:
		res.timedOut = true
	case <-ctx.Done():
		res.stopped = true
	}
	if res.aborted || res.timedOut || res.stopped {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
	}
	if outLog != nil {
		outLog.flush()
		errLog.flush()
	}
	res.state, res.stdout, res.stderr = cmd.ProcessState, stdout.bytes(), stderr.bytes()
	return res
}

// exitError is how an action's process ended when that is a failure, worded as Juju words it:
// "exit status 1", "terminated" (killed), nil for a clean exit.
func (r procResult) exitError() error {
	switch {
	case r.startErr != nil:
		return r.startErr
	case r.state == nil || r.state.Success():
		return nil
	}
	if ws, ok := r.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
		(ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGTERM) {
		return errors.New("terminated")
	}
	return &exec.ExitError{ProcessState: r.state}
}

// execCode is a juju exec command's return code as Juju reports it: its exit status, 0 when a
// signal ended it.
func (r procResult) execCode() int {
	if ws, ok := r.state.Sys().(syscall.WaitStatus); ok && ws.Exited() {
		return ws.ExitStatus()
	}
	return 0
}

// capture keeps the first limit bytes written to it, and passes everything to tee.
type capture struct {
	limit   int
	buf     []byte
	dropped int
	tee     io.Writer
}

func (c *capture) Write(p []byte) (int, error) {
	if c.tee != nil {
		_, _ = c.tee.Write(p)
	}
	keep := min(max(c.limit-len(c.buf), 0), len(p))
	c.buf = append(c.buf, p[:keep]...)
	c.dropped += len(p) - keep
	return len(p), nil
}

// bytes is what was kept; when output was dropped, it ends on a whole character and says how
// much was dropped.
func (c *capture) bytes() []byte {
	if c.dropped == 0 {
		return c.buf
	}
	b := c.buf
	if n := len(b); n > 0 {
		start := n - 1
		for start > 0 && n-start < utf8.UTFMax && !utf8.RuneStart(b[start]) {
			start--
		}
		if !utf8.FullRune(b[start:]) {
			c.dropped += n - start
			b = b[:start]
		}
	}
	return fmt.Appendf(b, "\n[%d more bytes not kept: a task keeps the first %d bytes of each stream]\n", c.dropped, c.limit)
}

// storeOutput puts a stream into the results as Juju does: as text when it is UTF-8, else in
// base64 with key+encodingSuffix saying so. Empty output is left out unless always.
func storeOutput(results map[string]any, key string, data []byte, always bool, encodingSuffix string) {
	if len(data) == 0 && !always {
		return
	}
	if utf8.Valid(data) {
		results[key] = string(data)
		return
	}
	results[key] = base64.StdEncoding.EncodeToString(data)
	results[key+encodingSuffix] = "base64"
}

// taskQueue is an agent's side of its receiver's task queue: the watch's change signals (one
// pending at most) and the reads.
type taskQueue struct {
	c        *client.Client
	model    string
	receiver string
	changed  <-chan struct{}
}

// read lists the receiver's unfinished tasks, oldest first.
func (q *taskQueue) read(ctx context.Context) ([]*pb.Task, error) {
	return q.c.ReceiverTasks(ctx, q.model, q.receiver)
}

// watchAbort follows the queue while task id runs: the returned channel is closed when the
// task turns aborting (juju cancel-task) or leaves the queue (finished by someone else, or
// gone with its receiver). stop ends the following and reports whether the queue changed
// meanwhile: more tasks may be waiting.
func (q *taskQueue) watchAbort(ctx context.Context, id string) (abort <-chan struct{}, stop func() bool) {
	aborted := make(chan struct{})
	done := make(chan struct{})
	ended := make(chan struct{})
	var changed atomic.Bool
	go func() {
		defer close(ended)
		unread := false // a change not read yet: the last read failed
		for {
			var retry <-chan time.Time
			if unread {
				retry = time.After(monitorRetry)
			}
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-q.changed:
				changed.Store(true)
			case <-retry:
			}
			tasks, err := q.read(ctx)
			unread = err != nil
			if err == nil && abortRequested(tasks, id) {
				close(aborted)
				return
			}
		}
	}()
	return aborted, func() bool {
		close(done)
		<-ended
		return changed.Load()
	}
}

// abortRequested: task id is aborting, or no longer in the queue.
func abortRequested(tasks []*pb.Task, id string) bool {
	for _, t := range tasks {
		if t.GetId() == id {
			return t.GetStatus() == taskAborting
		}
	}
	return true
}

// lock waits for the machine's execution lock name while task id is pending, and gives up
// (errLockAbandoned) when the task leaves the queue (cancelled). changed reports whether the
// queue changed meanwhile.
func (q *taskQueue) lock(ctx context.Context, machineDir, name, id string) (release func(), changed bool, err error) {
	abort, stop := q.watchAbort(ctx, id)
	release, err = acquireLock(ctx, abort, machineDir, name)
	return release, stop(), err
}

// lockFailure is the message of a task that could not take its lock, as Juju words it.
func lockFailure(err error) string {
	return fmt.Sprintf("could not acquire machine execution lock: %v", err)
}

// start moves a pending task to running. skip reports a task that is no longer pending
// (cancelled meanwhile) or that the controller refuses: the agent leaves it and goes on.
func (q *taskQueue) start(ctx context.Context, id string) (t *pb.Task, skip bool, err error) {
	t, err = q.c.StartTask(ctx, q.model, q.receiver, id)
	switch {
	case err == nil:
		return t, false, nil
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case transient(err):
		return nil, false, err
	}
	return nil, true, err
}

// finish records a task's outcome. A task the controller no longer takes (finished or removed
// meanwhile) is not an error of the agent's.
func (q *taskQueue) finish(ctx context.Context, id string, out taskOutcome) (refused error, err error) {
	var results []byte
	if out.results != nil {
		if results, err = json.Marshal(out.results); err != nil {
			return nil, fmt.Errorf("encoding task %s's results: %w", id, err)
		}
	}
	// A task left running is failed when the agent starts again, its results lost: a
	// controller that is briefly away is worth a few tries.
	for try := 1; ; try++ {
		err = q.c.FinishTask(ctx, q.model, q.receiver, id, out.status, out.message, results)
		if err == nil || !transient(err) || ctx.Err() != nil || try == finishTries {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(monitorRetry):
		}
	}
	if errors.Is(err, apierr.NotValid) && out.results != nil {
		// Results larger than a task may hold (action-set's values have no bound of their
		// own): the task fails with the reason rather than staying unfinished.
		kept := map[string]any{}
		if rc, ok := out.results["return-code"]; ok {
			kept["return-code"] = rc
		}
		results, _ = json.Marshal(kept)
		err = q.c.FinishTask(ctx, q.model, q.receiver, id, taskFailed, fmt.Sprintf("cannot record the results: %v", err), results)
	}
	switch {
	case err == nil:
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case transient(err):
		return nil, fmt.Errorf("finishing task %s: %w", id, err)
	}
	return err, nil
}

// transient errors are worth retrying later (the agent restarts); the others are the
// controller's answer about the task.
func transient(err error) bool {
	return errors.Is(err, apierr.Unavailable) || errors.Is(err, apierr.NoQuorum) || errors.Is(err, apierr.Unauthenticated) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, apierr.Contention)
}

// runTasks runs the unit's queued tasks, oldest first, one at a time, while its queue has
// changed since it was last read. It runs in the agent's one goroutine, so never during a
// hook; the unit needs its charm installed (and not yet removed).
func (a *unitAgent) runTasks(ctx context.Context, snap *snapshot) error {
	select {
	case <-a.tasks.changed:
		a.tasksDue = true
		a.readTasks = nil // the queue changed since the pass's read
	default:
	}
	for a.tasksDue && a.st.Installed && !a.st.Removed {
		a.tasksDue = false
		var tasks []*pb.Task
		if a.readTasks != nil {
			tasks, a.readTasks = *a.readTasks, nil
		} else {
			var err error
			if tasks, err = a.tasks.read(ctx); err != nil {
				return fmt.Errorf("unit %s: reading tasks: %w", a.conf.ID, err)
			}
		}
		for _, t := range tasks {
			if err := a.runTask(ctx, t, snap); err != nil {
				return err
			}
		}
	}
	return nil
}

// runTask runs one task of the queue. A task already running was started by an agent that
// stopped before finishing it: it fails, as in Juju, since running an arbitrary command twice
// could do harm.
func (a *unitAgent) runTask(ctx context.Context, t *pb.Task, snap *snapshot) error {
	switch t.GetStatus() {
	case taskRunning, taskAborting:
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("unit agent was interrupted while running action %s", t.GetId()))
		return a.finishTask(ctx, t, taskOutcome{status: taskFailed, message: "action terminated"})
	case taskPending:
	default:
		return nil
	}
	if err := a.checkAction(t); err != nil {
		// As Juju does before running an action: one the unit's charm does not define (it
		// changed since the task was queued), or params its schema refuses, is an error.
		return a.finishTask(ctx, t, taskOutcome{status: state.TaskError, message: err.Error()})
	}
	if lock := unitTaskLock(t); lock != "" {
		// The task waits, pending, for the lock; the unit waits with it, as Juju's uniter does.
		// The lock is released once the task is finished, so that the next holder starts after.
		release, changed, err := a.tasks.lock(ctx, machineDirOf(a.dir), lock, t.GetId())
		if changed {
			a.tasksDue = true
		}
		switch {
		case errors.Is(err, errLockAbandoned):
			return nil // cancelled meanwhile
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return a.finishTask(ctx, t, taskOutcome{status: taskFailed, message: lockFailure(err)})
		}
		defer release()
	}
	started, skip, err := a.tasks.start(ctx, t.GetId())
	if skip {
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("skipping action %s: %v", t.GetId(), err))
		return nil
	}
	if err != nil {
		return fmt.Errorf("unit %s: starting task %s: %w", a.conf.ID, t.GetId(), err)
	}
	run, err := newTaskRun(started)
	if err != nil {
		return a.finishTask(ctx, started, taskOutcome{status: taskFailed, message: err.Error()})
	}
	if err := a.setStatus(ctx, &pb.SetUnitStatusRequest{AgentStatus: &pb.StatusInfo{Status: string(status.Executing), Message: "running action " + run.name}}, false); err != nil {
		return err
	}
	a.executing = true
	a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("running action %q (task %s)", run.name, run.id))
	// The task's context reads the application as it is now, as Juju's reads it from the
	// controller when the action starts: a config change just made is seen even before the
	// agent's next pass (or config-changed) has run.
	if app, err := a.c.GetApplication(ctx, a.conf.Model, snap.unit.GetApplication()); err == nil {
		fresh := *snap
		fresh.app = app
		snap = &fresh
	}
	abort, stop := a.tasks.watchAbort(ctx, run.id)
	out := a.execTask(ctx, run, snap, abort)
	if stop() {
		a.tasksDue = true
	}
	if ctx.Err() != nil {
		// The agent stops: the task stays running, and the next agent fails it.
		return ctx.Err()
	}
	return a.finishTask(ctx, started, out)
}

// checkAction checks a queued action against the unit's charm: defined, with params its
// schema takes. juju exec has nothing to check.
func (a *unitAgent) checkAction(t *pb.Task) error {
	name := t.GetAction()
	if name == execAction {
		return nil
	}
	if a.actionSpecs == nil {
		ch, err := charm.Read(a.charmDir())
		if err != nil {
			return fmt.Errorf("cannot run %q action: reading the charm's actions: %v", name, err)
		}
		a.actionSpecs = map[string]charm.Action{}
		if ch.Actions != nil {
			a.actionSpecs = ch.Actions.Actions
		}
	}
	spec, ok := a.actionSpecs[name]
	if !ok {
		return fmt.Errorf("cannot run %q action: not defined", name)
	}
	run, err := newTaskRun(t)
	if err != nil {
		return err
	}
	schema, err := json.Marshal(spec.Params)
	if err != nil {
		return fmt.Errorf("cannot run %q action: %v", name, err)
	}
	if err := paramschema.ValidateParams(name, schema, run.params); err != nil {
		return fmt.Errorf("cannot run %q action: %v", name, err)
	}
	return nil
}

func (a *unitAgent) finishTask(ctx context.Context, t *pb.Task, out taskOutcome) error {
	refused, err := a.tasks.finish(ctx, t.GetId(), out)
	if err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	if refused != nil {
		a.log.write("WARNING", "juju.worker.uniter", fmt.Sprintf("error finalising action %s: %v", t.GetId(), refused))
		return nil
	}
	msg := fmt.Sprintf("action %q (task %s) %s", t.GetAction(), t.GetId(), out.status)
	if out.message != "" {
		msg += ": " + out.message
	}
	a.log.write("INFO", "juju.worker.uniter", msg)
	return nil
}

// execTask runs an action or a juju exec command in the unit's context: the hook tools answer
// it (action-get and the rest included), and its environment is a hook's with the action's
// name and id. The outcome is zero when ctx ended first.
func (a *unitAgent) execTask(ctx context.Context, run *taskRun, snap *snapshot, abort <-chan struct{}) taskOutcome {
	if err := a.isolate(); err != nil {
		return taskOutcome{status: taskFailed, message: err.Error()}
	}
	id := hooktool.NewContextID()
	a.registerContext(id, &hookContext{a: a, hook: &hookSpec{}, snap: snap, action: run})
	defer a.tools.Unregister(id)
	env := append(a.contextEnv(id, snap),
		"JUJU_HOOK_NAME=", // Juju exports it empty for actions
		"JUJU_ACTION_NAME="+run.name,
		"JUJU_ACTION_UUID="+run.id,
		"JUJU_ACTION_TAG=action-"+run.id,
	)
	if run.name == execAction {
		return a.execCommand(ctx, run, env, abort)
	}
	return a.execAction(ctx, run, env, abort)
}

// execAction runs the charm's action: ./dispatch with JUJU_DISPATCH_PATH=actions/<name> when
// the charm has one, else actions/<name>. Its output goes to the unit log as a hook's does and
// into the results.
func (a *unitAgent) execAction(ctx context.Context, run *taskRun, env []string, abort <-chan struct{}) taskOutcome {
	path := filepath.Join(a.charmDir(), "actions", run.name)
	if a.dispatch {
		path = filepath.Join(a.charmDir(), "dispatch")
	} else if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return taskOutcome{status: taskFailed, message: fmt.Sprintf("action not implemented on unit %q", a.conf.ID)}
	}
	res := runProc(ctx, abort, procSpec{
		path: path, dir: a.charmDir(), env: append(env, "JUJU_DISPATCH_PATH=actions/"+run.name),
		log: a.log, module: "unit." + a.conf.ID + "." + run.name, as: a.conf,
	})
	if res.stopped {
		return taskOutcome{}
	}
	out := run.outcome()
	if res.state != nil {
		out.results["return-code"] = res.state.ExitCode() // -1 when a signal ended it, as in Juju
		storeOutput(out.results, "stdout", asLines(res.stdout), false, "-encoding")
		storeOutput(out.results, "stderr", asLines(res.stderr), false, "-encoding")
	}
	if err := res.exitError(); err != nil {
		out.status, out.message = taskFailed, err.Error()
	}
	if res.aborted && out.status == taskFailed {
		out.status = taskAborted
	}
	return out
}

// execCommand runs a juju exec command with /bin/bash in the charm directory. As in Juju its
// status is completed whatever its return code; it fails when killed at its time limit.
func (a *unitAgent) execCommand(ctx context.Context, run *taskRun, env []string, abort <-chan struct{}) taskOutcome {
	command, ok := run.params["command"].(string)
	if !ok {
		return taskOutcome{status: taskFailed, message: "no command parameter to juju-exec action"}
	}
	res := runProc(ctx, abort, procSpec{
		path: "/bin/bash", args: []string{"-c", command}, dir: a.charmDir(), env: env, timeout: run.timeout(), as: a.conf,
	})
	if res.stopped {
		return taskOutcome{}
	}
	out := run.outcome()
	if res.state != nil {
		out.results["return-code"] = res.execCode()
		storeOutput(out.results, "stdout", res.stdout, false, "-encoding")
		storeOutput(out.results, "stderr", res.stderr, false, "-encoding")
	}
	switch {
	case res.startErr != nil:
		out.status, out.message = taskFailed, res.startErr.Error()
	case res.timedOut || res.aborted:
		out.status, out.message = taskFailed, "command cancelled"
	}
	if res.aborted && out.status == taskFailed {
		out.status = taskAborted
	}
	return out
}

// asLines is an action's output as Juju reports it, having read it line by line: CRLF line
// ends become LF, and non-empty output ends with one.
func asLines(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if len(b) == 0 || b[len(b)-1] == '\n' {
		return b
	}
	return append(b, '\n')
}

// maxMachineTasks is how many exec commands a machine agent runs at once, as Juju's.
const maxMachineTasks = 100

// newMachineTasks is the machine agent's task worker: it runs the juju exec commands queued for
// its machine in the machine's directory, as Juju's machine actions worker does: side by side,
// each in its own goroutine, a command that is not parallel or that has an execution group once
// it holds the machine's lock for it. The agent's loop calls dispatch when the queue changes
// (its first call fails a task that was running when the agent stopped) or wake fires (a
// task's retry); an idle machine's worker costs no goroutine. Once the agent's context ends,
// wg.Wait waits for the commands, which are killed and stay running: the next agent fails
// them, as when the agent stops.
func newMachineTasks(a *machineAgent) (w *machineTasks, wake <-chan struct{}) {
	wakeCh := make(chan struct{}, 1)
	return &machineTasks{a: a, q: &taskQueue{c: a.c, model: a.conf.Model, receiver: a.conf.ID},
		slots: make(chan struct{}, maxMachineTasks), running: map[string]*machineTask{},
		taken: map[string]bool{}, tails: map[string]chan struct{}{},
		wake: func() {
			select {
			case wakeCh <- struct{}{}:
			default:
			}
		}}, wakeCh
}

// machineTasks is the machine agent's tasks in hand. Only dispatch, in the worker's one
// loop, reads the queue: it starts the new tasks and tells running ones they were cancelled.
type machineTasks struct {
	a     *machineAgent
	q     *taskQueue
	slots chan struct{}
	wake  func()
	wg    sync.WaitGroup

	mu sync.Mutex
	// running are the tasks whose goroutine has not ended, by id; taken the ids this agent has
	// dealt with (started, or failed as left running) until they leave the queue; tails the
	// last task given each lock, which the next one waits for.
	running map[string]*machineTask
	taken   map[string]bool
	tails   map[string]chan struct{}
}

// machineTask is one task in hand: abort is closed when it is cancelled.
type machineTask struct {
	abort     chan struct{}
	abortOnce sync.Once
}

func (t *machineTask) cancel() { t.abortOnce.Do(func() { close(t.abort) }) }

// dispatch reads the queue once and acts on it.
func (w *machineTasks) dispatch(ctx context.Context) error {
	tasks, err := w.q.read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("reading tasks: %w", err)
	}
	return w.act(ctx, tasks)
}

// act starts the queue's new tasks, tells running ones they were cancelled and fails those a
// stopped agent left running.
func (w *machineTasks) act(ctx context.Context, tasks []*pb.Task) error {
	queued := map[string]bool{}
	for _, t := range tasks {
		queued[t.GetId()] = true
	}
	var left []*pb.Task
	w.mu.Lock()
	for id, r := range w.running {
		if abortRequested(tasks, id) {
			r.cancel()
		}
	}
	for id := range w.taken {
		if !queued[id] && w.running[id] == nil {
			delete(w.taken, id) // finished: ids are never reused
		}
	}
	for _, t := range tasks {
		if w.taken[t.GetId()] {
			continue
		}
		w.taken[t.GetId()] = true
		switch t.GetStatus() {
		case taskPending:
			w.start(ctx, t)
		case taskRunning, taskAborting:
			left = append(left, t)
		}
	}
	w.mu.Unlock()
	// Tasks a stopped agent left running fail, as Juju's worker fails them when it starts:
	// running an arbitrary command twice could do harm.
	for _, t := range left {
		if _, err := w.q.finish(ctx, t.GetId(), taskOutcome{status: taskFailed, message: "action cancelled"}); err != nil {
			return err
		}
	}
	return nil
}

// start runs a pending task in a goroutine of its own, behind the previous task given the
// same lock (w.mu held).
func (w *machineTasks) start(ctx context.Context, t *pb.Task) {
	r := &machineTask{abort: make(chan struct{})}
	w.running[t.GetId()] = r
	lock := machineTaskLock(t)
	var prev, mine chan struct{}
	if lock != "" {
		prev, mine = w.tails[lock], make(chan struct{})
		w.tails[lock] = mine
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := w.run(ctx, t, r, lock, prev)
		w.ended(t.GetId(), lock, mine, err != nil && ctx.Err() == nil)
	}()
}

// ended forgets a task whose goroutine ends. One that the controller could not be told about
// (unreachable) is dealt with again by a later read: started again while pending, failed
// when left running, as after a restart of the agent, but without stopping the other tasks.
func (w *machineTasks) ended(id, lock string, mine chan struct{}, retry bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, id)
	if retry {
		delete(w.taken, id)
		time.AfterFunc(monitorRetry, w.wake)
	}
	if mine != nil {
		close(mine)
		if w.tails[lock] == mine {
			delete(w.tails, lock)
		}
	}
}

// run waits for the task's turn and lock, then runs it. The lock is released once the task is
// finished, so that the next holder starts after.
func (w *machineTasks) run(ctx context.Context, t *pb.Task, r *machineTask, lock string, prev <-chan struct{}) error {
	if prev != nil {
		select {
		case <-prev:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if lock != "" {
		release, err := acquireLock(ctx, r.abort, w.a.dir, lock)
		switch {
		case errors.Is(err, errLockAbandoned):
			return nil // cancelled while pending: the controller finished it
		case err != nil && ctx.Err() == nil:
			_, err = w.q.finish(ctx, t.GetId(), taskOutcome{status: taskFailed, message: lockFailure(err)})
			return err
		case err != nil:
			return err
		}
		defer release()
	}
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.slots }()
	return w.a.runTask(ctx, w.q, t, r.abort)
}

// runTask starts a pending task, runs it and records how it ended.
func (a *machineAgent) runTask(ctx context.Context, q *taskQueue, t *pb.Task, abort <-chan struct{}) error {
	started, skip, err := q.start(ctx, t.GetId())
	if skip {
		return nil
	}
	if err != nil {
		return fmt.Errorf("starting task %s: %w", t.GetId(), err)
	}
	var out taskOutcome
	if run, err := newTaskRun(started); err != nil {
		out = taskOutcome{status: taskFailed, message: err.Error()}
	} else {
		out = a.execCommand(ctx, run, abort)
	}
	if ctx.Err() != nil {
		return ctx.Err() // the task stays running: the next agent fails it
	}
	_, err = q.finish(ctx, t.GetId(), out)
	return err
}

// execCommand runs a juju exec command on the machine, as Juju's machine actions worker does:
// /bin/bash with the agent's environment, completed whatever its return code (stdout and
// stderr always reported), failed with no results when killed at its time limit.
func (a *machineAgent) execCommand(ctx context.Context, run *taskRun, abort <-chan struct{}) taskOutcome {
	if run.name != execAction {
		return taskOutcome{status: taskFailed, message: "unexpected action " + run.name}
	}
	command, ok := run.params["command"].(string)
	if !ok {
		return taskOutcome{status: taskFailed, message: "invalid action parameters"}
	}
	// The command itself stays out of the model log: it may carry secrets.
	a.log.write("INFO", "juju.worker.machineactions", fmt.Sprintf("running exec task %s", run.id))
	dir, env := a.dir, os.Environ()
	if a.conf.isolated() {
		// As the machine's uid, in its home directory, with none of the agent's environment
		// (the controller's: it may hold the admin's own variables).
		home, err := ensureHome(a.dir, a.conf)
		if err != nil {
			return taskOutcome{status: taskFailed, message: err.Error()}
		}
		dir, env = home, []string{"PATH=" + systemPath, "HOME=" + home, "LANG=C.UTF-8"}
	}
	res := runProc(ctx, abort, procSpec{
		path: "/bin/bash", args: []string{"-c", command}, dir: dir, env: env, timeout: run.timeout(), as: a.conf,
	})
	switch {
	case res.stopped:
		return taskOutcome{}
	case res.startErr != nil:
		return taskOutcome{status: taskFailed, message: res.startErr.Error()}
	case res.aborted:
		return taskOutcome{status: taskAborted, message: "command cancelled"}
	case res.timedOut:
		return taskOutcome{status: taskFailed, message: "command cancelled"}
	}
	results := map[string]any{"return-code": res.execCode()}
	// Juju's machine worker names the encoding keys stdoutEncoding and stderrEncoding.
	storeOutput(results, "stdout", res.stdout, true, "Encoding")
	storeOutput(results, "stderr", res.stderr, true, "Encoding")
	return taskOutcome{status: taskCompleted, results: results}
}
