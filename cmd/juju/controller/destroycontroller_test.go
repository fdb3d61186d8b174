package controller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdDestroyController(t *testing.T) {
	for _, tc := range []struct {
		args string
		want destroyControllerOptions
		err  string
	}{
		{args: "local", want: destroyControllerOptions{Name: "local", Timeout: 30 * time.Minute}},
		{args: "local --destroy-all-models --destroy-storage --force --no-wait --no-prompt --timeout 5m",
			want: destroyControllerOptions{Name: "local", DestroyAllModels: true, DestroyStorage: true, Force: true, NoWait: true, NoPrompt: true, Timeout: 5 * time.Minute}},
		{args: "local --release-storage", want: destroyControllerOptions{Name: "local", ReleaseStorage: true, Timeout: 30 * time.Minute}},
		{args: "", err: "no controller specified"},
		{args: "a b", err: `unrecognized args: ["b"]`},
		{args: "local --destroy-storage --release-storage", err: "--destroy-storage and --release-storage cannot both be specified"},
		{args: "local --no-wait", err: "--no-wait without --force not valid"},
		{args: "local --timeout 0s", err: "--timeout must be positive"},
	} {
		var got *destroyControllerOptions
		cmd := NewCmdDestroyController(cmdutil.TestFactory(), func(o *destroyControllerOptions) error { got = o; return nil })
		err := execute(cmd, tc.args)
		checkErr(t, err, tc.err, true)
		if tc.err != "" {
			continue
		}
		w := tc.want
		if got.Name != w.Name || got.DestroyAllModels != w.DestroyAllModels || got.DestroyStorage != w.DestroyStorage ||
			got.ReleaseStorage != w.ReleaseStorage || got.Force != w.Force || got.NoWait != w.NoWait ||
			got.NoPrompt != w.NoPrompt || got.Timeout != w.Timeout {
			t.Errorf("%q: %+v", tc.args, got)
		}
	}
}

// fakeControllerAPI lists models and destroys them: each destroyed model's watch reports it
// gone.
type fakeControllerAPI struct {
	mu        sync.Mutex
	models    []*jujupb.Model
	destroyed []string
}

func (f *fakeControllerAPI) ListModels(context.Context) ([]*jujupb.Model, error) {
	return f.models, nil
}

func (f *fakeControllerAPI) DestroyModel(_ context.Context, req *jujupb.DestroyModelRequest) (*jujupb.DestroyModelResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !req.DryRun {
		f.destroyed = append(f.destroyed, req.Model)
	}
	return &jujupb.DestroyModelResponse{Uuid: req.Model}, nil
}

func (f *fakeControllerAPI) Watch(context.Context, *jujupb.WatchRequest) (cmdutil.Watcher, error) {
	return &goneWatcher{}, nil
}

type goneWatcher struct{ done bool }

func (w *goneWatcher) Next() (*jujupb.WatchEvent, error) {
	if w.done {
		return nil, errors.New("closed")
	}
	w.done = true
	return &jujupb.WatchEvent{Kind: "model", Id: "model", Removed: true}, nil
}
func (w *goneWatcher) Close() {}

var busyModels = []*jujupb.Model{
	{Name: "controller", Uuid: "uuid-controller", Owner: "admin", Life: "alive", MachineCount: 1},
	{Name: "default", Uuid: "uuid-default", Owner: "admin", Life: "alive"},
	{Name: "shop", Uuid: "uuid-shop", Owner: "admin", Life: "alive", MachineCount: 2, ApplicationCount: 1},
	{Name: "one", Uuid: "uuid-one", Owner: "admin", Life: "alive", MachineCount: 1},
}

func destroyControllerFixture(t *testing.T, api *fakeControllerAPI) (*destroyControllerOptions, *int) {
	t.Helper()
	store := cmdutil.NewStore(t.TempDir())
	_ = store.AddController("local", cmdutil.ControllerDetails{UUID: "ctrl", APIEndpoints: []string{"127.0.0.1:17070"}})
	_ = store.SetCurrentController("local")
	ios, _, _ := output.TestStreams()
	stops := 0
	return &destroyControllerOptions{
		IO: ios, Store: store, Name: "local", NoPrompt: true, Timeout: time.Minute,
		Client: func(_ context.Context, name string) (destroyControllerAPI, error) {
			if name != "local" {
				t.Errorf("connected to %q", name)
			}
			return api, nil
		},
		Stop: func(context.Context, *cmdutil.ControllerDetails) error { stops++; return nil },
	}, &stops
}

// Without --destroy-all-models a model holding machines or applications keeps the controller,
// with Juju's message; nothing is destroyed or stopped.
func TestDestroyControllerRefusesLiveModels(t *testing.T) {
	api := &fakeControllerAPI{models: busyModels}
	opts, stops := destroyControllerFixture(t, api)
	err := destroyControllerRun(context.Background(), opts)
	if err == nil {
		t.Fatal("destroyed a controller with live models")
	}
	golden.Assert(t, "ERROR "+err.Error()+"\n", "destroy-controller/live-models.error.golden")
	if len(api.destroyed) != 0 || *stops != 0 {
		t.Errorf("destroyed %v, stopped %d times", api.destroyed, *stops)
	}
	if _, err := opts.Store.ControllerByName("local"); err != nil {
		t.Errorf("the controller was forgotten: %v", err)
	}
}

// --destroy-all-models destroys the models that hold something, waits for them, stops the
// controller and forgets it; empty models go with the controller.
func TestDestroyControllerDestroysModels(t *testing.T) {
	api := &fakeControllerAPI{models: busyModels}
	opts, stops := destroyControllerFixture(t, api)
	opts.DestroyAllModels = true
	var stderr strings.Builder
	opts.IO.ErrOut = &stderr
	if err := destroyControllerRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// Each destroyed once to start them draining, then again as destroy-model waits.
	if got := strings.Join(api.destroyed, " "); got != "uuid-shop uuid-one uuid-shop uuid-one" {
		t.Errorf("destroyed %s", got)
	}
	if *stops != 1 {
		t.Errorf("stopped %d times", *stops)
	}
	if _, err := opts.Store.ControllerByName("local"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("controller still known: %v", err)
	}
	golden.Assert(t, stderr.String(), "destroy-controller/all-models.stderr.golden")
}

func TestDestroyControllerEmptyAndUnknown(t *testing.T) {
	api := &fakeControllerAPI{models: busyModels[:2]}
	opts, stops := destroyControllerFixture(t, api)
	if err := destroyControllerRun(context.Background(), opts); err != nil || *stops != 1 || len(api.destroyed) != 0 {
		t.Errorf("empty models: %v, stops %d, destroyed %v", err, *stops, api.destroyed)
	}
	opts.Name = "nope"
	if err := destroyControllerRun(context.Background(), opts); err == nil || err.Error() != `controller "nope" not found` {
		t.Errorf("unknown controller: %v", err)
	}
}

// Without a terminal and without --no-prompt nothing is sent.
func TestDestroyControllerNeedsTerminal(t *testing.T) {
	opts, stops := destroyControllerFixture(t, &fakeControllerAPI{})
	opts.NoPrompt = false
	opts.Client = func(context.Context, string) (destroyControllerAPI, error) {
		t.Error("connected without confirmation")
		return nil, errors.New("no")
	}
	err := destroyControllerRun(context.Background(), opts)
	if !errors.Is(err, cmdutil.ErrNoTerminal) || *stops != 0 {
		t.Errorf("err = %v, stops %d", err, *stops)
	}
	opts.IO.InTerminal, opts.IO.In = true, strings.NewReader("n\n")
	if err := destroyControllerRun(context.Background(), opts); err == nil || err.Error() != "controller destruction aborted" {
		t.Errorf("answer n: %v", err)
	}
}
