package model

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdDestroy(t *testing.T) {
	tests := []struct {
		args    string
		want    destroyModelOptions
		wantErr string
	}{
		{args: "test", want: destroyModelOptions{Model: "test", Timeout: 30 * time.Minute}},
		{args: "local:test --no-prompt --force --no-wait --dry-run --timeout 5m",
			want: destroyModelOptions{Controller: "local", Model: "test", NoPrompt: true, Force: true, NoWait: true, DryRun: true, Timeout: 5 * time.Minute}},
		{args: "local:admin/test", want: destroyModelOptions{Controller: "local", Model: "test", Timeout: 30 * time.Minute}},
		// jubilant's temp_model teardown.
		{args: "jubilant-1234 --no-prompt --destroy-storage --force",
			want: destroyModelOptions{Model: "jubilant-1234", NoPrompt: true, DestroyStorage: true, Force: true, Timeout: 30 * time.Minute}},
		{args: "test --release-storage", want: destroyModelOptions{Model: "test", ReleaseStorage: true, Timeout: 30 * time.Minute}},
		{args: "test --destroy-storage --release-storage", wantErr: "--destroy-storage and --release-storage cannot both be specified"},
		{args: "", wantErr: "no model specified"},
		{args: "local:", wantErr: "no model specified"},
		{args: "a b", wantErr: `unrecognized args: ["b"]`},
		{args: "Bad", wantErr: `"Bad" is not a valid model name`},
		{args: "test --no-wait", wantErr: "--no-wait without --force not valid"},
		{args: "test --timeout 0s", wantErr: "--timeout must be positive"},
		{args: "test --yes", wantErr: "unknown flag: --yes"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *destroyModelOptions
			cmd := NewCmdDestroy(cmdutil.TestFactory(), func(o *destroyModelOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr == "unknown flag: --yes" { // pflag's own error; root rewrites it
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v", err)
				}
				return
			}
			checkErr(t, err, tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if got.Controller != tt.want.Controller || got.Model != tt.want.Model || got.NoPrompt != tt.want.NoPrompt ||
				got.Force != tt.want.Force || got.NoWait != tt.want.NoWait || got.DryRun != tt.want.DryRun || got.Timeout != tt.want.Timeout ||
				got.DestroyStorage != tt.want.DestroyStorage || got.ReleaseStorage != tt.want.ReleaseStorage {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// step is what one Next returns.
type step struct {
	ev  *jujupb.WatchEvent
	err error
}

// fakeDestroy answers DestroyModel with plan (or err) and hands out watchers that play the
// scripts in order; a watcher whose script is done blocks until its context ends.
type fakeDestroy struct {
	plan *jujupb.DestroyModelResponse
	// later, when set, answers the calls after the first (what is left by then).
	later    *jujupb.DestroyModelResponse
	err      error
	watchErr error
	scripts  [][]step
	reqs     []*jujupb.DestroyModelRequest
	watches  []*jujupb.WatchRequest
}

func (f *fakeDestroy) DestroyModel(_ context.Context, req *jujupb.DestroyModelRequest) (*jujupb.DestroyModelResponse, error) {
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return nil, f.err
	}
	if f.later != nil && len(f.reqs) > 1 {
		return f.later, nil
	}
	return f.plan, nil
}

func (f *fakeDestroy) Watch(ctx context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error) {
	f.watches = append(f.watches, req)
	if f.watchErr != nil {
		return nil, f.watchErr
	}
	w := &fakeWatcher{ctx: ctx}
	if len(f.scripts) > 0 {
		w.script, f.scripts = f.scripts[0], f.scripts[1:]
	}
	return w, nil
}

type fakeWatcher struct {
	ctx    context.Context
	script []step
}

func (w *fakeWatcher) Next() (*jujupb.WatchEvent, error) {
	if len(w.script) == 0 {
		<-w.ctx.Done()
		return nil, w.ctx.Err()
	}
	s := w.script[0]
	w.script = w.script[1:]
	return s.ev, s.err
}

func (w *fakeWatcher) Close() {}

func removed(kind, id string) step {
	return step{ev: &jujupb.WatchEvent{Kind: kind, Id: id, Removed: true}}
}

// testPlan is a model with two machines, one application and its two units.
func testPlan() *jujupb.DestroyModelResponse {
	return &jujupb.DestroyModelResponse{
		Applications: []string{"mysql"}, Units: []string{"mysql/0", "mysql/1"}, Machines: []string{"0", "1"}, Uuid: "uuid-test",
	}
}

// goesAway is the watch of testPlan's model going: a dying event that changes nothing, then
// the application, the machines, the model.
func goesAway() []step {
	return []step{
		{ev: &jujupb.WatchEvent{Kind: "application", Id: "mysql"}},
		removed("application", "mysql"),
		removed("machine", "1"),
		removed("machine", "0"),
		removed("model", ""),
	}
}

func TestDestroyModelRun(t *testing.T) {
	tests := []struct {
		name          string
		args          destroyModelOptions
		in            string
		inTerminal    bool
		errTerminal   bool
		fake          *fakeDestroy
		wantErr       string
		wantDryRuns   int
		wantDestroys  int
		wantForgotten bool
	}{
		{name: "no-prompt", args: destroyModelOptions{NoPrompt: true}, fake: &fakeDestroy{plan: testPlan(), scripts: [][]step{goesAway()}},
			wantDestroys: 1, wantForgotten: true},
		{name: "no-prompt-terminal", args: destroyModelOptions{NoPrompt: true}, inTerminal: true, errTerminal: true,
			fake: &fakeDestroy{plan: testPlan(), scripts: [][]step{goesAway()}}, wantDestroys: 1, wantForgotten: true},
		{name: "prompt-yes", in: "test\n", inTerminal: true, fake: &fakeDestroy{plan: testPlan(), scripts: [][]step{goesAway()}},
			wantDryRuns: 1, wantDestroys: 1, wantForgotten: true},
		{name: "prompt-no", in: "default\n", inTerminal: true, fake: &fakeDestroy{plan: testPlan()},
			wantErr: "model destruction: aborted", wantDryRuns: 1},
		{name: "no-terminal", fake: &fakeDestroy{plan: testPlan()}, wantErr: "model destruction: " + cmdutil.ErrNoTerminal.Error()},
		{name: "dry-run", args: destroyModelOptions{DryRun: true}, fake: &fakeDestroy{plan: testPlan()}, wantDryRuns: 1},
		{name: "force", args: destroyModelOptions{NoPrompt: true, Force: true, NoWait: true},
			fake:         &fakeDestroy{plan: &jujupb.DestroyModelResponse{Uuid: "uuid-test"}, scripts: [][]step{{removed("model", "")}}},
			wantDestroys: 1, wantForgotten: true},
		{name: "unknown", args: destroyModelOptions{NoPrompt: true},
			fake:    &fakeDestroy{watchErr: apierr.Errorf(apierr.NotFound, `model "test" not found`)},
			wantErr: `model "test" not found`},
		{name: "controller-model", in: "test\n", inTerminal: true,
			fake:        &fakeDestroy{err: errors.New(`cannot destroy model "controller": it is the controller model; use juju kill-controller to destroy the controller`)},
			wantErr:     `cannot destroy model "controller": it is the controller model; use juju kill-controller to destroy the controller`,
			wantDryRuns: 1},
		{name: "rewatch", args: destroyModelOptions{NoPrompt: true}, fake: &fakeDestroy{plan: testPlan(),
			later: &jujupb.DestroyModelResponse{Applications: []string{"mysql"}, Machines: []string{"0"}, Uuid: "uuid-test"}, scripts: [][]step{
				{removed("machine", "1"), {err: apierr.Errorf(apierr.Unavailable, "watch ended; watch again")}},
				{removed("application", "mysql"), removed("machine", "0"), removed("model", "")},
			}}, wantDryRuns: 1, wantDestroys: 1, wantForgotten: true},
		{name: "timeout", args: destroyModelOptions{NoPrompt: true, Timeout: time.Millisecond},
			fake:    &fakeDestroy{plan: testPlan(), scripts: [][]step{{removed("machine", "1")}}},
			wantErr: `timed out after 1ms waiting for model "test" to be removed; still there: machine 0; application mysql (see juju status -m test)`, wantDestroys: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := seededStore(t)
			_ = store.UpdateModel("local", "test", cmdutil.ModelDetails{UUID: "uuid-test", Type: "iaas"})
			_ = store.SetCurrentModel("local", "test")
			ios, out, errOut := output.TestStreams()
			ios.In = bytes.NewBufferString(tt.in)
			ios.InTerminal, ios.ErrTerminal = tt.inTerminal, tt.errTerminal
			opts := tt.args
			opts.IO, opts.Store, opts.Config, opts.Model = ios, store, configOf("local", "default"), "test"
			if opts.Timeout == 0 {
				opts.Timeout = time.Minute
			}
			var dialled string
			opts.Client = func(_ context.Context, controller string) (destroyAPI, error) {
				dialled = controller
				return tt.fake, nil
			}

			err := destroyModelRun(context.Background(), &opts)
			checkErr(t, err, tt.wantErr, false)
			dryRuns, destroys := 0, 0
			for _, r := range tt.fake.reqs {
				if r.GetModel() != "test" && r.GetModel() != "uuid-test" {
					t.Errorf("request for model %q", r.GetModel())
				}
				if r.GetForce() != opts.Force || (r.GetNoWait() != opts.NoWait && !r.GetDryRun()) {
					t.Errorf("request %v lost the flags", r)
				}
				if r.GetDryRun() {
					dryRuns++
				} else {
					destroys++
				}
			}
			if dryRuns != tt.wantDryRuns || destroys != tt.wantDestroys {
				t.Errorf("%d dry runs and %d destroys, want %d and %d", dryRuns, destroys, tt.wantDryRuns, tt.wantDestroys)
			}
			if tt.name != "no-terminal" && dialled != "local" {
				t.Errorf("dialled controller %q", dialled)
			}
			if destroys > 0 && (len(tt.fake.watches) == 0 || tt.fake.watches[0].GetModel() != "test") {
				t.Errorf("watches = %v", tt.fake.watches)
			}
			_, err = store.ModelByName("local", "test")
			if forgotten := errors.Is(err, apierr.NotFound); forgotten != tt.wantForgotten {
				t.Errorf("model forgotten = %v, want %v", forgotten, tt.wantForgotten)
			}
			current, _ := store.CurrentModel("local")
			if (current == "") != tt.wantForgotten {
				t.Errorf("current model = %q", current)
			}
			golden.Assert(t, out.String(), "destroy-model/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "destroy-model/"+tt.name+".stderr.golden")
		})
	}
}

// The plan names at most ten machines and applications.
func TestWriteDestroyPlanTruncates(t *testing.T) {
	var machines []string
	for i := range 12 {
		machines = append(machines, string(rune('a'+i)))
	}
	var buf bytes.Buffer
	writeDestroyPlan(&buf, &jujupb.DestroyModelResponse{Machines: machines, Applications: []string{"one"}})
	want := ` - 12 machines will be destroyed
  - machine list: "a" "b" "c" "d" "e" "f" "g" "h" "i" "j" and 2 more
 - 1 application will be removed
  - application list: "one"
 - 0 units will be removed
`
	if buf.String() != want {
		t.Errorf("plan:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// A model being destroyed shows as such in juju models: life dying, status destroying.
func TestModelsShowsADyingModel(t *testing.T) {
	v := newModelsView("local", "ctrl-uuid", "admin", "", []*jujupb.Model{
		{Name: "m", Uuid: "uuid-m", Life: "dying", Status: &jujupb.StatusInfo{Status: "destroying"}, MachineCount: 2, UnitCount: 2},
	}, time.Now())
	if item := v.Models[0]; item.Life != "dying" || item.Status == nil || item.Status.Current != "destroying" {
		t.Fatalf("view = %+v", item)
	}
	var buf bytes.Buffer
	if err := output.Write(&buf, output.Tabular, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("destroying")) {
		t.Fatalf("table:\n%s", buf.String())
	}
}
