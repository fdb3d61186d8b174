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

func TestNewCmdShowTask(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		id            string
		wait          time.Duration
		format        output.Format
	}{
		{args: "2", id: "2", wait: noWait, format: Plain},
		{args: "2 --wait 2m --format json --utc", id: "2", wait: 2 * time.Minute, format: output.JSON},
		{args: "2 --watch --format yaml", id: "2", wait: 0, format: output.YAML},
		{args: "f47ac10b-58cc-4372-a567-0e02b2c3d479", id: "f47ac10b-58cc-4372-a567-0e02b2c3d479", wait: noWait, format: Plain},
		{args: "", wantErr: "no task ID specified", usage: true},
		{args: "x", wantErr: `task ID "x" not valid`, usage: true},
		{args: "2 3", wantErr: `unrecognized args: ["3"]`, usage: true},
		{args: "2 --watch --wait 1m", wantErr: "specify either --watch or --wait but not both", usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showTaskOptions
			cmd := NewCmdShowTask(cmdutil.TestFactory(), func(o *showTaskOptions) error { got = o; return nil })
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

func showTaskCase(t *testing.T, fake *fakeAPI, opts *showTaskOptions) (stdout, stderr string, err error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO, opts.ResolveModel, opts.UTC = ios, testModel, true
	opts.Client = func(context.Context) (showTaskAPI, error) { return fake, nil }
	err = showTaskRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestShowTaskRun(t *testing.T) {
	completed := done("2", "mysql/0", "backup", "completed", `{"return-code":0,"path":"/tmp/backup.tar","stdout":"done\n"}`, "dumping tables")
	pending := queued("4", "0", "juju-exec")
	for _, tc := range []struct {
		name string
		task *jujupb.Task
	}{
		{name: "completed", task: completed},
		{name: "pending", task: pending},
	} {
		for _, format := range []output.Format{Plain, output.JSON, output.YAML} {
			t.Run(tc.name+"/"+string(format), func(t *testing.T) {
				fake := &fakeAPI{tasks: map[string]*jujupb.Task{tc.task.GetId(): tc.task}}
				stdout, stderr, err := showTaskCase(t, fake, &showTaskOptions{ID: tc.task.GetId(), Wait: noWait, Format: format})
				if err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, stdout, "show-task/"+tc.name+"."+string(format)+".golden")
				if stderr != "" || len(fake.watched) != 0 {
					t.Errorf("stderr %q, watched %v", stderr, fake.watched)
				}
			})
		}
	}
}

func TestShowTaskWait(t *testing.T) {
	updates := []*jujupb.Task{running("2", "mysql/0", "backup", "dumping tables"),
		done("2", "mysql/0", "backup", "completed", `{"return-code":0,"path":"/tmp/backup.tar"}`, "dumping tables", "compressing")}
	fake := &fakeAPI{tasks: map[string]*jujupb.Task{"2": queued("2", "mysql/0", "backup")}, updates: updates}
	stdout, stderr, err := showTaskCase(t, fake, &showTaskOptions{ID: "2", Wait: 0, Format: output.YAML})
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, stdout, "show-task/waited.yaml.golden")
	golden.Assert(t, stderr, "show-task/waited.stderr.golden")

	// A wait that runs out.
	fake = &fakeAPI{tasks: map[string]*jujupb.Task{"2": queued("2", "mysql/0", "backup")}, updates: updates[:1]}
	stdout, _, err = showTaskCase(t, fake, &showTaskOptions{ID: "2", Wait: 20 * time.Millisecond, Format: output.YAML})
	cmdtest.CheckErr(t, err, "maximum wait time reached", false)
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}

	// A finished task is shown at once, whatever the wait.
	fake = &fakeAPI{tasks: map[string]*jujupb.Task{"2": updates[1]}}
	if _, _, err := showTaskCase(t, fake, &showTaskOptions{ID: "2", Wait: 0, Format: output.YAML}); err != nil || len(fake.watched) != 0 {
		t.Errorf("err %v, watched %v", err, fake.watched)
	}

	// An unknown task.
	_, _, err = showTaskCase(t, &fakeAPI{}, &showTaskOptions{ID: "9", Wait: noWait, Format: output.YAML})
	cmdtest.CheckErr(t, err, `task "9" not found`, false)
}
