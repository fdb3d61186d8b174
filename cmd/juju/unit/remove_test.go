package unit

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
		args, wantErr, wantUnits string
		want                     cmdutil.RemoveFlags
		wait                     cmdutil.WaitFlags
	}{
		{args: "mysql/1", wantUnits: "mysql/1"},
		{args: "mysql/1 wordpress/0 --no-prompt --dry-run", wantUnits: "mysql/1 wordpress/0", want: cmdutil.RemoveFlags{NoPrompt: true, DryRun: true}},
		{args: "mysql/1 --force --no-wait", wantUnits: "mysql/1", want: cmdutil.RemoveFlags{Force: true, NoWait: true}},
		{args: "", wantErr: "no units specified"},
		{args: "mysql", wantErr: `invalid unit name "mysql"`},
		{args: "mysql/1 mysql/x", wantErr: `invalid unit name "mysql/x"`},
		{args: "mysql/1 --no-wait", wantErr: "--no-wait without --force not valid"},
		{args: "mysql --no-wait", wantErr: `invalid unit name "mysql"`},
		{args: "mysql/1 --wait", wantUnits: "mysql/1", wait: cmdutil.WaitFlags{Wait: true, Timeout: cmdutil.DefaultWaitTimeout}},
		{args: "mysql/1 --no-prompt --wait --timeout 1m", wantUnits: "mysql/1", want: cmdutil.RemoveFlags{NoPrompt: true},
			wait: cmdutil.WaitFlags{Wait: true, Timeout: time.Minute}},
		{args: "mysql/1 --timeout 1m", wantErr: "--timeout without --wait not valid"},
		{args: "mysql/1 --wait --dry-run", wantErr: "--wait with --dry-run not valid"},
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
			if strings.Join(got.Units, " ") != tt.wantUnits || got.RemoveFlags != tt.want ||
				tt.wait.Wait && got.Wait != tt.wait || !tt.wait.Wait && got.Wait.Wait {
				t.Errorf("opts = %+v", got)
			}
		})
	}
	if NewCmdRemove(cmdutil.TestFactory(), nil).Flags().Lookup("destroy-storage") == nil {
		t.Error("remove-unit lacks --destroy-storage, which jubilant's remove_unit sends")
	}
	// --num-units scales Kubernetes applications in Juju; there are none here.
	for _, name := range []string{"storage", "num-units"} {
		if NewCmdRemove(cmdutil.TestFactory(), nil).Flags().Lookup(name) != nil {
			t.Errorf("remove-unit has --%s", name)
		}
	}
}

// fakeRemoveUnits answers dry runs and real calls with the same results and records requests.
type fakeRemoveUnits struct {
	results []*jujupb.RemoveResult
	reqs    []*jujupb.RemoveRequest
}

func (f *fakeRemoveUnits) RemoveUnits(_ context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	f.reqs = append(f.reqs, req)
	return f.results, nil
}

func removeModelRef(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

func TestRemoveRun(t *testing.T) {
	withSubordinate := []*jujupb.RemoveResult{
		{Name: "mysql/1", Units: []string{"logging/1", "telegraf/1"}},
		{Name: "wordpress/0"},
	}
	tests := []struct {
		name, args, in string
		names          string // sent in the request
		terminal       bool
		results        []*jujupb.RemoveResult
		snapshots      []*jujupb.FullStatusResponse // for --wait
		wantCalls      int
		wantErr        string
	}{
		{name: "no-prompt", args: "mysql/1 wordpress/0 --no-prompt", names: "mysql/1 wordpress/0", terminal: true, results: withSubordinate, wantCalls: 1},
		{name: "dry-run", args: "mysql/1 wordpress/0 --dry-run", names: "mysql/1 wordpress/0", results: withSubordinate, wantCalls: 1},
		{name: "prompt-yes", args: "mysql/1 wordpress/0", names: "mysql/1 wordpress/0", terminal: true, in: "y\n", results: withSubordinate, wantCalls: 2},
		{name: "prompt-no", args: "mysql/1 wordpress/0", names: "mysql/1 wordpress/0", terminal: true, in: "no\n", results: withSubordinate, wantCalls: 1,
			wantErr: "unit removal: aborted"},
		{name: "no-terminal", args: "mysql/1 wordpress/0", results: withSubordinate, wantCalls: 0,
			wantErr: "unit removal: cannot ask for confirmation: stdin is not a terminal; pass --no-prompt to go ahead without asking"},
		{name: "wait", args: "mysql/1 wordpress/0 --no-prompt --wait", names: "mysql/1 wordpress/0", results: withSubordinate, wantCalls: 1,
			snapshots: []*jujupb.FullStatusResponse{
				{Applications: []*jujupb.ApplicationStatus{
					{Name: "mysql", Units: []*jujupb.UnitStatus{{Name: "mysql/1", Life: "dying"}}},
					{Name: "wordpress", Units: []*jujupb.UnitStatus{{Name: "wordpress/0", Life: "dying"}}},
				}},
				{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Units: []*jujupb.UnitStatus{{Name: "mysql/1", Life: "dead"}}}}},
				{},
			}},
		{name: "failure", args: "mysql/1 foo/0 telegraf/0 --force --no-prompt", names: "mysql/1 foo/0 telegraf/0", results: []*jujupb.RemoveResult{
			{Name: "mysql/1", Units: []string{"logging/1"}},
			{Name: "foo/0", Error: `unit "foo/0" does not exist`},
			{Name: "telegraf/0", Error: `cannot destroy unit "telegraf/0": unit "telegraf/0" is a subordinate, to remove use remove-relation. Note: this will remove all units of "telegraf"`},
		}, wantCalls: 1, wantErr: cmdutil.ErrSilent.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.InTerminal = tt.terminal
			ios.In = strings.NewReader(tt.in)
			fake := &fakeRemoveUnits{results: tt.results}
			cmd := NewCmdRemove(cmdutil.TestFactory(), func(o *removeOptions) error {
				o.IO = ios
				o.ResolveModel = removeModelRef
				o.Client = func(context.Context) (removeAPI, error) { return fake, nil }
				o.WaitClient = func(context.Context) (cmdutil.WaitAPI, error) { return cmdtest.NewWaitAPI(tt.snapshots...), nil }
				return removeRun(context.Background(), o)
			})
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, false)
			if len(fake.reqs) != tt.wantCalls {
				t.Fatalf("%d calls, want %d", len(fake.reqs), tt.wantCalls)
			}
			golden.Assert(t, out.String(), "remove-unit/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "remove-unit/"+tt.name+".stderr.golden")
			if tt.wantCalls == 0 {
				return
			}
			prompt := tt.terminal && !strings.Contains(tt.args, "--no-prompt")
			if dry := prompt || strings.Contains(tt.args, "--dry-run"); fake.reqs[0].GetDryRun() != dry {
				t.Errorf("first call DryRun = %v, want %v", fake.reqs[0].GetDryRun(), dry)
			}
			last := fake.reqs[len(fake.reqs)-1]
			if last.GetModel() != "uuid-default" || strings.Join(last.GetNames(), " ") != tt.names ||
				last.GetForce() != strings.Contains(tt.args, "--force") || last.GetKeepInstance() {
				t.Errorf("request = %v", last)
			}
		})
	}
}
