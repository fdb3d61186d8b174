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
		wantCloud                         string
		noSwitch                          bool
		wantConfig                        map[string]string
	}{
		{args: "test", wantName: "test"},
		{args: "big --constraints mem=8G --constraints cores=2 --no-switch", wantName: "big", wantCons: "cores=2 mem=8192M", noSwitch: true},
		{args: "", wantErr: "model name is required"},
		{args: "a b c", wantErr: `unrecognized args: ["c"]`},
		{args: "a localhost", wantName: "a", wantCloud: "localhost"},
		{args: "a localhost/localhost", wantName: "a", wantCloud: "localhost/localhost"},
		{args: "a a/b/c", wantErr: `cloud name "a/b/c" not valid`},
		{args: "Bad", wantErr: `"Bad" is not a valid name: model names may only contain lowercase letters, digits and hyphens`},
		{args: "ok --constraints mem=lots", wantErr: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{args: "ci --config update-status-hook-interval=10s", wantName: "ci", wantConfig: map[string]string{"update-status-hook-interval": "10s"}},
		{args: "ci --config update-status-hook-interval=soon", wantErr: `invalid update status hook interval in model configuration: time: invalid duration "soon"`},
		{args: "ci --config no-such=1", wantErr: `key "no-such" is not defined in the current model configuration: possible misspelling`},
		{args: "ci --config automatically-retry-hooks=yes", wantErr: `automatically-retry-hooks: expected bool, got string("yes")`},
		{args: "ci --config agent-version=3.6.1", wantErr: `"agent-version" cannot be set: it is the Juju version this controller implements (3.6.12)`},
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
			if got.Name != tt.wantName || got.CloudRegion != tt.wantCloud || got.cons != tt.wantCons || got.NoSwitch != tt.noSwitch || !maps.Equal(got.config, tt.wantConfig) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

type fakeAddModel struct {
	name, cons    string
	cloud, region string
	config        map[string]string
	calls         int
	err           error
}

func (f *fakeAddModel) AddModelIn(_ context.Context, req *jujupb.AddModelRequest) (*jujupb.Model, error) {
	f.calls++
	f.name, f.cons, f.config, f.cloud, f.region = req.Name, req.Constraints, req.Config, req.Cloud, req.Region
	if f.err != nil {
		return nil, f.err
	}
	return &jujupb.Model{Name: req.Name, Uuid: "uuid-" + req.Name, Owner: "admin", Cloud: "localhost", Type: "iaas"}, nil
}

// The second argument names the controller's cloud, its region, or both; anything else is
// refused before anything is sent.
func TestAddModelCloudRegion(t *testing.T) {
	for _, tc := range []struct {
		arg, cloud, region, err string
	}{
		{arg: "localhost", cloud: "localhost"},
		{arg: "localhost/localhost", cloud: "localhost", region: "localhost"},
		{arg: "aws", err: `"aws" is neither a cloud supported by this controller, nor a region in the controller's default cloud "localhost"`},
		{arg: "aws/us-east-1", err: `cloud "aws" not found`},
		{arg: "localhost/mars", err: `region "mars" not found (expected one of ["localhost"])`},
	} {
		store := cmdutil.NewStore(t.TempDir())
		_ = store.AddController("local", cmdutil.ControllerDetails{UUID: "ctrl", Cloud: "localhost", Region: "localhost"})
		_ = store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin"})
		ios, _, _ := output.TestStreams()
		fake := &fakeAddModel{}
		opts := &addModelOptions{
			IO: ios, Store: store, Config: configOf("local", ""), Name: "m", CloudRegion: tc.arg,
			Client: func(context.Context) (addModelAPI, error) { return fake, nil },
		}
		err := addModelRun(context.Background(), opts)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || fake.calls != 0 {
				t.Errorf("%s: %v (calls %d), want %q", tc.arg, err, fake.calls, tc.err)
			}
			continue
		}
		if err != nil || fake.cloud != tc.cloud || fake.region != tc.region {
			t.Errorf("%s: %v, sent %q/%q", tc.arg, err, fake.cloud, fake.region)
		}
	}
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
