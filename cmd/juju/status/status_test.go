package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func execute(cmd *cobra.Command, args string) error {
	cmd.SetArgs(strings.Fields(args))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

func TestNewCmdStatus(t *testing.T) {
	tests := []struct {
		args, wantErr string
		check         func(t *testing.T, o *statusOptions)
	}{
		{args: "", check: func(t *testing.T, o *statusOptions) {
			if o.Format != output.Tabular || len(o.Patterns) != 0 || o.UTC || o.Color || o.NoColor {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "mysql wordpress/0 --format yaml -o out.yaml --utc --color -m other", check: func(t *testing.T, o *statusOptions) {
			if o.Format != output.YAML || o.Output != "out.yaml" || !o.UTC || !o.Color || o.Model != "other" ||
				strings.Join(o.Patterns, " ") != "mysql wordpress/0" {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--relations", check: func(t *testing.T, o *statusOptions) {
			if !o.Relations {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--integrations", check: func(t *testing.T, o *statusOptions) {
			if !o.Relations {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--format oneline --watch 2s", check: func(t *testing.T, o *statusOptions) {
			if o.Format != output.Oneline || o.Watch != 2*time.Second {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "active error mysql* */0 0/lxd/1", check: func(t *testing.T, o *statusOptions) {
			if strings.Join(o.Patterns, " ") != "active error mysql* */0 0/lxd/1" {
				t.Errorf("patterns = %q", o.Patterns)
			}
		}},
		{args: "", check: func(t *testing.T, o *statusOptions) {
			if o.RetryCount != 3 || o.RetryDelay != 100*time.Millisecond {
				t.Errorf("retry defaults = %d, %s; want Juju's 3, 100ms", o.RetryCount, o.RetryDelay)
			}
		}},
		{args: "--retry-count 0 --retry-delay 2s", check: func(t *testing.T, o *statusOptions) {
			if o.RetryCount != 0 || o.RetryDelay != 2*time.Second {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--retry-count=5 --retry-delay=0", check: func(t *testing.T, o *statusOptions) {
			if o.RetryCount != 5 || o.RetryDelay != 0 {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--retry-count -1", wantErr: "invalid --retry-count -1: must not be negative"},
		{args: "--retry-delay -1s", wantErr: "invalid --retry-delay -1s: must not be negative"},
		{args: "--color --no-color", wantErr: "cannot mix --no-color and --color"},
		{args: "--format xml", wantErr: `invalid value "xml" for --format: expected one of json, line, oneline, short, summary, tabular, yaml`},
		{args: "mysql/x", wantErr: `invalid selector "mysql/x": expected an application, unit or machine name ("*" wildcards allowed) or a status value`},
		{args: "mysql [", wantErr: `invalid selector "[": expected`},
		{args: "Mysql", wantErr: `invalid selector "Mysql"`},
		{args: "--watch 0", wantErr: "invalid --watch interval 0s: must be positive"},
		{args: "--watch -1s", wantErr: "invalid --watch interval -1s: must be positive"},
		{args: "--watch 1s -o out", wantErr: "cannot use --watch with --output"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *statusOptions
			cmd := NewCmdStatus(cmdutil.TestFactory(), func(o *statusOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var fe *cmdutil.FlagError
				if !errors.As(err, &fe) && !strings.Contains(tt.args, "--format") {
					t.Errorf("err %T is not a usage error", err)
				}
				if got != nil {
					t.Error("command ran")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

type fakeStatus struct {
	model    string
	patterns []string
	resp     *jujupb.FullStatusResponse
	err      error

	// For --watch: the responses of successive calls (the last one repeats), a hook called
	// after each call with its number, and the watch.
	resps    []*jujupb.FullStatusResponse
	calls    int
	after    func(call int)
	watch    *fakeWatcher
	watchErr error
}

func (f *fakeStatus) FullStatus(_ context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error) {
	f.model, f.patterns = model, patterns
	f.calls++
	if f.after != nil {
		defer f.after(f.calls)
	}
	if len(f.resps) > 0 {
		return f.resps[min(f.calls, len(f.resps))-1], f.err
	}
	return f.resp, f.err
}

func (f *fakeStatus) Watch(_ context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error) {
	if f.watchErr != nil {
		return nil, f.watchErr
	}
	if f.watch == nil {
		f.watch = newFakeWatcher()
	}
	f.watch.req = req
	return f.watch, nil
}

// fakeWatcher is a watch whose events the test sends.
type fakeWatcher struct {
	req    *jujupb.WatchRequest
	events chan *jujupb.WatchEvent
	end    chan error
	closed chan struct{}
	once   sync.Once
}

func newFakeWatcher() *fakeWatcher {
	return &fakeWatcher{events: make(chan *jujupb.WatchEvent, 10), end: make(chan error, 1), closed: make(chan struct{})}
}

func (w *fakeWatcher) Next() (*jujupb.WatchEvent, error) {
	select {
	case ev := <-w.events:
		return ev, nil
	case err := <-w.end:
		return nil, err
	case <-w.closed:
		return nil, context.Canceled
	}
}

func (w *fakeWatcher) Close() { w.once.Do(func() { close(w.closed) }) }

var now = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func modelStatus() *jujupb.ModelStatus {
	return &jujupb.ModelStatus{Name: "default", Controller: "jujud", Cloud: "localhost", Region: "localhost",
		Version: "0.1.0", Type: "iaas", Status: &jujupb.StatusInfo{Status: "available"}}
}

func oneApp() *jujupb.FullStatusResponse {
	since := now.UnixNano()
	return &jujupb.FullStatusResponse{
		Model:          modelStatus(),
		ControllerTime: since,
		Machines: []*jujupb.MachineStatus{{
			Id: "0", Base: &jujupb.Base{Name: "ubuntu", Channel: "22.04/stable"}, InstanceId: "juju-0", DnsName: "10.0.0.10",
			AgentStatus:    &jujupb.StatusInfo{Status: "started", Since: since},
			InstanceStatus: &jujupb.StatusInfo{Status: "running", Message: "Running", Since: since},
		}},
		Applications: []*jujupb.ApplicationStatus{{
			Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-1", CharmRev: 1, CharmOrigin: "local",
			Base:   &jujupb.Base{Name: "ubuntu", Channel: "22.04/stable"},
			Status: &jujupb.StatusInfo{Status: "active", Since: since},
			Units: []*jujupb.UnitStatus{{
				Name: "mysql/0", Machine: "0", Leader: true, PublicAddress: "10.0.0.10",
				AgentStatus:    &jujupb.StatusInfo{Status: "idle", Since: since},
				WorkloadStatus: &jujupb.StatusInfo{Status: "active", Message: "ready", Since: since},
			}},
		}},
	}
}

func runStatus(t *testing.T, fake *fakeStatus, opts *statusOptions) (string, string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO = ios
	opts.Now = func() time.Time { return now }
	opts.UTC = true
	opts.ResolveModel = func(context.Context) (*cmdutil.ModelRef, error) {
		return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
	}
	opts.Client = func(context.Context) (statusAPI, error) { return fake, nil }
	if opts.Format == "" {
		opts.Format = output.Tabular
	}
	err := statusRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestStatusRun(t *testing.T) {
	for _, f := range []output.Format{output.Tabular, output.JSON, output.YAML, output.Oneline, output.Summary} {
		t.Run(string(f), func(t *testing.T) {
			fake := &fakeStatus{resp: oneApp()}
			out, errOut, err := runStatus(t, fake, &statusOptions{Format: f, Patterns: []string{"mysql"}})
			if err != nil {
				t.Fatal(err)
			}
			if fake.model != "uuid-default" || strings.Join(fake.patterns, ",") != "mysql" {
				t.Errorf("asked %s %v", fake.model, fake.patterns)
			}
			if errOut != "" {
				t.Errorf("stderr = %q", errOut)
			}
			golden.Assert(t, out, "status-command/one-app."+string(f)+".golden")
		})
	}
}

func TestStatusRunRelations(t *testing.T) {
	withRelation := func() *jujupb.FullStatusResponse {
		fs := oneApp()
		fs.Relations = []*jujupb.RelationStatus{{
			Id: 0, Key: "mysql:cluster", Life: "alive", Interface: "mysql-peers", Scope: "global",
			Endpoints: []*jujupb.RelationEndpoint{{Application: "mysql", Name: "cluster", Role: "peer", Interface: "mysql-peers"}},
		}}
		return fs
	}
	out, errOut, err := runStatus(t, &fakeStatus{resp: withRelation()}, &statusOptions{Relations: true})
	if err != nil {
		t.Fatal(err)
	}
	if errOut != "" {
		t.Errorf("stderr = %q", errOut)
	}
	golden.Assert(t, out, "status-command/one-app-relations.tabular.golden")

	for _, f := range []output.Format{output.JSON, output.YAML} {
		out, errOut, err := runStatus(t, &fakeStatus{resp: withRelation()}, &statusOptions{Format: f, Relations: true})
		if err != nil {
			t.Fatal(err)
		}
		if errOut != "provided relations option is always enabled in non tabular formats\n" {
			t.Errorf("%s: stderr = %q", f, errOut)
		}
		if !strings.Contains(out, "related-application") {
			t.Errorf("%s: no relations in %s", f, out)
		}
	}
}

func TestStatusRunEmpty(t *testing.T) {
	empty := &jujupb.FullStatusResponse{Model: modelStatus(), ControllerTime: now.UnixNano()}
	tests := []struct {
		patterns   []string
		wantStderr string
	}{
		{nil, "\nModel \"default\" is empty.\n"},
		{[]string{"nope"}, "Nothing matched specified filter.\n"},
		{[]string{"nope", "nada"}, "Nothing matched specified filters.\n"},
	}
	for _, tt := range tests {
		out, errOut, err := runStatus(t, &fakeStatus{resp: empty}, &statusOptions{Patterns: tt.patterns})
		if err != nil {
			t.Fatal(err)
		}
		if errOut != tt.wantStderr {
			t.Errorf("%v: stderr = %q, want %q", tt.patterns, errOut, tt.wantStderr)
		}
		if !strings.HasPrefix(out, "Model ") {
			t.Errorf("%v: stdout = %q, want the model section", tt.patterns, out)
		}
	}
}

func TestStatusRunColor(t *testing.T) {
	out, _, err := runStatus(t, &fakeStatus{resp: oneApp()}, &statusOptions{Color: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\x1b[") {
		t.Error("--color printed no colour into a pipe")
	}
	out, _, _ = runStatus(t, &fakeStatus{resp: oneApp()}, &statusOptions{})
	if strings.Contains(out, "\x1b[") {
		t.Error("colour printed into a pipe without --color")
	}
}

func TestStatusRunError(t *testing.T) {
	_, _, err := runStatus(t, &fakeStatus{err: apierr.Errorf(apierr.NotFound, `model "x" not found`)}, &statusOptions{})
	if !errors.Is(err, apierr.NotFound) || err.Error() != `getting status of model "default": model "x" not found` {
		t.Errorf("err = %v", err)
	}
}

// Colour: on for a terminal with colour (output.System already weighed NO_COLOR and TERM=dumb),
// forced by --color, off with --no-color or -o.
func TestColorStreams(t *testing.T) {
	tty := &output.Streams{Color: true, IsTerminal: true}
	pipe := &output.Streams{}
	tests := []struct {
		s              *output.Streams
		color, noColor bool
		file           string
		want           bool
	}{
		{tty, false, false, "", true},
		{tty, false, true, "", false},
		{tty, false, false, "out.txt", false},
		{pipe, false, false, "", false},
		{pipe, true, false, "", true},
		{pipe, true, false, "out.txt", true},
	}
	for _, tt := range tests {
		if got := ColorStreams(tt.s, tt.color, tt.noColor, tt.file).Color; got != tt.want {
			t.Errorf("ColorStreams(%+v, %v, %v, %q) = %v", tt.s, tt.color, tt.noColor, tt.file, got)
		}
	}
	if tty.Color != true {
		t.Error("ColorStreams changed its input")
	}
	// json is never coloured, even with --color.
	out, _, err := runStatus(t, &fakeStatus{resp: oneApp()}, &statusOptions{Format: output.JSON, Color: true})
	if err != nil || strings.Contains(out, "\x1b") {
		t.Errorf("json with --color: %v %q", err, out)
	}
}

// --retry-count: a status call that failed to reach the controller is tried again, as many
// times as asked; errors that would only repeat are not.
func TestStatusRetry(t *testing.T) {
	unreachable := fmt.Errorf("connecting to controller: %w", apierr.Unavailable)
	tests := []struct {
		name      string
		err       error
		failures  int // calls that fail before the status answers
		count     int
		wantCalls int
		wantErr   bool
	}{
		{"recovers", unreachable, 2, 3, 3, false},
		{"gives up", unreachable, 10, 3, 4, true},
		{"no retries", unreachable, 1, 0, 1, true},
		{"busy", apierr.Contention, 1, 3, 2, false},
		{"not transient", fmt.Errorf("bad: %w", apierr.NotValid), 1, 3, 1, true},
		{"permission", apierr.PermissionDenied, 1, 3, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeStatus{resp: oneApp(), err: tt.err}
			fake.after = func(call int) {
				if call >= tt.failures {
					fake.err = nil
				}
			}
			out, _, err := runStatus(t, fake, &statusOptions{Format: output.Tabular, RetryCount: tt.count, RetryDelay: time.Millisecond})
			if fake.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", fake.calls, tt.wantCalls)
			}
			if tt.wantErr {
				if err == nil || !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || !strings.Contains(out, "mysql/0*") {
				t.Fatalf("err = %v, out:\n%s", err, out)
			}
		})
	}
}
