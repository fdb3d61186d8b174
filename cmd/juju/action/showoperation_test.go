package action

import (
	"context"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdShowOperation(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		id            string
		wait          time.Duration
		format        output.Format
	}{
		{args: "1", id: "1", wait: noWait, format: output.YAML},
		{args: "1 --wait 1m --format json --utc", id: "1", wait: time.Minute, format: output.JSON},
		{args: "1 --watch", id: "1", wait: 0, format: output.YAML},
		{args: "", wantErr: "no operation ID specified", usage: true},
		{args: "1 2", wantErr: `unrecognized args: ["2"]`, usage: true},
		{args: "1 --watch --wait 5s", wantErr: "specify either --watch or --wait but not both", usage: true},
		{args: "1 --format plain", wantErr: `invalid value "plain" for --format: expected one of json, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showOperationOptions
			cmd := NewCmdShowOperation(cmdutil.TestFactory(), func(o *showOperationOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr != "" {
				return
			}
			if got.ID != tt.id || got.Wait != tt.wait || got.Format != tt.format {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func showOperationCase(t *testing.T, fake *fakeAPI, opts *showOperationOptions) (string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO, opts.ResolveModel, opts.UTC = ios, testModel, true
	opts.Client = func(context.Context) (showOperationAPI, error) { return fake, nil }
	err := showOperationRun(context.Background(), opts)
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q", errOut)
	}
	return out.String(), err
}

func TestShowOperationRun(t *testing.T) {
	ops := someOperations()
	for _, tc := range []struct {
		name string
		op   *jujupb.Operation
	}{
		{name: "backup", op: ops[2]},
		{name: "exec", op: ops[1]},
		{name: "mixed", op: ops[0]},
	} {
		for _, format := range []output.Format{output.JSON, output.YAML} {
			t.Run(tc.name+"/"+string(format), func(t *testing.T) {
				fake := &fakeAPI{ops: map[string][]*jujupb.Operation{tc.op.GetId(): {tc.op}}}
				stdout, err := showOperationCase(t, fake, &showOperationOptions{ID: tc.op.GetId(), Wait: noWait, Format: format})
				if err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, stdout, "show-operation/"+tc.name+"."+string(format)+".golden")
				if len(fake.watched) != 0 {
					t.Errorf("watched %v", fake.watched)
				}
			})
		}
	}
}

func TestShowOperationWait(t *testing.T) {
	ops := someOperations()
	runningOp := ops[1]
	finished := operation("4", done("5", "0", "juju-exec", "completed", `{"return-code":0}`), done("6", "1", "juju-exec", "completed", `{"return-code":0}`))
	finished.Status, finished.Summary = "completed", "exec uptime"
	fake := &fakeAPI{ops: map[string][]*jujupb.Operation{"4": {runningOp, finished}}, updates: finished.Tasks}
	stdout, err := showOperationCase(t, fake, &showOperationOptions{ID: "4", Wait: time.Minute, Format: output.YAML})
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, stdout, "show-operation/waited.yaml.golden")
	if len(fake.watched) != 1 || fake.opsAsked != 2 {
		t.Errorf("watched %v, asked %d times", fake.watched, fake.opsAsked)
	}

	fake = &fakeAPI{ops: map[string][]*jujupb.Operation{"4": {runningOp}}, updates: runningOp.Tasks}
	stdout, err = showOperationCase(t, fake, &showOperationOptions{ID: "4", Wait: 20 * time.Millisecond, Format: output.YAML})
	cmdtest.CheckErr(t, err, "timeout reached", false)
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}

	_, err = showOperationCase(t, &fakeAPI{}, &showOperationOptions{ID: "7", Wait: noWait, Format: output.YAML})
	cmdtest.CheckErr(t, err, `operation "7" not found`, false)
}
