package model

import (
	"context"
	"errors"
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
	}{
		{args: "test", wantName: "test"},
		{args: "big --constraints mem=8G --constraints cores=2 --no-switch", wantName: "big", wantCons: "cores=2 mem=8192M", noSwitch: true},
		{args: "", wantErr: "model name is required"},
		{args: "a b", wantErr: `unrecognized args: ["b"]`},
		{args: "Bad", wantErr: `"Bad" is not a valid name: model names may only contain lowercase letters, digits and hyphens`},
		{args: "ok --constraints mem=lots", wantErr: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *addModelOptions
			cmd := NewCmdAddModel(cmdutil.TestFactory(), func(o *addModelOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Name != tt.wantName || got.cons != tt.wantCons || got.NoSwitch != tt.noSwitch {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

type fakeAddModel struct {
	name, cons string
	err        error
}

func (f *fakeAddModel) AddModel(_ context.Context, name, cons string) (*jujupb.Model, error) {
	f.name, f.cons = name, cons
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
