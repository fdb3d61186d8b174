package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/output"
)

// taskWatcher is the part of the client that follows tasks until they finish.
type taskWatcher interface {
	WatchTasks(ctx context.Context, model string, ids []string, fn func(*jujupb.Task) error) error
}

// defaultRunWait and defaultExecWait are how long run and exec wait for results when --wait
// is not given (Juju's defaults).
const (
	defaultRunWait  = 60 * time.Second
	defaultExecWait = 5 * time.Minute
)

// resolveWait applies Juju's --wait rules: --background excludes a positive --wait, 0 means the
// command's default, and a negative wait means no limit.
func resolveWait(wait time.Duration, background bool, def time.Duration) (time.Duration, error) {
	if background && wait > 0 {
		return 0, errors.New("cannot specify both --wait and --background")
	}
	if !background && wait == 0 {
		return def, nil
	}
	return wait, nil
}

// enqueued is what run and exec do with an operation once it is queued: report it, and unless
// in the background wait for its tasks and print their results.
type enqueued struct {
	IO     *output.Streams
	API    taskWatcher
	Model  string
	Format output.Format
	Output string
	UTC    bool
	Wait   time.Duration
	// Background only reports what was queued; HideProgress (exec) keeps the "Running
	// operation" and "Waiting for task" lines for --verbose.
	Background   bool
	HideProgress bool
	// Color colours the results, the ids in the progress lines and failed tasks' return
	// codes (useColor).
	Color bool
}

// id is an operation's or a task's id, coloured as Juju colours it.
func (e *enqueued) id(id string) string { return paint(e.Color, sgrCyan, id) }

func (e *enqueued) progressf(format string, args ...any) {
	if e.HideProgress {
		e.IO.Verbosef(format, args...)
		return
	}
	e.IO.Infof(format, args...)
}

// report prints the operation's tasks and, unless in the background, waits for them and
// writes their results. A task that ended with a non-zero return code fails the command after
// the results are written, as in Juju.
func (e *enqueued) report(ctx context.Context, op *jujupb.Operation) error {
	tasks := op.GetTasks()
	if len(tasks) == 0 {
		return fmt.Errorf("operation %s has no tasks", op.GetId())
	}
	if e.Background {
		return e.reportBackground(op)
	}
	plural := ""
	if len(tasks) > 1 {
		plural = "s"
	}
	e.progressf("Running operation %s with %s task%s", e.id(op.GetId()), paint(e.Color, sgrMagenta, len(tasks)), plural)
	for _, t := range tasks {
		e.progressf("  - task %s on %s", e.id(t.GetId()), paint(e.Color, sgrReceiver, receiverTag(t.GetReceiver())))
	}
	e.progressf("")
	done, err := e.wait(ctx, op)
	if err != nil {
		return err
	}
	view := taskResults{}
	var failed []string
	for _, t := range tasks {
		v, err := newTaskView(done[t.GetId()], e.UTC)
		if err != nil {
			return err
		}
		view[t.GetReceiver()] = v
		if v.returnCode >= 1 {
			failed = append(failed, fmt.Sprintf(" - id %q with return code %s", v.ID, paint(e.Color, sgrMagenta, v.returnCode)))
		}
	}
	if err := writeResults(e.Output, e.Format, view, e.IO, e.Color); err != nil {
		return err
	}
	if len(failed) == 0 {
		return nil
	}
	slices.Sort(failed)
	plural = ""
	if len(failed) > 1 {
		plural = "s"
	}
	// Juju's words, final newline included: scripts (and jubilant) look for "task failed".
	return fmt.Errorf("the following task%s failed:\n%s\n\nuse 'juju show-task' to inspect the failure%s\n",
		plural, strings.Join(failed, "\n"), plural)
}

// reportBackground says where to follow the operation; with several tasks it prints their
// ids on stdout as YAML, as Juju does.
func (e *enqueued) reportBackground(op *jujupb.Operation) error {
	tasks := op.GetTasks()
	if len(tasks) == 1 {
		e.IO.Infof("Scheduled operation %s with task %s", e.id(op.GetId()), e.id(tasks[0].GetId()))
		e.IO.Infof("Check operation status with 'juju show-operation %s'", e.id(op.GetId()))
		e.IO.Infof("Check task status with 'juju show-task %s'", e.id(tasks[0].GetId()))
		return nil
	}
	e.IO.Infof("Scheduled operation %s with %s tasks", e.id(op.GetId()), paint(e.Color, sgrMagenta, len(tasks)))
	ids := map[string]map[string]string{}
	for _, t := range tasks {
		ids[t.GetReceiver()] = map[string]string{"id": t.GetId()}
	}
	var doc bytes.Buffer
	if err := output.Write(&doc, output.YAML, ids); err != nil {
		return err
	}
	if e.Color {
		var colored bytes.Buffer
		colorYAML(&colored, doc.String())
		doc = colored
	}
	if _, err := e.IO.Out.Write(doc.Bytes()); err != nil {
		return err
	}
	e.IO.Infof("Check operation status with 'juju show-operation %s'", e.id(op.GetId()))
	e.IO.Infof("Check task status with 'juju show-task <id>'")
	return nil
}

// wait follows the operation's tasks until each has finished and returns them by id. It says
// which task it waits for, as Juju does one after the other, and with a single task prints
// the lines the action logs as they come. Past --wait it fails naming the receivers it had no
// result from; interrupted (Ctrl-C), it stops waiting and says the tasks keep running.
func (e *enqueued) wait(ctx context.Context, op *jujupb.Operation) (map[string]*jujupb.Task, error) {
	tasks := op.GetTasks()
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.GetId()
	}
	watchCtx, cancel := ctx, context.CancelFunc(func() {})
	if e.Wait >= 0 {
		watchCtx, cancel = context.WithTimeout(ctx, e.Wait)
	}
	defer cancel()

	done := map[string]*jujupb.Task{}
	next, logged, haveLogs := 0, 0, false
	e.progressf("Waiting for task %s...\n", e.id(ids[0]))
	err := e.API.WatchTasks(watchCtx, e.Model, ids, func(t *jujupb.Task) error {
		if len(ids) == 1 {
			for _, l := range t.GetLog()[min(logged, len(t.GetLog())):] {
				e.IO.Infof("%s %s", formatClock(l.GetTime(), e.UTC), l.GetMessage())
				haveLogs = true
			}
			logged = max(logged, len(t.GetLog()))
		}
		if finished(t.GetStatus()) {
			done[t.GetId()] = t
		}
		for next < len(ids) && done[ids[next]] != nil {
			if next == 0 && haveLogs {
				e.progressf("\n") // the logs apart from the results
			}
			next++
			if next < len(ids) {
				e.progressf("Waiting for task %s...\n", e.id(ids[next]))
			}
		}
		if next == len(ids) {
			return errAllDone
		}
		return nil
	})
	if errors.Is(err, errAllDone) {
		return done, nil
	}
	if next == 0 && haveLogs {
		e.progressf("\n")
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("stopped waiting for operation %s; its tasks keep running: see 'juju show-operation %s'",
			op.GetId(), op.GetId())
	case errors.Is(err, context.DeadlineExceeded) || watchCtx.Err() != nil:
		return nil, timedOut(tasks[next:])
	case err != nil:
		return nil, fmt.Errorf("waiting for operation %s: %w", op.GetId(), err)
	}
	return nil, fmt.Errorf("waiting for operation %s: the controller stopped reporting before its tasks finished", op.GetId())
}

// errAllDone ends a watch once every task has finished.
var errAllDone = errors.New("all tasks finished")

// timedOut is Juju's error for a wait that ran out: the receivers still without a result.
func timedOut(pending []*jujupb.Task) error {
	pending = slices.Clone(pending)
	// Juju sorts the receivers by their tags.
	slices.SortFunc(pending, func(a, b *jujupb.Task) int {
		return strings.Compare(receiverTag(a.GetReceiver()), receiverTag(b.GetReceiver()))
	})
	readable := make([]string, len(pending))
	for i, t := range pending {
		readable[i] = receiverReadable(t.GetReceiver())
	}
	return fmt.Errorf("timed out waiting for results from: %s", strings.Join(readable, ", "))
}
