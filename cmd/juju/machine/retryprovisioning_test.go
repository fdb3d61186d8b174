package machine

import (
	"context"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdRetryProvisioning(t *testing.T) {
	tests := []struct {
		args, wantErr, machines string
		all                     bool
	}{
		{args: "0", machines: "0"},
		{args: "0 1 0/lxd/2", machines: "0 1 0/lxd/2"},
		{args: "--all", all: true},
		{args: "", wantErr: "no machine specified"},
		{args: "--all 3", wantErr: "specify machines or --all but not both"},
		{args: "0 mysql/0", wantErr: `invalid machine "mysql/0"`},
		{args: "01", wantErr: `invalid machine "01"`},
		{args: "0 --constraints mem=2G", wantErr: "unknown flag: --constraints"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *retryProvisioningOptions
			cmd := NewCmdRetryProvisioning(cmdutil.TestFactory(), func(o *retryProvisioningOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if strings.HasPrefix(tt.wantErr, "unknown flag") {
				// A parse error: root makes it a usage error.
				if err == nil || err.Error() != tt.wantErr || got != nil {
					t.Fatalf("error = %v", err)
				}
				return
			}
			checkErr(t, err, tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if strings.Join(got.Machines, " ") != tt.machines || got.All != tt.all {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

type fakeRetry struct {
	results []*jujupb.RemoveResult
	err     error
	reqs    []*jujupb.RetryProvisioningRequest
}

func (f *fakeRetry) RetryProvisioning(_ context.Context, req *jujupb.RetryProvisioningRequest) ([]*jujupb.RemoveResult, error) {
	f.reqs = append(f.reqs, req)
	return f.results, f.err
}

func TestRetryProvisioningRun(t *testing.T) {
	tests := []struct {
		name, args string
		fake       *fakeRetry
		wantErr    string
	}{
		{name: "ok", args: "0 1", fake: &fakeRetry{results: []*jujupb.RemoveResult{{Name: "0"}, {Name: "1"}}}},
		{name: "all", args: "--all", fake: &fakeRetry{results: []*jujupb.RemoveResult{{Name: "4"}}}},
		{name: "failures", args: "0 1 7", fake: &fakeRetry{results: []*jujupb.RemoveResult{
			{Name: "0"},
			{Name: "1", Error: "machine 1 is not in an error state"},
			{Name: "7", Error: "not found"},
		}}, wantErr: cmdutil.ErrSilent.Error()},
		{name: "call-error", args: "0", fake: &fakeRetry{err: apierr.Errorf(apierr.PermissionDenied, "permission denied")},
			wantErr: "retrying provisioning: permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			cmd := NewCmdRetryProvisioning(cmdutil.TestFactory(), func(o *retryProvisioningOptions) error {
				o.IO = ios
				o.ResolveModel = func(context.Context) (*cmdutil.ModelRef, error) {
					return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
				}
				o.Client = func(context.Context) (RetryProvisioningAPI, error) { return tt.fake, nil }
				return retryProvisioningRun(context.Background(), o)
			})
			checkErr(t, execute(cmd, tt.args), tt.wantErr, false)
			if len(tt.fake.reqs) != 1 {
				t.Fatalf("%d calls", len(tt.fake.reqs))
			}
			r := tt.fake.reqs[0]
			if r.GetModel() != "uuid-default" || r.GetAll() != strings.Contains(tt.args, "--all") || r.GetReplaceConstraints() {
				t.Errorf("request = %v", r)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q", out.String())
			}
			golden.Assert(t, errOut.String(), "retry-provisioning/"+tt.name+".stderr.golden")
		})
	}
}

func TestReportFailureNamesTheEntity(t *testing.T) {
	tests := []struct{ name, msg, want string }{
		{"1", "machine 1 is not in an error state", "ERROR machine 1 is not in an error state\n"},
		{"1", "machine 14 is not in an error state", "ERROR 1: machine 14 is not in an error state\n"},
		{"mysql/1", `unit "mysql/1" not found`, "ERROR unit \"mysql/1\" not found\n"},
		{"mysql/1", `unit "mysql/10" not found`, "ERROR mysql/1: unit \"mysql/10\" not found\n"},
		{"7", "not found", "ERROR 7: not found\n"},
		{"", "boom", "ERROR boom\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		ReportFailure(&b, tt.name, tt.msg)
		if b.String() != tt.want {
			t.Errorf("ReportFailure(%q, %q) = %q, want %q", tt.name, tt.msg, b.String(), tt.want)
		}
	}
}
