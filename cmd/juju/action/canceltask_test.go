package action

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

func TestNewCmdCancelTask(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		ids           string
		format        output.Format
	}{
		{args: "2", ids: "2", format: output.YAML},
		{args: "2 4 6 --format json", ids: "2 4 6", format: output.JSON},
		{args: "", wantErr: "no task IDs specified", usage: true},
		{args: "2 x", wantErr: `task ID "x" not valid`, usage: true},
		{args: "2 --format plain", wantErr: `invalid value "plain" for --format: expected one of json, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *cancelTaskOptions
			cmd := NewCmdCancelTask(cmdutil.TestFactory(), func(o *cancelTaskOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr != "" {
				return
			}
			if strings.Join(got.IDs, " ") != tt.ids || got.Format != tt.format {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func TestCancelTaskRun(t *testing.T) {
	cancelled := queued("2", "mysql/0", "backup")
	cancelled.Status = "cancelled"
	finished := done("3", "0", "juju-exec", "completed", `{"return-code":0}`)
	for _, format := range []output.Format{output.JSON, output.YAML} {
		t.Run(string(format), func(t *testing.T) {
			ios, out, _ := output.TestStreams()
			fake := &fakeAPI{cancelled: []*jujupb.Task{cancelled, finished}}
			opts := &cancelTaskOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (cancelTaskAPI, error) { return fake, nil },
				IDs: []string{"2", "3"}, Format: format}
			if err := cancelTaskRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "cancel-task/two."+string(format)+".golden")
			if strings.Join(fake.cancelReq, " ") != "2 3" || fake.calls[0] != "CancelTasks uuid-default" {
				t.Errorf("asked %q (%q)", fake.cancelReq, fake.calls)
			}
		})
	}
	ios, out, _ := output.TestStreams()
	opts := &cancelTaskOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (cancelTaskAPI, error) { return &fakeAPI{}, nil },
		IDs: []string{"9"}, Format: output.YAML}
	cmdtest.CheckErr(t, cancelTaskRun(context.Background(), opts), "no tasks found, no tasks have been canceled", false)
	if out.Len() != 0 {
		t.Errorf("stdout = %q", out)
	}
}
