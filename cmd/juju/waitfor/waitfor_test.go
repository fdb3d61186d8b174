package waitfor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdWaitFor(t *testing.T) {
	unitFields := "name, application, life, workload-status, workload-message, agent-status, machine, machine-id, public-address, principal, subordinate, leader or machines"
	tests := []struct {
		args, wantErr                 string
		wantKind, wantName, wantQuery string
		wantTimeout                   time.Duration
	}{
		{args: "application mysql", wantKind: "application", wantName: "mysql", wantQuery: `status=="active"`, wantTimeout: 10 * time.Minute},
		{args: "unit mysql/0", wantKind: "unit", wantName: "mysql/0", wantQuery: `workload-status=="active"`, wantTimeout: 10 * time.Minute},
		{args: "machine 0/lxd/1 --timeout 30s", wantKind: "machine", wantName: "0/lxd/1", wantQuery: `status=="started"`, wantTimeout: 30 * time.Second},
		{args: `application mysql --query life=="dead"||scale=="0"`, wantKind: "application", wantName: "mysql",
			wantQuery: `life=="dead" || scale=="0"`, wantTimeout: 10 * time.Minute},
		{args: "model default", wantKind: "model", wantName: "default", wantQuery: `life=="alive" && status=="available"`, wantTimeout: 10 * time.Minute},
		{args: `model local:admin/prod --query forEach(units,u=>u.agent-status=="idle")`, wantKind: "model", wantName: "local:admin/prod",
			wantQuery: `forEach(units, u => u.agent-status=="idle")`, wantTimeout: 10 * time.Minute},
		{args: "", wantErr: "no entity kind specified; use model, application, unit or machine"},
		{args: "relation 1", wantErr: `unknown entity kind "relation"; use model, application, unit or machine`},
		{args: "unit", wantErr: "no unit specified"},
		{args: "model", wantErr: "no model specified"},
		{args: "unit mysql/0 extra", wantErr: `unrecognized args: ["extra"]`},
		{args: "application My-SQL", wantErr: `invalid application name "My-SQL", unexpected uppercase character`},
		{args: "unit mysql", wantErr: `invalid unit name "mysql"`},
		{args: "machine x", wantErr: `invalid machine id "x"`},
		{args: "model Prod", wantErr: `invalid model name "Prod"`},
		{args: "model prod -m other", wantErr: "-m cannot be used with wait-for model: the model is its argument"},
		{args: `unit mysql/0 --query status=="active"`,
			wantErr: `invalid --query: unknown field "status" for unit; use ` + unitFields},
		{args: "unit mysql/0 --timeout 0s", wantErr: "--timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *waitOptions
			cmd := NewCmdWaitFor(cmdutil.TestFactory(), func(o *waitOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Kind != tt.wantKind || got.Name != tt.wantName || got.query.String() != tt.wantQuery || got.Timeout != tt.wantTimeout {
				t.Errorf("opts = %+v, query %s", got, got.query)
			}
		})
	}
}

func TestParseQuery(t *testing.T) {
	unitFields := "name, application, life, workload-status, workload-message, agent-status, machine, machine-id, public-address, principal, subordinate, leader or machines"
	tests := []struct {
		kind, in, want, wantErr string
	}{
		{kind: "unit", in: `workload-status=="active"`, want: `workload-status=="active"`},
		{kind: "unit", in: ` life == 'dying'  `, want: `life=="dying"`},
		{kind: "application", in: `life=="alive" && status!="error" || life=="dead"`, want: `life=="alive" && status!="error" || life=="dead"`},
		{kind: "machine", in: `status==""`, want: `status==""`},
		{kind: "application", in: `scale=="10"`, want: `scale=="10"`},
		{kind: "application", in: `scale>=2 && exposed==false`, want: `scale>=2 && exposed==false`},
		{kind: "unit", in: `(life=="dead")`, want: `(life=="dead")`},
		{kind: "unit", in: `leader && (agent-status=="idle" || agent-status=="executing")`, want: `leader && (agent-status=="idle" || agent-status=="executing")`},
		// Juju's forEach, with its lambda; nested collections; len.
		{kind: "application", in: `forEach(units, unit => unit.workload-status == "active")`, want: `forEach(units, unit => unit.workload-status=="active")`},
		{kind: "model", in: `forEach(applications, app => forEach(app.units, u => u.agent-status=="idle"))`, want: ""},
		{kind: "model", in: `len(machines) > 2 && forEach(machines, m => m.status=="started")`, want: `len(machines)>2 && forEach(machines, m => m.status=="started")`},
		{kind: "unit", in: `forEach(machines, m => m.instance-status=="running" && life=="alive")`, want: `forEach(machines, m => m.instance-status=="running" && life=="alive")`},
		{kind: "unit", in: ``, wantErr: "empty query"},
		{kind: "unit", in: `   `, wantErr: "empty query"},
		{kind: "unit", in: `foo=="x"`, wantErr: `unknown field "foo" for unit; use ` + unitFields},
		{kind: "machine", in: `scale=="1"`, wantErr: `unknown field "scale" for machine; use id, life, status, agent-status, instance-status or base`},
		{kind: "unit", in: `life="dead"`, wantErr: `use == to compare, not = (at "=\"dead\"")`},
		{kind: "unit", in: `life=="dead`, wantErr: `unterminated value "dead`},
		{kind: "unit", in: `life=="dead" &&`, wantErr: "expected a field name at the end of the query"},
		{kind: "unit", in: `life=="dead" & machine=="0"`, wantErr: `unexpected "&" at "& machine==\"0\""`},
		{kind: "unit", in: `life=="dead" machine=="0"`, wantErr: `expected && or || at "machine==\"0\""`},
		{kind: "unit", in: `(life=="dead"`, wantErr: `expected ) at ""`},
		{kind: "unit", in: `life=="gone"`, wantErr: `invalid life "gone"; use alive, dying or dead`},
		{kind: "application", in: `scale=="two"`, wantErr: `invalid scale "two"; use a number of units`},
		{kind: "application", in: `scale=="02"`, wantErr: `invalid scale "02"; use a number of units`},
		{kind: "unit", in: `life==dead`, wantErr: `unknown field "dead" for unit; use ` + unitFields},
		{kind: "unit", in: `life`, wantErr: `the query is a string, not a condition: compare it, as in workload-status=="active"`},
		{kind: "unit", in: `life==3`, wantErr: `cannot compare life (a string) with 3 (an int)`},
		{kind: "unit", in: `leader<true`, wantErr: `cannot order booleans in leader<true`},
		{kind: "unit", in: `life=="alive" || 3`, wantErr: `|| needs conditions on both sides, got 3 (an int)`},
		{kind: "application", in: `forEach(units, unit => unit.status=="active")`,
			wantErr: `unknown field "status" for unit; use ` + unitFields},
		{kind: "application", in: `forEach(units, u => u)`, wantErr: `u is a unit: use one of its fields, as in u.name`},
		{kind: "application", in: `forEach(units, u => u.life)`, wantErr: `the lambda of forEach must be a condition, got a string in u => u.life`},
		{kind: "application", in: `forEach(status, u => u.life=="alive")`, wantErr: `forEach takes a collection and a lambda, as in forEach(units, unit => unit.workload-status=="active")`},
		{kind: "application", in: `forEach(units)`, wantErr: `forEach takes a collection and a lambda, as in forEach(units, unit => unit.workload-status=="active")`},
		{kind: "application", in: `forEach(units, life => life.name=="x")`, wantErr: `the variable "life" of life => life.name=="x" hides the field "life": name it otherwise`},
		{kind: "application", in: `unit.life=="alive"`, wantErr: `unknown variable "unit" in unit.life: name the elements of a collection with forEach, as in forEach(units, unit => unit.life=="alive")`},
		{kind: "application", in: `x => x.life=="alive"`, wantErr: `expected && or || at "=> x.life==\"alive\""`},
		{kind: "application", in: `len(status, units)>1`, wantErr: `len takes one argument, got 2`},
		{kind: "application", in: `len(exposed)>1`, wantErr: `len takes a collection or a string, got a bool`},
		{kind: "application", in: `all(units)`, wantErr: `unknown function "all"; use len or forEach`},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.in, func(t *testing.T) {
			q, err := parseQuery(tt.kind, tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = strings.ReplaceAll(tt.in, " == ", "==")
			}
			if q.String() != want {
				t.Errorf("query = %s, want %s", q, want)
			}
		})
	}
}

func TestQueryMatch(t *testing.T) {
	q, err := parseQuery("application", `life=="alive" && status=="active" || life=="dead"`)
	if err != nil {
		t.Fatal(err)
	}
	appEntity := func(life, status string) *entity {
		return readEntity("application", "mysql", model([]*jujupb.ApplicationStatus{{Name: "mysql", Life: life, Status: &jujupb.StatusInfo{Status: status}}}))
	}
	tests := []struct {
		e    *entity
		want bool
	}{
		{appEntity("alive", "active"), true},
		{appEntity("", "active"), true}, // no life is alive
		{appEntity("alive", "waiting"), false},
		{appEntity("dying", "active"), false},
		{readEntity("application", "mysql", model(nil)), true},
	}
	for _, tt := range tests {
		if got := q.match(tt.e); got != tt.want {
			t.Errorf("match(%v) = %v", tt.e.values, got)
		}
	}
	neg, _ := parseQuery("unit", `machine!=""`)
	if neg.match(readEntity("unit", "mysql/0", model(nil))) ||
		!neg.match(readEntity("unit", "mysql/0", model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0"))}))) {
		t.Error(`machine!="" wrong`)
	}
}

// forEach holds when its lambda holds for every element, and never over no elements (as in
// Juju); collections nest; machines are those of the units.
func TestQueryForEach(t *testing.T) {
	fs := model([]*jujupb.ApplicationStatus{
		app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0"), unit("mysql/1", "alive", "waiting", "executing", "1")),
		app("wordpress", "alive", unit("wordpress/0", "alive", "active", "idle", "0")),
		app("empty", "alive"),
	}, machine("0", "alive", "started", "running"), machine("1", "alive", "pending", "allocating"), machine("2", "alive", "started", "running"))
	tests := []struct {
		kind, name, query string
		want              bool
	}{
		{"application", "wordpress", `forEach(units, unit => unit.workload-status=="active")`, true},
		{"application", "mysql", `forEach(units, unit => unit.workload-status=="active")`, false},
		{"application", "mysql", `forEach(units, unit => unit.life=="alive") && scale==2`, true},
		{"application", "empty", `forEach(units, unit => unit.workload-status=="active")`, false},
		{"application", "empty", `scale==0 || forEach(units, unit => unit.workload-status=="active")`, true},
		{"application", "mysql", `forEach(machines, m => m.status=="started")`, false},
		{"application", "wordpress", `forEach(machines, m => m.status=="started")`, true},
		{"application", "mysql", `len(machines)==2`, true},
		{"unit", "mysql/1", `forEach(machines, m => m.instance-status=="allocating" && m.id==machine)`, true},
		{"model", "default", `len(units)==3 && len(applications)==3 && len(machines)==3`, true},
		{"model", "default", `forEach(applications, a => a.name=="empty" || forEach(a.units, u => u.agent-status=="idle"))`, false},
		{"model", "default", `forEach(applications, a => a.name!="mysql" || len(a.units)==2)`, true},
		{"model", "default", `forEach(units, u => u.workload-status=="active" || u.name=="mysql/1")`, true},
		{"model", "default", `life=="alive" && status=="available"`, true},
	}
	fs.Model.Status = &jujupb.StatusInfo{Status: "available"}
	for _, tt := range tests {
		q, err := parseQuery(tt.kind, tt.query)
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		if got := q.match(readEntity(tt.kind, tt.name, fs)); got != tt.want {
			t.Errorf("%s %s %s = %v, want %v", tt.kind, tt.name, tt.query, got, tt.want)
		}
	}
}

// step is a change of the fake model: the state it moves to, announced by events watch events.
type step struct {
	state  *jujupb.FullStatusResponse
	events int
}

// fakeModel serves FullStatus from its current state and a watch that moves it through steps.
// Step i happens only once the model has been read i times, so each change lands after the
// command looked: the order of reads and changes is fixed.
type fakeModel struct {
	mu       sync.Mutex
	state    *jujupb.FullStatusResponse
	steps    []step
	reads    int
	read     chan struct{}
	watchReq *jujupb.WatchRequest
	watchErr error // the watch ends with it once the steps are done
	closed   bool
	// hold, when set, runs inside each read (the model unlocked), given the read's number.
	hold    func(read int)
	onWatch func(*fakeWatcher)
}

func newFakeModel(initial *jujupb.FullStatusResponse, steps ...step) *fakeModel {
	return &fakeModel{state: initial, steps: steps, read: make(chan struct{}, 1)}
}

func (m *fakeModel) FullStatus(_ context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error) {
	// wait-for model reads the whole model, the others their entity.
	if model != "uuid-default" || len(patterns) > 1 {
		return nil, fmt.Errorf("asked %s %q", model, patterns)
	}
	m.mu.Lock()
	m.reads++
	n := m.reads
	m.mu.Unlock()
	select {
	case m.read <- struct{}{}:
	default:
	}
	if m.hold != nil {
		m.hold(n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == nil {
		return nil, apierr.Errorf(apierr.NotFound, "model not found")
	}
	return m.state, nil
}

func (m *fakeModel) Watch(_ context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watchReq = req
	w := &fakeWatcher{m: m, done: make(chan struct{})}
	if m.onWatch != nil {
		m.onWatch(w)
	}
	return w, nil
}

type fakeWatcher struct {
	m       *fakeModel
	done    chan struct{}
	once    sync.Once
	step    int // steps taken
	pending int // events of the current step still to deliver
}

func (w *fakeWatcher) Next() (*jujupb.WatchEvent, error) {
	m := w.m
	for {
		m.mu.Lock()
		if w.pending > 0 {
			w.pending--
			m.mu.Unlock()
			return &jujupb.WatchEvent{Kind: "unit"}, nil
		}
		if w.step < len(m.steps) && m.reads > w.step {
			s := m.steps[w.step]
			w.step++
			m.state = s.state
			w.pending = s.events - 1
			m.mu.Unlock()
			return &jujupb.WatchEvent{Kind: "unit"}, nil
		}
		if w.step == len(m.steps) && m.watchErr != nil {
			m.mu.Unlock()
			return nil, m.watchErr
		}
		m.mu.Unlock()
		select {
		case <-m.read:
		case <-w.done:
			return nil, context.Canceled
		}
	}
}

func (w *fakeWatcher) Close() {
	w.once.Do(func() {
		close(w.done)
		w.m.mu.Lock()
		w.m.closed = true
		w.m.mu.Unlock()
	})
}

func model(apps []*jujupb.ApplicationStatus, machines ...*jujupb.MachineStatus) *jujupb.FullStatusResponse {
	return &jujupb.FullStatusResponse{Model: &jujupb.ModelStatus{Name: "default", Life: "alive", Status: &jujupb.StatusInfo{Status: "available"}},
		Applications: apps, Machines: machines}
}

func unit(name, life, workload, agent, machine string) *jujupb.UnitStatus {
	return &jujupb.UnitStatus{Name: name, Life: life, Machine: machine,
		WorkloadStatus: &jujupb.StatusInfo{Status: workload}, AgentStatus: &jujupb.StatusInfo{Status: agent}}
}

func app(name, life string, units ...*jujupb.UnitStatus) *jujupb.ApplicationStatus {
	return &jujupb.ApplicationStatus{Name: name, Life: life, Units: units}
}

func machine(id, life, agent, instance string) *jujupb.MachineStatus {
	return &jujupb.MachineStatus{Id: id, Life: life,
		AgentStatus: &jujupb.StatusInfo{Status: agent}, InstanceStatus: &jujupb.StatusInfo{Status: instance}}
}

func runWait(t *testing.T, m *fakeModel, kind, name, q string, timeout time.Duration) (string, string, error) {
	t.Helper()
	if q == "" {
		q = defaultQueries[kind]
	}
	parsed, err := parseQuery(kind, q)
	if err != nil {
		t.Fatal(err)
	}
	ios, out, errOut := output.TestStreams()
	ref := &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}
	opts := &waitOptions{IO: ios, Kind: kind, Name: name, Timeout: timeout, query: parsed,
		ResolveModel: func(context.Context) (*cmdutil.ModelRef, error) { return ref, nil },
		LookupModel: func(_ context.Context, name string) (*cmdutil.ModelRef, error) {
			if name != "default" {
				t.Errorf("looked up model %q", name)
			}
			return ref, nil
		},
		Client: func(_ context.Context, controller string) (waitAPI, error) {
			if want := map[bool]string{true: "local", false: ""}[kind == "model"]; controller != want {
				t.Errorf("connected to controller %q, want %q", controller, want)
			}
			return m, nil
		}}
	err = waitRun(context.Background(), opts)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watchReq != nil && !m.closed {
		t.Error("watch left open")
	}
	return out.String(), errOut.String(), err
}

func TestWaitRun(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	active := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0"))})
	noUnits := model([]*jujupb.ApplicationStatus{app("mysql", "alive")})
	dying := model([]*jujupb.ApplicationStatus{app("mysql", "dying", unit("mysql/0", "dying", "active", "idle", "0"))})
	gone := model(nil)
	tests := []struct {
		name, kind, entity, query string
		m                         *fakeModel
		wantStderr                string
		wantReads                 int
	}{
		{name: "already satisfied", kind: "unit", entity: "mysql/0", m: newFakeModel(active),
			wantStderr: "unit \"mysql/0\" reached workload-status==\"active\"\n", wantReads: 1},
		{name: "after events", kind: "application", entity: "mysql",
			m:          newFakeModel(noUnits, step{state: waiting, events: 1}, step{state: active, events: 1}),
			wantStderr: "application \"mysql\" reached status==\"active\"\n", wantReads: 3},
		{name: "burst read once", kind: "unit", entity: "mysql/0", query: `agent-status=="idle" && machine=="0"`,
			m:          newFakeModel(waiting, step{state: waiting, events: 1}, step{state: active, events: 50}),
			wantStderr: "unit \"mysql/0\" reached agent-status==\"idle\" && machine==\"0\"\n"},
		{name: "gone", kind: "application", entity: "mysql", query: `life=="dead"`,
			m:          newFakeModel(active, step{state: dying, events: 1}, step{state: gone, events: 1}),
			wantStderr: "application \"mysql\" is gone\n", wantReads: 3},
		{name: "unit gone", kind: "unit", entity: "mysql/0", query: `life=="dead"`,
			m:          newFakeModel(dying, step{state: noUnits, events: 1}),
			wantStderr: "unit \"mysql/0\" is gone\n", wantReads: 2},
		{name: "appears", kind: "machine", entity: "1",
			m: newFakeModel(model(nil), step{state: model(nil, machine("1", "alive", "pending", "allocating")), events: 1},
				step{state: model(nil, machine("1", "alive", "started", "running")), events: 1}),
			wantStderr: "machine \"1\" reached status==\"started\"\n", wantReads: 3},
		{name: "scale", kind: "application", entity: "mysql", query: `scale=="0"`,
			m:          newFakeModel(active, step{state: noUnits, events: 1}),
			wantStderr: "application \"mysql\" reached scale==\"0\"\n", wantReads: 2},
		{name: "forEach", kind: "application", entity: "mysql", query: `forEach(units, unit => unit.workload-status=="active")`,
			m:          newFakeModel(noUnits, step{state: waiting, events: 1}, step{state: active, events: 1}),
			wantStderr: "application \"mysql\" reached forEach(units, unit => unit.workload-status==\"active\")\n", wantReads: 3},
		{name: "model", kind: "model", entity: "default", query: `forEach(units, u => u.agent-status=="idle")`,
			m:          newFakeModel(waiting, step{state: active, events: 1}),
			wantStderr: "model \"default\" reached forEach(units, u => u.agent-status==\"idle\")\n", wantReads: 2},
		// A removed model is gone: life "dead".
		{name: "model gone", kind: "model", entity: "default", query: `life=="dead"`,
			m:          newFakeModel(active, step{state: nil, events: 1}),
			wantStderr: "model \"default\" is gone\n", wantReads: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWait(t, tt.m, tt.kind, tt.entity, tt.query, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if out != "" || errOut != tt.wantStderr {
				t.Errorf("stdout %q, stderr %q, want %q", out, errOut, tt.wantStderr)
			}
			if tt.wantReads != 0 && tt.m.reads != tt.wantReads {
				t.Errorf("read the model %d times, want %d", tt.m.reads, tt.wantReads)
			}
		})
	}
}

func TestWaitRunBurstIsCoalesced(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	active := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0"))})
	// 200 events arrive while the first read is under way; the model then changes once more.
	m := newFakeModel(waiting, step{state: waiting, events: 200}, step{state: active, events: 1})
	var w *fakeWatcher
	m.hold = func(read int) {
		if read != 1 {
			return
		}
		for {
			m.mu.Lock()
			delivered := w != nil && w.step == 1 && w.pending == 0
			m.mu.Unlock()
			if delivered {
				time.Sleep(10 * time.Millisecond) // let the last event reach the command
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	m.onWatch = func(fw *fakeWatcher) { w = fw }
	if _, _, err := runWait(t, m, "unit", "mysql/0", "", time.Minute); err != nil {
		t.Fatal(err)
	}
	// One read for the burst, one for the last change, at most one for a late wake-up.
	if m.reads > 4 {
		t.Errorf("read the model %d times for 201 events: bursts are not coalesced", m.reads)
	}
}

func TestWaitRunWatchTargets(t *testing.T) {
	tests := []struct {
		kind, name string
		want       string
	}{
		{"application", "mysql", "application:mysql unit:mysql/"},
		{"unit", "mysql/0", "unit:mysql/0 application:mysql"},
		{"machine", "0/lxd/1", "machine:0/lxd/1"},
		{"model", "default", "model:"},
	}
	for _, tt := range tests {
		m := newFakeModel(model(nil))
		if tt.kind == "model" {
			m = newFakeModel(nil)
		}
		if _, _, err := runWait(t, m, tt.kind, tt.name, `life=="dead"`, time.Minute); err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, target := range m.watchReq.GetTargets() {
			got += " " + target.GetKind() + ":" + target.GetId()
		}
		if got[1:] != tt.want || m.watchReq.GetModel() != "uuid-default" {
			t.Errorf("%s %s watched %q in %q, want %q", tt.kind, tt.name, got[1:], m.watchReq.GetModel(), tt.want)
		}
	}
}

// A query that reads machines also watches them.
func TestWaitRunWatchesMachinesWhenRead(t *testing.T) {
	m := newFakeModel(model(nil))
	if _, _, err := runWait(t, m, "application", "mysql", `life=="dead" || forEach(machines, x => x.status=="started")`, time.Minute); err != nil {
		t.Fatal(err)
	}
	if targets := m.watchReq.GetTargets(); len(targets) != 3 || targets[2].GetKind() != "machine" || targets[2].GetId() != "" {
		t.Errorf("targets = %v", targets)
	}
}

func TestWaitRunTimeout(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	tests := []struct {
		name, kind, entity, query string
		m                         *fakeModel
		wantErr                   string
	}{
		// Last seen is life and what the query reads.
		{name: "unit", kind: "unit", entity: "mysql/0", m: newFakeModel(waiting),
			wantErr: `timed out waiting for unit "mysql/0" to reach workload-status=="active"; last seen: life=alive workload-status=waiting`},
		{name: "application", kind: "application", entity: "mysql", m: newFakeModel(waiting),
			wantErr: `timed out waiting for application "mysql" to reach status=="active"; last seen: life=alive status=waiting`},
		{name: "forEach", kind: "application", entity: "mysql", query: `scale>=1 && forEach(units, u => u.workload-status=="active" && u.leader)`, m: newFakeModel(waiting),
			wantErr: `timed out waiting for application "mysql" to reach scale>=1 && forEach(units, u => u.workload-status=="active" && u.leader); ` +
				`last seen: life=alive scale=1; units: mysql/0 (workload-status=waiting leader=false)`},
		{name: "nested", kind: "model", entity: "default", query: `forEach(applications, a => len(a.units)>0 && forEach(a.units, u => u.leader))`,
			m: newFakeModel(model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0")), app("empty", "alive")})),
			wantErr: `timed out waiting for model "default" to reach forEach(applications, a => len(a.units)>0 && forEach(a.units, u => u.leader)); ` +
				`last seen: life=alive; applications: mysql (units=mysql/0), empty (units=none)`},
		{name: "model", kind: "model", entity: "default", query: `forEach(machines, m => m.status=="started")`, m: newFakeModel(model(nil)),
			wantErr: `timed out waiting for model "default" to reach forEach(machines, m => m.status=="started"); last seen: life=alive; machines: none`},
		{name: "absent", kind: "machine", entity: "3", m: newFakeModel(model(nil)),
			wantErr: `timed out waiting for machine "3" to reach status=="started"; last seen: not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWait(t, tt.m, tt.kind, tt.entity, tt.query, 50*time.Millisecond)
			cmdtest.CheckErr(t, err, tt.wantErr, false)
			if out != "" || errOut != "" {
				t.Errorf("stdout %q, stderr %q", out, errOut)
			}
		})
	}
}

func TestWaitRunWatchFails(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	m := newFakeModel(waiting)
	m.watchErr = apierr.Errorf(apierr.Unavailable, "controller shutting down")
	_, _, err := runWait(t, m, "unit", "mysql/0", "", time.Minute)
	if !errors.Is(err, apierr.Unavailable) || err.Error() != `watching unit "mysql/0": controller shutting down` {
		t.Errorf("err = %v", err)
	}
}

func TestWaitRunCancelled(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	m := newFakeModel(waiting)
	ios, _, _ := output.TestStreams()
	q, _ := parseQuery("unit", defaultQueries["unit"])
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	opts := &waitOptions{IO: ios, Kind: "unit", Name: "mysql/0", Timeout: time.Minute, query: q,
		ResolveModel: func(context.Context) (*cmdutil.ModelRef, error) { return &cmdutil.ModelRef{UUID: "uuid-default"}, nil },
		Client:       func(context.Context, string) (waitAPI, error) { return m, nil }}
	err := waitRun(ctx, opts)
	// Ctrl-C is "interrupted" (exit 1, docs/scripting.md), never "context canceled".
	want := `interrupted waiting for unit "mysql/0" to reach workload-status=="active"; last seen: life=alive workload-status=waiting`
	if !errors.Is(err, cmdutil.ErrInterrupted) || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// Interrupted at once (the fake answers the first read all the same): still "interrupted".
func TestWaitRunCancelledAtOnce(t *testing.T) {
	m := newFakeModel(model(nil))
	ios, _, _ := output.TestStreams()
	q, _ := parseQuery("machine", defaultQueries["machine"])
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := &waitOptions{IO: ios, Kind: "machine", Name: "3", Timeout: time.Minute, query: q,
		ResolveModel: func(context.Context) (*cmdutil.ModelRef, error) { return &cmdutil.ModelRef{UUID: "uuid-default"}, nil },
		Client:       func(context.Context, string) (waitAPI, error) { return m, nil }}
	err := waitRun(ctx, opts)
	if want := `interrupted waiting for machine "3" to reach status=="started"; last seen: not found`; !errors.Is(err, cmdutil.ErrInterrupted) || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// With --quiet the success line goes: the exit code says it.
func TestWaitRunQuiet(t *testing.T) {
	active := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0"))})
	for _, tt := range []struct{ kind, name, query string }{
		{"application", "mysql", ""},
		{"machine", "3", `life=="dead"`}, // the "is gone" line
	} {
		ios, out, errOut := output.TestStreams()
		ios.Quiet = true
		q, _ := parseQuery(tt.kind, cmp.Or(tt.query, defaultQueries[tt.kind]))
		m := newFakeModel(active)
		opts := &waitOptions{IO: ios, Kind: tt.kind, Name: tt.name, Timeout: time.Minute, query: q,
			ResolveModel: func(context.Context) (*cmdutil.ModelRef, error) { return &cmdutil.ModelRef{UUID: "uuid-default"}, nil },
			Client:       func(context.Context, string) (waitAPI, error) { return m, nil }}
		if err := waitRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		if out.String() != "" || errOut.String() != "" {
			t.Errorf("%s %s -q: stdout %q, stderr %q, want nothing", tt.kind, tt.name, out, errOut)
		}
	}
}

// TestWaitForGolden keeps what wait-for says, as a script sees it: nothing on stdout, the
// outcome on stderr (an error as root prints it, exit 1).
func TestWaitForGolden(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	active := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "active", "idle", "0"))})
	tests := []struct {
		name, kind, entity, query string
		m                         *fakeModel
		timeout                   time.Duration
	}{
		{name: "reached", kind: "unit", entity: "mysql/0", m: newFakeModel(waiting, step{state: active, events: 1}), timeout: time.Minute},
		{name: "gone", kind: "application", entity: "mysql", query: `life=="dead"`, m: newFakeModel(active, step{state: model(nil), events: 1}), timeout: time.Minute},
		{name: "timeout", kind: "unit", entity: "mysql/0", query: `agent-status=="idle" || life=="dead"`, m: newFakeModel(waiting), timeout: 20 * time.Millisecond},
		{name: "foreach-timeout", kind: "application", entity: "mysql", query: `forEach(units, unit => unit.workload-status=="active")`, m: newFakeModel(waiting), timeout: 20 * time.Millisecond},
		{name: "model", kind: "model", entity: "default", m: newFakeModel(waiting), timeout: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWait(t, tt.m, tt.kind, tt.entity, tt.query, tt.timeout)
			if err != nil {
				errOut += "ERROR " + err.Error() + "\n"
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			golden.Assert(t, errOut, "wait-for/"+tt.name+".stderr.golden")
		})
	}
}
