package machine

import (
	"context"
	"strings"
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdRemove(t *testing.T) {
	tests := []struct {
		args, wantErr, wantMachines string
		want                        cmdutil.RemoveFlags
		wantKeep                    bool
		wait                        cmdutil.WaitFlags
	}{
		{args: "5", wantMachines: "5"},
		{args: "5 0/lxd/1 --no-prompt --dry-run", wantMachines: "5 0/lxd/1", want: cmdutil.RemoveFlags{NoPrompt: true, DryRun: true}},
		{args: "6 --force --no-wait --keep-instance", wantMachines: "6", want: cmdutil.RemoveFlags{Force: true, NoWait: true}, wantKeep: true},
		{args: "", wantErr: "no machines specified"},
		{args: "x", wantErr: `invalid machine id "x"`},
		{args: "5 05", wantErr: `invalid machine id "05"`},
		{args: "0/lxd", wantErr: `invalid machine id "0/lxd"`},
		{args: "5 --no-wait", wantErr: "--no-wait without --force not valid"},
		{args: "5 --wait", wantMachines: "5", wait: cmdutil.WaitFlags{Wait: true, Timeout: cmdutil.DefaultWaitTimeout}},
		{args: "5 --timeout 1m", wantErr: "--timeout without --wait not valid"},
		{args: "5 --wait --timeout -1s", wantErr: "--timeout must be positive"},
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
			if strings.Join(got.Machines, " ") != tt.wantMachines || got.RemoveFlags != tt.want || got.KeepInstance != tt.wantKeep ||
				tt.wait.Wait && got.Wait != tt.wait || !tt.wait.Wait && got.Wait.Wait {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeRemoveMachines answers dry runs and real calls with their own results and records
// requests.
type fakeRemoveMachines struct {
	dryRun, real []*jujupb.RemoveResult
	reqs         []*jujupb.RemoveRequest
}

func (f *fakeRemoveMachines) RemoveMachines(_ context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	f.reqs = append(f.reqs, req)
	if req.GetDryRun() {
		return f.dryRun, nil
	}
	return f.real, nil
}

func TestRemoveRun(t *testing.T) {
	withUnits := []*jujupb.RemoveResult{
		{Name: "5", Units: []string{"mysql/0", "wordpress/1"}, Machines: []string{"5/lxd/0"}, RequiresForce: true},
		{Name: "6"},
	}
	forced := []*jujupb.RemoveResult{
		{Name: "5", Units: []string{"mysql/0", "wordpress/1"}, Machines: []string{"5/lxd/0"}},
		{Name: "6"},
	}
	tests := []struct {
		name, args, in string
		terminal       bool
		dryRun, real   []*jujupb.RemoveResult
		snapshots      []*jujupb.FullStatusResponse // for --wait
		wantCalls      int
		wantErr        string
	}{
		{name: "dry-run-requires-force", args: "5 6 --dry-run", dryRun: withUnits, wantCalls: 1},
		{name: "dry-run-keep-instance", args: "5 6 --dry-run --force --keep-instance", dryRun: forced, wantCalls: 1},
		{name: "no-prompt", args: "5 6 --no-prompt --force", terminal: true, real: forced, wantCalls: 1},
		{name: "prompt-yes", args: "5 6 --force --no-wait", terminal: true, in: "y\n", dryRun: forced, real: forced, wantCalls: 2},
		{name: "prompt-no", args: "5 6", terminal: true, in: "n\n", dryRun: forced, wantCalls: 1, wantErr: "machine removal: aborted"},
		// Validate, then ask: machine 5 has units, so without --force nothing is asked.
		{name: "prompt-requires-force", args: "5 6", terminal: true, in: "y\n", dryRun: withUnits, wantCalls: 1,
			wantErr: "machine removal: removing machine 5 requires --force; nothing was removed"},
		{name: "no-terminal", args: "5 6 --force", real: forced, wantCalls: 0,
			wantErr: "machine removal: cannot ask for confirmation: stdin is not a terminal; pass --no-prompt to go ahead without asking"},
		{name: "wait", args: "5 6 --no-prompt --force --wait", real: forced, wantCalls: 1,
			snapshots: []*jujupb.FullStatusResponse{
				{Machines: []*jujupb.MachineStatus{{Id: "5", Life: "dying"}, {Id: "6", Life: "dead"}}},
				{Machines: []*jujupb.MachineStatus{{Id: "5", Life: "dead"}}},
				{},
			}},
		{name: "failure", args: "5 6 --no-prompt", real: []*jujupb.RemoveResult{
			{Name: "5", Error: `cannot destroy machine 5: machine 5 has unit "mysql/0" assigned`},
			{Name: "6"},
		}, wantCalls: 1, wantErr: cmdutil.ErrSilent.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.InTerminal = tt.terminal
			ios.In = strings.NewReader(tt.in)
			fake := &fakeRemoveMachines{dryRun: tt.dryRun, real: tt.real}
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
			for _, r := range fake.reqs {
				if r.GetModel() != "uuid-default" || strings.Join(r.GetNames(), " ") != "5 6" ||
					r.GetForce() != strings.Contains(tt.args, "--force") ||
					r.GetNoWait() != strings.Contains(tt.args, "--no-wait") ||
					r.GetKeepInstance() != strings.Contains(tt.args, "--keep-instance") {
					t.Errorf("request = %v", r)
				}
			}
			golden.Assert(t, out.String(), "remove-machine/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "remove-machine/"+tt.name+".stderr.golden")
		})
	}
}
