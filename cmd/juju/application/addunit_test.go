package application

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdAddUnit(t *testing.T) {
	tests := []struct {
		args, wantErr, wantApp string
		wantN, wantPlacements  int
	}{
		{args: "mysql", wantApp: "mysql", wantN: 1},
		{args: "mysql -n 3 --to 0,lxd:1,lxd", wantApp: "mysql", wantN: 3, wantPlacements: 3},
		{args: "", wantErr: "no application specified"},
		{args: "mysql extra", wantErr: `unrecognized args: ["extra"]`},
		{args: "Mysql", wantErr: `invalid application name "Mysql", unexpected uppercase character`},
		{args: "mysql -n 0", wantErr: "--num-units must be a positive integer"},
		{args: "mysql --to 4,5,,", wantErr: `invalid --to parameter "4,5,,"`},
		{args: "mysql --timeout 1m", wantErr: "--timeout without --wait not valid"},
		{args: "mysql --wait --timeout 0s", wantErr: "--timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *addUnitOptions
			cmd := NewCmdAddUnit(cmdutil.TestFactory(), func(o *addUnitOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Application != tt.wantApp || got.NumUnits != tt.wantN || len(got.placement) != tt.wantPlacements {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

type fakeAddUnits struct {
	req *jujupb.AddUnitsRequest
	err error
}

func (f *fakeAddUnits) AddUnits(_ context.Context, req *jujupb.AddUnitsRequest) (*jujupb.AddUnitsResponse, error) {
	f.req = req
	return &jujupb.AddUnitsResponse{Units: []string{"mysql/1"}}, f.err
}

func TestAddUnitRun(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	fake := &fakeAddUnits{}
	cmd := NewCmdAddUnit(cmdutil.TestFactory(), func(o *addUnitOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (addUnitAPI, error) { return fake, nil }
		return addUnitRun(context.Background(), o)
	})
	if err := execute(cmd, "mysql -n 2 --to 3"); err != nil {
		t.Fatal(err)
	}
	r := fake.req
	if r.GetModel() != "uuid-default" || r.GetApplication() != "mysql" || r.GetNumUnits() != 2 ||
		len(r.GetPlacement()) != 1 || r.GetPlacement()[0].GetScope() != "#" || r.GetPlacement()[0].GetDirective() != "3" {
		t.Errorf("request = %v", r)
	}
	if out.Len()+errOut.Len() != 0 {
		t.Errorf("add-unit printed %q %q", out.String(), errOut.String())
	}

	fake.err = apierr.Errorf(apierr.NotSupported, `cannot add units to "telegraf": application is a subordinate`)
	err := addUnitRun(context.Background(), &addUnitOptions{IO: ios, ResolveModel: testModel, Application: "telegraf", NumUnits: 1,
		Client: func(context.Context) (addUnitAPI, error) { return fake, nil }})
	if !errors.Is(err, apierr.NotSupported) || err.Error() != `cannot add units to "telegraf": application is a subordinate` {
		t.Errorf("err = %v", err)
	}
}

func TestAddUnitRunWait(t *testing.T) {
	tests := []struct {
		name, args     string
		verbose, quiet bool
		wantStderr     string
		wantWait       bool
	}{
		{name: "silent", args: "mysql"},
		{name: "verbose", args: "mysql", verbose: true, wantStderr: "added unit mysql/1\n"},
		{name: "wait", args: "mysql --wait --timeout 2m", wantWait: true,
			wantStderr: "waiting for 1 unit of mysql: 1 allocating\n1 unit of mysql idle\n"},
		{name: "wait quiet", args: "mysql --wait", quiet: true, wantWait: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.Verbose, ios.Quiet = tt.verbose, tt.quiet
			api := cmdtest.NewWaitAPI(
				&jujupb.FullStatusResponse{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Units: []*jujupb.UnitStatus{
					{Name: "mysql/0", AgentStatus: &jujupb.StatusInfo{Status: "idle"}},
					{Name: "mysql/1", AgentStatus: &jujupb.StatusInfo{Status: "allocating"}}}}}},
				&jujupb.FullStatusResponse{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Units: []*jujupb.UnitStatus{
					{Name: "mysql/0", AgentStatus: &jujupb.StatusInfo{Status: "idle"}},
					{Name: "mysql/1", AgentStatus: &jujupb.StatusInfo{Status: "idle"}}}}}},
			)
			var timeout time.Duration
			cmd := NewCmdAddUnit(cmdutil.TestFactory(), func(o *addUnitOptions) error {
				o.IO = ios
				o.ResolveModel = testModel
				o.Client = func(context.Context) (addUnitAPI, error) { return &fakeAddUnits{}, nil }
				o.WaitClient = func(context.Context) (cmdutil.WaitAPI, error) { return api, nil }
				timeout = o.Timeout
				return addUnitRun(context.Background(), o)
			})
			if err := execute(cmd, tt.args); err != nil {
				t.Fatal(err)
			}
			if out.Len() != 0 || errOut.String() != tt.wantStderr {
				t.Errorf("stdout %q, stderr %q, want %q", out, errOut, tt.wantStderr)
			}
			if waited := api.Reads > 0; waited != tt.wantWait {
				t.Errorf("waited = %v", waited)
			}
			if tt.wantWait && (api.Watches[0].Model != "uuid-default" || tt.args == "mysql --wait --timeout 2m" && timeout != 2*time.Minute) {
				t.Errorf("watch %v, timeout %s", api.Watches[0], timeout)
			}
		})
	}
}
