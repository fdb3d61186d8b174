package waitfor

import (
	"context"
	"errors"
	"fmt"
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
		{args: "", wantErr: "no entity kind specified; use application, unit or machine"},
		{args: "relation 1", wantErr: `unknown entity kind "relation"; use application, unit or machine`},
		{args: "unit", wantErr: "no unit specified"},
		{args: "unit mysql/0 extra", wantErr: `unrecognized args: ["extra"]`},
		{args: "application My-SQL", wantErr: `invalid application name "My-SQL", unexpected uppercase character`},
		{args: "unit mysql", wantErr: `invalid unit name "mysql"`},
		{args: "machine x", wantErr: `invalid machine id "x"`},
		{args: `unit mysql/0 --query status=="active"`,
			wantErr: `invalid --query: unknown field "status" for unit; use life, workload-status, agent-status or machine`},
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
	tests := []struct {
		kind, in, want, wantErr string
	}{
		{kind: "unit", in: `workload-status=="active"`, want: `workload-status=="active"`},
		{kind: "unit", in: ` life == 'dying'  `, want: `life=="dying"`},
		{kind: "application", in: `life=="alive" && status!="error" || life=="dead"`, want: `life=="alive" && status!="error" || life=="dead"`},
		{kind: "machine", in: `status==""`, want: `status==""`},
		{kind: "application", in: `scale=="10"`, want: `scale=="10"`},
		{kind: "unit", in: ``, wantErr: "empty query"},
		{kind: "unit", in: `   `, wantErr: "empty query"},
		{kind: "unit", in: `foo=="x"`, wantErr: `unknown field "foo" for unit; use life, workload-status, agent-status or machine`},
		{kind: "machine", in: `scale=="1"`, wantErr: `unknown field "scale" for machine; use life, status or instance-status`},
		{kind: "unit", in: `life="dead"`, wantErr: `expected == or != after "life"`},
		{kind: "unit", in: `life==dead`, wantErr: `expected a quoted value after "life=="`},
		{kind: "unit", in: `life=="dead`, wantErr: `unterminated value "dead`},
		{kind: "unit", in: `life=="dead" &&`, wantErr: "expected a field name at the end of the query"},
		{kind: "unit", in: `life=="dead" & machine=="0"`, wantErr: `expected && or || at "& machine==\"0\""`},
		{kind: "unit", in: `(life=="dead")`, wantErr: `expected a field name at "(life==\"dead\")"`},
		{kind: "unit", in: `life=="gone"`, wantErr: `invalid life "gone"; use alive, dying or dead`},
		{kind: "application", in: `scale=="two"`, wantErr: `invalid scale "two"; use a number of units`},
		{kind: "application", in: `scale=="02"`, wantErr: `invalid scale "02"; use a number of units`},
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
			if q.String() != tt.want {
				t.Errorf("query = %s, want %s", q, tt.want)
			}
		})
	}
}

func TestQueryMatch(t *testing.T) {
	q, err := parseQuery("application", `life=="alive" && status=="active" || life=="dead"`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		fields map[string]string
		want   bool
	}{
		{map[string]string{"life": "alive", "status": "active"}, true},
		{map[string]string{"life": "alive", "status": "waiting"}, false},
		{map[string]string{"life": "dying", "status": "active"}, false},
		{map[string]string{"life": "dead"}, true},
	}
	for _, tt := range tests {
		if got := q.match(tt.fields); got != tt.want {
			t.Errorf("match(%v) = %v", tt.fields, got)
		}
	}
	neg, _ := parseQuery("unit", `machine!=""`)
	if neg.match(map[string]string{"life": "alive"}) || !neg.match(map[string]string{"machine": "0"}) {
		t.Error(`machine!="" wrong`)
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
	if model != "uuid-default" || len(patterns) != 1 {
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
	return &jujupb.FullStatusResponse{Model: &jujupb.ModelStatus{Name: "default"}, Applications: apps, Machines: machines}
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
	opts := &waitOptions{IO: ios, Kind: kind, Name: name, Timeout: timeout, query: parsed,
		ResolveModel: func(context.Context) (*cmdutil.ModelRef, error) {
			return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
		},
		Client: func(context.Context) (waitAPI, error) { return m, nil }}
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
	}
	for _, tt := range tests {
		m := newFakeModel(model(nil))
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

func TestWaitRunTimeout(t *testing.T) {
	waiting := model([]*jujupb.ApplicationStatus{app("mysql", "alive", unit("mysql/0", "alive", "waiting", "allocating", ""))})
	tests := []struct {
		name, kind, entity string
		m                  *fakeModel
		wantErr            string
	}{
		{name: "unit", kind: "unit", entity: "mysql/0", m: newFakeModel(waiting),
			wantErr: `timed out waiting for unit "mysql/0" to reach workload-status=="active"; last seen: life=alive workload-status=waiting agent-status=allocating`},
		{name: "application", kind: "application", entity: "mysql", m: newFakeModel(waiting),
			wantErr: `timed out waiting for application "mysql" to reach status=="active"; last seen: life=alive status=waiting scale=1`},
		{name: "absent", kind: "machine", entity: "3", m: newFakeModel(model(nil)),
			wantErr: `timed out waiting for machine "3" to reach status=="started"; last seen: not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWait(t, tt.m, tt.kind, tt.entity, "", 50*time.Millisecond)
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
		Client:       func(context.Context) (waitAPI, error) { return m, nil }}
	if err := waitRun(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
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
