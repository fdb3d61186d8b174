package application

import (
	"context"
	"strings"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdRemove(t *testing.T) {
	tests := []struct {
		args, wantErr, wantApps string
		want                    cmdutil.RemoveFlags
		wait                    cmdutil.WaitFlags
	}{
		{args: "mysql", wantApps: "mysql"},
		{args: "mysql wordpress --no-prompt --dry-run", wantApps: "mysql wordpress", want: cmdutil.RemoveFlags{NoPrompt: true, DryRun: true}},
		{args: "mysql --force --no-wait", wantApps: "mysql", want: cmdutil.RemoveFlags{Force: true, NoWait: true}},
		{args: "", wantErr: "no application specified"},
		{args: "X", wantErr: `invalid application name "X"`},
		{args: "mysql app-1", wantErr: `invalid application name "app-1"`},
		{args: "mysql/0", wantErr: `invalid application name "mysql/0"`},
		{args: "mysql --no-wait", wantErr: "--no-wait without --force not valid"},
		{args: "mysql --wait --timeout 90s", wantApps: "mysql", wait: cmdutil.WaitFlags{Wait: true, Timeout: 90 * time.Second}},
		{args: "mysql --timeout 1m", wantErr: "--timeout without --wait not valid"},
		{args: "mysql --wait --dry-run", wantErr: "--wait with --dry-run not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *removeOptions
			cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if strings.Join(got.Applications, " ") != tt.wantApps || got.RemoveFlags != tt.want ||
				tt.wait.Wait && got.Wait != tt.wait || !tt.wait.Wait && got.Wait.Wait {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeRemoveApplications answers every call with the same results and records requests.
type fakeRemoveApplications struct {
	results []*jujupb.RemoveResult
	reqs    []*jujupb.RemoveRequest
}

func (f *fakeRemoveApplications) RemoveApplications(_ context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	f.reqs = append(f.reqs, req)
	return f.results, nil
}

func TestRemoveRun(t *testing.T) {
	two := []*jujupb.RemoveResult{
		{Name: "mysql", Units: []string{"mysql/0", "mysql/1"}},
		{Name: "logging"},
	}
	tests := []struct {
		name, args, in, names string
		terminal              bool
		results               []*jujupb.RemoveResult
		snapshots             []*jujupb.FullStatusResponse // for --wait
		wantCalls             int
		wantErr               string
	}{
		{name: "no-prompt", args: "mysql logging --no-prompt", names: "mysql logging", terminal: true, results: two, wantCalls: 1},
		{name: "no-terminal", args: "mysql logging", names: "mysql logging", results: two, wantCalls: 0,
			wantErr: "application removal: cannot ask for confirmation: stdin is not a terminal; pass --no-prompt to go ahead without asking"},
		{name: "wait", args: "mysql logging --no-prompt --wait", names: "mysql logging", results: two, wantCalls: 1,
			snapshots: []*jujupb.FullStatusResponse{
				{Applications: []*jujupb.ApplicationStatus{
					{Name: "mysql", Life: "dying", Units: []*jujupb.UnitStatus{{Name: "mysql/0"}, {Name: "mysql/1"}}},
					{Name: "logging", Life: "dying"},
				}},
				{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Life: "dying", Units: []*jujupb.UnitStatus{{Name: "mysql/1"}}}}},
				{},
			}},
		{name: "wait-timeout", args: "mysql --no-prompt --wait --timeout 10ms", names: "mysql", results: two[:1], wantCalls: 1,
			snapshots: []*jujupb.FullStatusResponse{
				{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Life: "dying", BlockedBy: []string{"waiting for 1 unit to be removed: mysql/0",
					`unit mysql/0 is in error: hook failed: "stop"`}, Units: []*jujupb.UnitStatus{{Name: "mysql/0"}}}}},
			},
			wantErr: "timed out after 10ms waiting for removal of application mysql: dying (1 unit left)\n" +
				`  application mysql: waiting for 1 unit to be removed: mysql/0; unit mysql/0 is in error: hook failed: "stop"`},
		{name: "dry-run", args: "mysql logging --dry-run", names: "mysql logging", terminal: true, results: two, wantCalls: 1},
		{name: "prompt-yes", args: "mysql logging --force", names: "mysql logging", terminal: true, in: "Yes\n", results: two, wantCalls: 2},
		{name: "prompt-eof", args: "mysql logging", names: "mysql logging", terminal: true, results: two, wantCalls: 1,
			wantErr: "application removal: aborted"},
		// The plan for what exists, the error for what does not.
		{name: "dry-run-partial", args: "wp2 nosuch --dry-run", names: "wp2 nosuch", results: []*jujupb.RemoveResult{
			{Name: "wp2", Units: []string{"wp2/0"}},
			{Name: "nosuch", Error: `application "nosuch" not found`},
		}, wantCalls: 1, wantErr: cmdutil.ErrSilent.Error()},
		{name: "failure", args: "mysql nope --no-prompt", names: "mysql nope", results: []*jujupb.RemoveResult{
			{Name: "mysql", Units: []string{"mysql/0"}},
			{Name: "nope", Error: `application "nope" not found`},
		}, wantCalls: 1, wantErr: cmdutil.ErrSilent.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.InTerminal = tt.terminal
			ios.In = strings.NewReader(tt.in)
			fake := &fakeRemoveApplications{results: tt.results}
			cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error {
				o.IO = ios
				o.ResolveModel = func(context.Context) (*cmdutil.ModelRef, error) {
					return &cmdutil.ModelRef{Name: "default", UUID: "uuid-default"}, nil
				}
				o.Client = func(context.Context) (removeAPI, error) { return fake, nil }
				o.WaitClient = func(context.Context) (cmdutil.WaitAPI, error) { return cmdtest.NewWaitAPI(tt.snapshots...), nil }
				return removeRun(context.Background(), o)
			})
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, false)
			if len(fake.reqs) != tt.wantCalls {
				t.Fatalf("%d calls, want %d", len(fake.reqs), tt.wantCalls)
			}
			golden.Assert(t, out.String(), "remove-application/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "remove-application/"+tt.name+".stderr.golden")
			if tt.wantCalls == 0 {
				return
			}
			prompt := tt.terminal && !strings.Contains(tt.args, "--no-prompt")
			if dry := prompt || strings.Contains(tt.args, "--dry-run"); fake.reqs[0].GetDryRun() != dry {
				t.Errorf("first call DryRun = %v, want %v", fake.reqs[0].GetDryRun(), dry)
			}
			last := fake.reqs[len(fake.reqs)-1]
			if last.GetModel() != "uuid-default" || strings.Join(last.GetNames(), " ") != tt.names ||
				last.GetForce() != strings.Contains(tt.args, "--force") {
				t.Errorf("request = %v", last)
			}
		})
	}
}

// jubilant's remove_application(destroy_storage=True) passes --destroy-storage: accepted, as
// there is no storage to destroy.
func TestNewCmdRemoveDestroyStorage(t *testing.T) {
	var got *removeOptions
	cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "--no-prompt mysql --destroy-storage"); err != nil || !got.DestroyStorage || !got.NoPrompt {
		t.Fatalf("%+v %v", got, err)
	}
}
