package model

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

type fakeModelConstraints struct {
	model, value string
	set          bool
}

func (f *fakeModelConstraints) GetModelConstraints(_ context.Context, model string) (string, error) {
	f.model = model
	return f.value, nil
}

func (f *fakeModelConstraints) SetModelConstraints(_ context.Context, model, cons string) error {
	f.model, f.value, f.set = model, cons, true
	return nil
}

func TestNewCmdModelConstraints(t *testing.T) {
	var got *modelConstraintsOptions
	cmd := NewCmdModelConstraints(cmdutil.TestFactory(), func(o *modelConstraintsOptions) error { got = o; return nil })
	if err := execute(cmd, "-m other --format json"); err != nil {
		t.Fatal(err)
	}
	if got.Format != output.JSON || got.Model != "other" {
		t.Errorf("opts = %+v", got)
	}
	cmd = NewCmdModelConstraints(cmdutil.TestFactory(), func(o *modelConstraintsOptions) error { got = o; return nil })
	if err := execute(cmd, ""); err != nil || got.Format != cmdutil.ConstraintsFormat {
		t.Errorf("default format = %q, %v", got.Format, err)
	}
	cmd = NewCmdModelConstraints(cmdutil.TestFactory(), nil)
	if err := execute(cmd, "--format tabular"); err == nil {
		t.Error("--format tabular accepted")
	}
}

func TestModelConstraintsRun(t *testing.T) {
	for _, f := range []output.Format{cmdutil.ConstraintsFormat, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			ios, out, _ := output.TestStreams()
			fake := &fakeModelConstraints{value: "arch=amd64 cores=4 mem=8192M tags=a,b"}
			opts := &modelConstraintsOptions{
				IO: ios, Format: f, ResolveModel: testModel,
				Client: func(context.Context) (modelConstraintsAPI, error) { return fake, nil },
			}
			if err := modelConstraintsRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if fake.model != "uuid-default" {
				t.Errorf("asked model %q", fake.model)
			}
			golden.Assert(t, out.String(), "model-constraints/four."+string(f)+".golden")
		})
	}
}

func TestNewCmdSetModelConstraints(t *testing.T) {
	tests := []struct{ args, want, wantErr string }{
		{args: "mem=8G cores=4", want: "cores=4 mem=8192M"},
		{args: "", want: ""},
		{args: "mem=", want: "mem="},
		{args: "foo", wantErr: `malformed constraint "foo"`},
		{args: "color=red", wantErr: `unknown constraint "color"`},
		{args: "mem=1G mem=2G", wantErr: `bad "mem" constraint: already set`},
		// Juju's parser accepts a conflict: the provider (the controller) refuses it.
		{args: "instance-type=m1 mem=2G", want: "instance-type=m1 mem=2048M"},
		{args: "container=foo", wantErr: `bad "container" constraint: invalid container type "foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *setModelConstraintsOptions
			cmd := NewCmdSetModelConstraints(cmdutil.TestFactory(), func(o *setModelConstraintsOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" && got.Constraints != tt.want {
				t.Errorf("constraints = %q, want %q", got.Constraints, tt.want)
			}
		})
	}
}

func TestSetModelConstraintsRun(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	fake := &fakeModelConstraints{}
	opts := &setModelConstraintsOptions{
		IO: ios, Constraints: "mem=2048M", ResolveModel: testModel,
		Client: func(context.Context) (setModelConstraintsAPI, error) { return fake, nil },
	}
	if err := setModelConstraintsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !fake.set || fake.model != "uuid-default" || fake.value != "mem=2048M" {
		t.Errorf("fake = %+v", fake)
	}
	if out.Len()+errOut.Len() != 0 {
		t.Errorf("output %q %q, want none", out.String(), errOut.String())
	}
}
