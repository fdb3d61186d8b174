package application

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

type fakeConstraints struct {
	model, app, value string
}

func (f *fakeConstraints) GetConstraints(_ context.Context, model, app string) (string, error) {
	f.model, f.app = model, app
	return f.value, nil
}

func (f *fakeConstraints) SetConstraints(_ context.Context, model, app, cons string) error {
	f.model, f.app, f.value = model, app, cons
	return nil
}

func TestNewCmdConstraints(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantFormat    output.Format
	}{
		{args: "mysql", wantFormat: cmdutil.ConstraintsFormat},
		{args: "mysql --format yaml", wantFormat: output.YAML},
		{args: "", wantErr: "no application name specified"},
		{args: "My-SQL", wantErr: `invalid application name "My-SQL", unexpected uppercase character`},
		{args: "mysql x", wantErr: `unrecognized args: ["x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *constraintsOptions
			cmd := NewCmdConstraints(cmdutil.TestFactory(), func(o *constraintsOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" && (got.Application != "mysql" || got.Format != tt.wantFormat) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func TestConstraintsRun(t *testing.T) {
	for _, tt := range []struct{ name, value string }{
		{"set", "cores=2 mem=8192M root-disk=20480M"},
		{"empty", ""},
	} {
		for _, f := range []output.Format{cmdutil.ConstraintsFormat, output.JSON, output.YAML} {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				ios, out, _ := output.TestStreams()
				fake := &fakeConstraints{value: tt.value}
				opts := &constraintsOptions{IO: ios, Format: f, Application: "mysql", ResolveModel: testModel,
					Client: func(context.Context) (constraintsAPI, error) { return fake, nil }}
				if err := constraintsRun(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
				if fake.model != "uuid-default" || fake.app != "mysql" {
					t.Errorf("asked %s %s", fake.model, fake.app)
				}
				golden.Assert(t, out.String(), "constraints/"+tt.name+"."+string(f)+".golden")
			})
		}
	}
}

func TestNewCmdSetConstraints(t *testing.T) {
	tests := []struct{ args, want, wantErr string }{
		{args: "mysql mem=8G cores=4", want: "cores=4 mem=8192M"},
		{args: "mysql", want: ""},
		{args: "mysql mem=", want: "mem="},
		{args: "", wantErr: "no application name specified"},
		{args: "Mysql mem=1G", wantErr: `invalid application name "Mysql", unexpected uppercase character`},
		{args: "mysql arch=i386", wantErr: `bad "arch" constraint: "i386" not recognized`},
		{args: "mysql cores=-1", wantErr: `bad "cores" constraint: must be a non-negative integer`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *setConstraintsOptions
			cmd := NewCmdSetConstraints(cmdutil.TestFactory(), func(o *setConstraintsOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" && (got.Application != "mysql" || got.Constraints != tt.want) {
				t.Errorf("opts = %+v, want constraints %q", got, tt.want)
			}
		})
	}
}

func TestSetConstraintsRun(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	fake := &fakeConstraints{}
	opts := &setConstraintsOptions{IO: ios, Application: "mysql", Constraints: "mem=2048M", ResolveModel: testModel,
		Client: func(context.Context) (setConstraintsAPI, error) { return fake, nil }}
	if err := setConstraintsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if fake.model != "uuid-default" || fake.app != "mysql" || fake.value != "mem=2048M" {
		t.Errorf("fake = %+v", fake)
	}
	if out.Len()+errOut.Len() != 0 {
		t.Errorf("printed %q %q", out.String(), errOut.String())
	}
}
