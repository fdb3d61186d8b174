package model

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdAddModel(t *testing.T) {
	tests := []struct {
		args, wantName, wantCons, wantErr string
		noSwitch                          bool
		wantConfig                        map[string]string
	}{
		{args: "test", wantName: "test"},
		{args: "big --constraints mem=8G --constraints cores=2 --no-switch", wantName: "big", wantCons: "cores=2 mem=8192M", noSwitch: true},
		{args: "", wantErr: "model name is required"},
		{args: "a b", wantErr: `unrecognized args: ["b"]`},
		{args: "Bad", wantErr: `"Bad" is not a valid name: model names may only contain lowercase letters, digits and hyphens`},
		{args: "ok --constraints mem=lots", wantErr: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{args: "ci --config update-status-hook-interval=10s", wantName: "ci", wantConfig: map[string]string{"update-status-hook-interval": "10s"}},
		{args: "ci --config update-status-hook-interval=soon", wantErr: `update-status-hook-interval: "soon" is not a duration (e.g. 5m, 30s)`},
		{args: "ci --config no-such=1", wantErr: `unknown model config key "no-such" (known: update-status-hook-interval)`},
		{args: "ci --config =1", wantErr: `invalid --config value "=1": expected <key>=<value>`},
		{args: "ci --config /no/such/file.yaml", wantErr: `reading --config file: open /no/such/file.yaml: no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *addModelOptions
			cmd := NewCmdAddModel(cmdutil.TestFactory(), func(o *addModelOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Name != tt.wantName || got.cons != tt.wantCons || got.NoSwitch != tt.noSwitch || !maps.Equal(got.config, tt.wantConfig) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

type fakeAddModel struct {
	name, cons string
	config     map[string]string
	err        error
}

func (f *fakeAddModel) AddModel(_ context.Context, name, cons string, config map[string]string) (*jujupb.Model, error) {
	f.name, f.cons, f.config = name, cons, config
	if f.err != nil {
		return nil, f.err
	}
	return &jujupb.Model{Name: name, Uuid: "uuid-" + name, Owner: "admin", Cloud: "localhost", Type: "iaas"}, nil
}

func TestAddModelRun(t *testing.T) {
	store := seededStore(t)
	ios, out, errOut := output.TestStreams()
	fake := &fakeAddModel{}
	opts := &addModelOptions{
		IO: ios, Store: store, Config: configOf("local", "default"), Name: "test", cons: "mem=2048M",
		Client: func(context.Context) (addModelAPI, error) { return fake, nil },
	}
	if err := addModelRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if fake.name != "test" || fake.cons != "mem=2048M" {
		t.Errorf("AddModel(%q, %q)", fake.name, fake.cons)
	}
	if want := "Added 'test' model on localhost with credential 'admin' for user 'admin'\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q", out.String())
	}
	if cur, _ := store.CurrentModel("local"); cur != "test" {
		t.Errorf("current model = %q, want test", cur)
	}
	if m, _ := store.ModelByName("local", "test"); m == nil || m.UUID != "uuid-test" {
		t.Errorf("cached model = %+v", m)
	}

	opts.NoSwitch, opts.Name = true, "quiet"
	_ = addModelRun(context.Background(), opts)
	if cur, _ := store.CurrentModel("local"); cur != "test" {
		t.Errorf("current model after --no-switch = %q, want test", cur)
	}

	fake.err = apierr.Errorf(apierr.AlreadyExists, `model "test" already exists`)
	err := addModelRun(context.Background(), opts)
	if !errors.Is(err, apierr.AlreadyExists) || err.Error() != `adding model "quiet": model "test" already exists` {
		t.Errorf("err = %v", err)
	}
}
