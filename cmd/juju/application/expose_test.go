package application

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func rulesString(rules []*jujupb.ExposedEndpoint) string {
	var parts []string
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%q spaces=%v cidrs=%v", r.GetEndpoint(), r.GetToSpaces(), r.GetToCidrs()))
	}
	return strings.Join(parts, "; ")
}

// The rules sent are Juju's client's: none when nothing narrows them (the controller then
// exposes every endpoint to every network), else one per endpoint named.
func TestNewCmdExpose(t *testing.T) {
	tests := []struct {
		args, wantErr, want string
	}{
		{args: "apache2", want: ""},
		{args: "apache2 --to-cidrs 0.0.0.0/0,::/0", want: ""},
		{args: "apache2 --to-cidrs 0.0.0.0/0", want: ""},
		{args: "apache2 --to-cidrs 0.0.0.0/0,10.0.0.0/8", want: `"" spaces=[] cidrs=[0.0.0.0/0 10.0.0.0/8]`},
		{args: "apache2 --endpoints www", want: `"www" spaces=[] cidrs=[]`},
		{args: "apache2 --endpoints www,logs --to-cidrs 10.0.0.0/24 --to-spaces alpha",
			want: `"www" spaces=[alpha] cidrs=[10.0.0.0/24]; "logs" spaces=[alpha] cidrs=[10.0.0.0/24]`},
		{args: "apache2 --endpoints www --endpoints logs, --to-spaces=alpha", want: `"www" spaces=[alpha] cidrs=[]; "logs" spaces=[alpha] cidrs=[]`},
		{args: "", wantErr: "no application name specified"},
		{args: "Apache2", wantErr: `invalid application name "Apache2", unexpected uppercase character`},
		{args: "apache2 mysql", wantErr: `unrecognized args: ["mysql"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *exposeOptions
			cmd := NewCmdExpose(cmdutil.TestFactory(), func(o *exposeOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				checkErr(t, err, tt.wantErr, true)
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			checkErr(t, err, "", false)
			if got.Application != "apache2" {
				t.Errorf("application %q", got.Application)
			}
			if rules := rulesString(exposeRules(got)); rules != tt.want {
				t.Errorf("rules %s\nwant  %s", rules, tt.want)
			}
		})
	}
}

func TestNewCmdUnexpose(t *testing.T) {
	tests := []struct {
		args, wantErr, want string
	}{
		{args: "apache2", want: ""},
		{args: "apache2 --endpoints www,logs", want: "www logs"},
		{args: "apache2 --endpoints www --endpoints logs", want: "www logs"},
		{args: "", wantErr: "no application name specified"},
		{args: "apache2 x", wantErr: `unrecognized args: ["x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *unexposeOptions
			cmd := NewCmdUnexpose(cmdutil.TestFactory(), func(o *unexposeOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				checkErr(t, err, tt.wantErr, true)
				return
			}
			checkErr(t, err, "", false)
			if strings.Join(got.Endpoints, " ") != tt.want {
				t.Errorf("endpoints %v, want %s", got.Endpoints, tt.want)
			}
		})
	}
}

type fakeExpose struct {
	calls []string
	err   error
}

func (f *fakeExpose) Expose(_ context.Context, req *jujupb.ExposeRequest) error {
	f.calls = append(f.calls, fmt.Sprintf("Expose %s %s [%s]", req.GetModel(), req.GetApplication(), rulesString(req.GetEndpoints())))
	return f.err
}

func (f *fakeExpose) Unexpose(_ context.Context, req *jujupb.UnexposeRequest) error {
	f.calls = append(f.calls, fmt.Sprintf("Unexpose %s %s %v", req.GetModel(), req.GetApplication(), req.GetEndpoints()))
	return f.err
}

// The request reaches the controller as typed; its refusal is the command's one error, as
// Juju's, and nothing is printed on success.
func TestExposeUnexposeRun(t *testing.T) {
	tests := []struct {
		name, args, want, wantErr string
		unexpose                  bool
		err                       error
	}{
		{name: "expose", args: "mysql", want: "Expose uuid-default mysql []"},
		{name: "expose endpoint", args: "mysql --endpoints db --to-cidrs 10.0.0.0/8",
			want: `Expose uuid-default mysql ["db" spaces=[] cidrs=[10.0.0.0/8]]`},
		{name: "refused", args: "mysql --endpoints nope", want: `Expose uuid-default mysql ["nope" spaces=[] cidrs=[]]`,
			err: apierr.Errorf(apierr.NotFound, `endpoint "nope" not found`), wantErr: `endpoint "nope" not found`},
		{name: "unexpose", args: "mysql", unexpose: true, want: "Unexpose uuid-default mysql []"},
		{name: "unexpose endpoint", args: "mysql --endpoints db", unexpose: true, want: "Unexpose uuid-default mysql [db]",
			err: apierr.Errorf(apierr.NotValid, `endpoint "db" is not exposed`), wantErr: `endpoint "db" is not exposed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			fake := &fakeExpose{err: tt.err}
			var err error
			if tt.unexpose {
				cmd := NewCmdUnexpose(cmdutil.TestFactory(), func(o *unexposeOptions) error {
					o.IO, o.ResolveModel = ios, testModel
					o.Client = func(context.Context) (exposeAPI, error) { return fake, nil }
					return unexposeRun(context.Background(), o)
				})
				err = execute(cmd, tt.args)
			} else {
				cmd := NewCmdExpose(cmdutil.TestFactory(), func(o *exposeOptions) error {
					o.IO, o.ResolveModel = ios, testModel
					o.Client = func(context.Context) (exposeAPI, error) { return fake, nil }
					return exposeRun(context.Background(), o)
				})
				err = execute(cmd, tt.args)
			}
			checkErr(t, err, tt.wantErr, false)
			if len(fake.calls) != 1 || fake.calls[0] != tt.want {
				t.Errorf("calls %q\nwant %q", fake.calls, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q", out.String())
			}
			// What the user sees on stderr: nothing, or the controller's one ERROR line.
			stderr := errOut.String()
			if err != nil {
				stderr += "ERROR " + err.Error() + "\n"
			}
			dir := "expose/"
			if tt.unexpose {
				dir = "unexpose/"
			}
			golden.Assert(t, stderr, dir+strings.ReplaceAll(tt.name, " ", "-")+".stderr.golden")
		})
	}
}
