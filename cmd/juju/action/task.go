// Package action holds the commands that run charm actions and shell commands on units and
// machines, and follow what they did: run, exec, show-task, operations, show-operation,
// cancel-task, actions and show-action.
package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	// Juju renders the plain format's results with YAML 1.1 (yaml.v2): its layout is part of
	// what scripts and eyes expect.
	yamlv2 "go.yaml.in/yaml/v2"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// Plain is the default format of run, exec and show-task: the results for people.
const Plain output.Format = "plain"

// Task statuses.
const (
	statusPending = "pending"
	statusRunning = "running"
	statusFailed  = "failed"
)

// finished says whether a task or operation is done: anything but pending or running (Juju's
// rule, so aborting counts as done too).
func finished(status string) bool {
	return status != statusPending && status != statusRunning
}

// taskView is one task as run, exec and show-task print it (Juju's formatActionResult). Its
// fields are in alphabetical order, the order Juju's map gives them.
type taskView struct {
	ID      string   `json:"id" yaml:"id"`
	Log     []string `json:"log,omitempty" yaml:"log,omitempty"`
	Machine string   `json:"machine,omitempty" yaml:"machine,omitempty"`
	Message string   `json:"message,omitempty" yaml:"message,omitempty"`
	// Results holds what the action set with action-set, and return-code, stdout and stderr.
	Results map[string]any `json:"results,omitempty" yaml:"results,omitempty"`
	Status  string         `json:"status" yaml:"status"`
	Timing  *taskTiming    `json:"timing,omitempty" yaml:"timing,omitempty"`
	Unit    string         `json:"unit,omitempty" yaml:"unit,omitempty"`

	// returnCode is results' return-code, -1 when there is none.
	returnCode int
}

// taskTiming is when a task was queued, started and finished; unset times are left out.
type taskTiming struct {
	Completed string `json:"completed,omitempty" yaml:"completed,omitempty"`
	Enqueued  string `json:"enqueued,omitempty" yaml:"enqueued,omitempty"`
	Started   string `json:"started,omitempty" yaml:"started,omitempty"`
}

// newTaskView formats a task; times are local unless utc.
func newTaskView(t *jujupb.Task, utc bool) (*taskView, error) {
	v := &taskView{ID: t.GetId(), Status: t.GetStatus(), Message: t.GetMessage(), returnCode: -1}
	if isUnit(t.GetReceiver()) {
		v.Unit = t.GetReceiver()
	} else {
		v.Machine = t.GetReceiver()
	}
	results, err := decodeObject(t.GetResultsJson())
	if err != nil {
		return nil, fmt.Errorf("task %s: results: %w", t.GetId(), err)
	}
	if results != nil {
		v.returnCode = conformResults(results)
		if len(results) > 0 {
			v.Results = results
		}
	}
	for _, l := range t.GetLog() {
		v.Log = append(v.Log, formatTime(l.GetTime(), utc)+" "+l.GetMessage())
	}
	timing := taskTiming{
		Enqueued:  formatTime(t.GetEnqueued(), utc),
		Started:   formatTime(t.GetStarted(), utc),
		Completed: formatTime(t.GetCompleted(), utc),
	}
	if timing != (taskTiming{}) {
		v.Timing = &timing
	}
	return v, nil
}

// conformResults shapes results as Juju shows them: stdout and stderr only when not empty (CRLF
// made LF), return-code as an integer; it returns the return code, or -1 without one.
func conformResults(results map[string]any) int {
	for _, k := range []string{"stdout", "stderr"} {
		if s, ok := results[k].(string); ok && s != "" {
			results[k] = strings.ReplaceAll(s, "\r\n", "\n")
		} else {
			delete(results, k)
		}
	}
	rc, ok := results["return-code"]
	if !ok || rc == nil {
		delete(results, "return-code")
		return -1
	}
	code, err := strconv.Atoi(fmt.Sprint(rc))
	if err != nil {
		return -1
	}
	results["return-code"] = code
	return code
}

// decodeObject decodes a JSON object, integers as int64 (exact, and printed as integers by
// both encoders); empty data is nil.
func decodeObject(data []byte) (map[string]any, error) {
	if len(data) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return goNumbers(m).(map[string]any), nil
}

// formatTime renders Unix nanoseconds as Juju renders task times (Go's time.String, local
// unless utc); 0 is "".
func formatTime(nanos int64, utc bool) string {
	if nanos == 0 {
		return ""
	}
	return inZone(nanos, utc).String()
}

// formatTimePlain renders Unix nanoseconds for tables: 2006-01-02T15:04:05.
func formatTimePlain(nanos int64, utc bool) string {
	if nanos == 0 {
		return ""
	}
	return inZone(nanos, utc).Format("2006-01-02T15:04:05")
}

// formatClock renders Unix nanoseconds as a log line's time while following a task: 15:04:05.
func formatClock(nanos int64, utc bool) string {
	return inZone(nanos, utc).Format("15:04:05")
}

func inZone(nanos int64, utc bool) time.Time {
	t := time.Unix(0, nanos)
	if utc {
		return t.UTC()
	}
	return t.Local()
}

// isUnit tells a unit receiver ("mysql/0") from a machine one ("0", "0/lxd/1").
func isUnit(receiver string) bool { return names.IsValidUnit(receiver) }

// receiverTag is a receiver as Juju names it in progress lines: unit-mysql-0, machine-0-lxd-1.
func receiverTag(receiver string) string {
	kind := "machine"
	if isUnit(receiver) {
		kind = "unit"
	}
	return kind + "-" + strings.ReplaceAll(receiver, "/", "-")
}

// receiverReadable is a receiver as Juju names it in messages: "unit mysql/0", "machine 0".
func receiverReadable(receiver string) string {
	if isUnit(receiver) {
		return "unit " + receiver
	}
	return "machine " + receiver
}

// taskResults is what run and exec print: each task keyed by its receiver (the unit name or
// machine id), and show-task's plain format keyed by task id.
type taskResults map[string]*taskView

// filteredResultKeys are the results plain output shows apart from the action's own values.
var filteredResultKeys = map[string]bool{
	"return-code": true, "stdout": true, "stderr": true, "stdout-encoding": true, "stderr-encoding": true,
}

// plainTask is one task of the plain format when there are several.
type plainTask struct {
	ID      string `yaml:"id"`
	Message string `yaml:"message,omitempty"`
	Output  string `yaml:"output"`
	Status  string `yaml:"status"`
}

// WriteText writes the plain format of run and show-task: for one task, its values as YAML
// (or "Task <id> <status>" without results), a failure line first when it failed, then its
// stdout and stderr; for several, a YAML map of each one's id, status, message and values.
func (r taskResults) WriteText(w io.Writer, f output.Format) error {
	switch f {
	case execPlain:
		return r.writeExecPlain(w)
	case Plain:
		return r.writePlain(w, false)
	}
	return fmt.Errorf("format %q not supported", f)
}

// writePlain writes the plain format; with color, as Juju colours it: one task's failure line
// and values red when it failed, its values green otherwise (several tasks' YAML is plain).
func (r taskResults) writePlain(w io.Writer, color bool) error {
	plain := map[string]plainTask{}
	var stdout, stderr string
	for key, t := range r {
		p := plainTask{ID: t.ID, Message: t.Message, Status: t.Status}
		if t.Results != nil {
			own := map[string]any{}
			for k, v := range t.Results {
				k = strings.ToLower(k)
				if k == "stdout" {
					stdout = fmt.Sprint(v)
				}
				if k == "stderr" {
					stderr = fmt.Sprint(v)
				}
				if !filteredResultKeys[k] {
					own[k] = v
				}
			}
			if len(own) > 0 {
				data, err := yamlv2.Marshal(own)
				if err != nil {
					return err
				}
				p.Output = string(data)
			}
		} else {
			p.Output = fmt.Sprintf("Task %s %s\n", t.ID, t.Status)
		}
		plain[key] = p
	}
	if len(plain) > 1 {
		data, err := yamlv2.Marshal(plain)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	var b strings.Builder
	for _, p := range plain {
		if p.Status == statusFailed {
			b.WriteString(paint(color, sgrRed, fmt.Sprintf("Action id %s failed: %s\n", p.ID, p.Message)))
			b.WriteString(paint(color, sgrRed, p.Output) + "\n")
		} else {
			b.WriteString(paint(color, sgrGreen, p.Output) + "\n")
		}
	}
	if stdout != "" {
		b.WriteString(strings.Trim(stdout, "\n") + "\n")
	}
	if stderr != "" {
		b.WriteString(strings.Trim(stderr, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// goNumbers turns JSON numbers into int64 or float64, which YAML prints as numbers (a
// json.Number would be a quoted string).
func goNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = goNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = goNumbers(e)
		}
		return out
	}
	return v
}

// sortedKeys returns m's keys in natural order (mysql/2 before mysql/10).
func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), names.NaturalCompare)
}
