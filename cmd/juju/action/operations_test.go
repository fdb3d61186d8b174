package action

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

func TestNewCmdOperations(t *testing.T) {
	tests := []struct {
		args, wantErr string
		usage         bool
		check         func(o *operationsOptions) bool
	}{
		{args: "", check: func(o *operationsOptions) bool { return o.Format == Plain && o.Limit == 0 && o.Offset == 0 }},
		{args: "--apps mysql,wordpress --applications pg --units mysql/0 --machines 0,1 --actions backup,juju-exec --status running,pending --offset 5 --limit 10 --format json --utc",
			check: func(o *operationsOptions) bool {
				return strings.Join(o.Applications, " ") == "mysql wordpress pg" && strings.Join(o.Units, " ") == "mysql/0" &&
					strings.Join(o.Machines, " ") == "0 1" && strings.Join(o.Actions, " ") == "backup juju-exec" &&
					strings.Join(o.Statuses, " ") == "running pending" && o.Offset == 5 && o.Limit == 10 && o.Format == output.JSON && o.UTC
			}},
		{args: "--apps Bad --units mysql --machines x --status done", usage: true,
			wantErr: "invalid application name \"Bad\"; invalid unit name \"mysql\"; invalid machine id \"x\"; " +
				"\"done\" is not a valid task status, want one of [pending running completed failed cancelled aborting aborted error]"},
		{args: "extra", wantErr: `unrecognized args: ["extra"]`, usage: true},
		{args: "--format tabular", wantErr: `invalid value "tabular" for --format: expected one of json, plain, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *operationsOptions
			cmd := NewCmdOperations(cmdutil.TestFactory(), func(o *operationsOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr == "" && !tt.check(got) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// someOperations are three operations, newest first as the controller lists them: an exec on
// two machines, a finished backup on two units, and a pending one.
func someOperations() []*jujupb.Operation {
	backup := operation("1", done("2", "mysql/0", "backup", "completed", `{"return-code":0,"path":"/tmp/b0"}`, "dumping tables"),
		done("3", "mysql/1", "backup", "completed", `{"return-code":0,"path":"/tmp/b1"}`))
	backup.Summary, backup.Status, backup.Started, backup.Completed = "run backup", "completed", at(time.Second), at(2*time.Second)
	for _, t := range backup.Tasks {
		t.OperationId, t.ParamsJson = "1", []byte(`{"level":3,"out":"b.tar"}`)
	}
	exec := operation("4", done("5", "0", "juju-exec", "completed", `{"return-code":0,"stdout":"up\n"}`),
		running("6", "1", "juju-exec"))
	exec.Summary, exec.Status, exec.Started = "exec uptime", "running", at(time.Second)
	for _, t := range exec.Tasks {
		t.OperationId, t.ParamsJson = "4", []byte(`{"command":"uptime","timeout":300}`)
	}
	mixed := operation("10", queued("11", "mysql/0", "backup"), queued("12", "mysql/1", "restart"))
	mixed.Summary = "run backup, restart"
	for i, t := range mixed.Tasks {
		t.OperationId = "10"
		if i == 0 {
			t.ParamsJson = []byte(`{"out":"x"}`)
		}
	}
	return []*jujupb.Operation{mixed, exec, backup}
}

func TestOperationsRun(t *testing.T) {
	for _, format := range []output.Format{Plain, output.JSON, output.YAML} {
		t.Run(string(format), func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			fake := &fakeAPI{list: &jujupb.ListOperationsResponse{Operations: someOperations()}}
			opts := &operationsOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (operationsAPI, error) { return fake, nil },
				Format: format, UTC: true, Applications: []string{"mysql"}, Statuses: []string{"running"}, Limit: 3}
			if err := operationsRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "operations/all."+string(format)+".golden")
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut)
			}
			req := fake.listReq
			if req.GetModel() != "uuid-default" || strings.Join(req.GetApplications(), ",") != "mysql" ||
				strings.Join(req.GetStatuses(), ",") != "running" || req.GetLimit() != 3 || req.GetOffset() != 0 {
				t.Errorf("request = %v", req)
			}
		})
	}
}

func TestOperationsPagingAndNone(t *testing.T) {
	ios, out, _ := output.TestStreams()
	fake := &fakeAPI{list: &jujupb.ListOperationsResponse{Operations: someOperations()[1:], Truncated: true}}
	opts := &operationsOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (operationsAPI, error) { return fake, nil },
		Format: Plain, UTC: true, Offset: 1}
	if err := operationsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, out.String(), "operations/paged.plain.golden")

	for _, format := range []output.Format{Plain, output.JSON} {
		ios, out, errOut := output.TestStreams()
		fake = &fakeAPI{list: &jujupb.ListOperationsResponse{}}
		opts = &operationsOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (operationsAPI, error) { return fake, nil }, Format: format}
		if err := operationsRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || errOut.String() != "no matching operations\n" {
			t.Errorf("%s: stdout %q, stderr %q", format, out, errOut)
		}
	}
}
