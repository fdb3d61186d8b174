package application

import (
	"context"
	"reflect"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdTrust(t *testing.T) {
	tests := []struct {
		args, wantErr string
		remove        bool
		scope         string
	}{
		{args: "mysql"},
		{args: "mysql --remove", remove: true},
		// jubilant's trust(scope="cluster"); Juju accepts it on machine models.
		{args: "mysql --scope cluster", scope: "cluster"},
		{args: "mysql --scope=cluster --remove", remove: true, scope: "cluster"},
		{args: "", wantErr: "no application name specified"},
		{args: "MySQL", wantErr: `invalid application name "MySQL", unexpected uppercase character`},
		{args: "mysql wordpress", wantErr: `unrecognized args: ["wordpress"]`},
		{args: "mysql --scope model", wantErr: `scope "model" not valid`},
		{args: "mysql --scope ''", wantErr: `scope "''" not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *trustOptions
			cmd := NewCmdTrust(cmdutil.TestFactory(), func(o *trustOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				checkErr(t, err, tt.wantErr, true)
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			checkErr(t, err, "", false)
			if got.Application != "mysql" || got.Remove != tt.remove || got.Scope != tt.scope {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

type fakeTrust struct {
	sets []*jujupb.SetConfigRequest
	err  error
}

func (f *fakeTrust) SetConfig(_ context.Context, req *jujupb.SetConfigRequest) error {
	f.sets = append(f.sets, req)
	return f.err
}

func TestTrustRun(t *testing.T) {
	tests := []struct {
		name, args, want, wantErr string
		err                       error
	}{
		{name: "trust", args: "mysql", want: "true"},
		{name: "remove", args: "mysql --remove", want: "false"},
		{name: "error", args: "nope", want: "true", err: apierr.Errorf(apierr.NotFound, `application "nope" not found`),
			wantErr: `setting trust of application "nope": application "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			fake := &fakeTrust{err: tt.err}
			cmd := NewCmdTrust(cmdutil.TestFactory(), func(o *trustOptions) error {
				o.IO = ios
				o.ResolveModel = testModel
				o.Client = func(context.Context) (trustAPI, error) { return fake, nil }
				return trustRun(context.Background(), o)
			})
			checkErr(t, execute(cmd, tt.args), tt.wantErr, false)
			if len(fake.sets) != 1 {
				t.Fatalf("%d SetConfig calls", len(fake.sets))
			}
			req := fake.sets[0]
			if req.GetModel() != "uuid-default" || !reflect.DeepEqual(req.GetValues(), map[string]string{"trust": tt.want}) || len(req.GetReset_()) != 0 {
				t.Errorf("request = %v", req)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut.String())
			}
			golden.Assert(t, out.String(), "trust/"+tt.name+".stdout.golden")
		})
	}
}
