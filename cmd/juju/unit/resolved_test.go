package unit

import (
	"context"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdResolved(t *testing.T) {
	tests := []struct {
		args, wantErr       string
		units, machines     string
		noRetry, all        bool
		cons                string
		replace, warnOnErrs bool
	}{
		{args: "mysql/0", units: "mysql/0"},
		{args: "mysql/0 wordpress/1 --no-retry", units: "mysql/0 wordpress/1", noRetry: true},
		{args: "--all", all: true},
		{args: "--all --no-retry", all: true, noRetry: true},
		{args: "14", machines: "14"},
		{args: "mysql/0 14 0/lxd/1", units: "mysql/0", machines: "14 0/lxd/1"},
		// Seed 002: the machine's constraints are replaced.
		{args: "14 --constraints mem=2G", machines: "14", cons: "mem=2048M", replace: true},
		{args: "14 --constraints cores=2 --constraints mem=2G", machines: "14", cons: "cores=2 mem=2048M", replace: true},
		{args: "14 --constraints=", machines: "14", cons: "", replace: true},
		{args: "", wantErr: "no unit specified"},
		{args: "--all mysql/0", wantErr: "specifying unit names(s) with --all not supported"},
		{args: "mysql", wantErr: `unit name "mysql" not valid`},
		{args: "mysql/0 Foo/1", wantErr: `unit name "Foo/1" not valid`},
		{args: "mysql/0 --constraints mem=2G", wantErr: "--constraints can only be used with machines"},
		{args: "mysql/0 14 --constraints mem=2G", wantErr: "--constraints can only be used with machines"},
		{args: "--all --constraints mem=2G", wantErr: "--constraints can only be used with machines"},
		{args: "14 --constraints mem=lots", wantErr: `bad "mem" constraint: must be a non-negative float with optional M/G/T/P suffix`},
		{args: "14 --constraints foo=1", wantErr: `unknown constraint "foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *resolvedOptions
			cmd := NewCmdResolved(cmdutil.TestFactory(), func(o *resolvedOptions) error { got = o; return nil })
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if strings.Join(got.Units, " ") != tt.units || strings.Join(got.Machines, " ") != tt.machines ||
				got.NoRetry != tt.noRetry || got.All != tt.all || got.Constraints != tt.cons || got.ReplaceConstraints != tt.replace {
				t.Errorf("opts = %+v", got)
			}
		})
	}
	if cmd := NewCmdResolved(cmdutil.TestFactory(), nil); !cmd.HasAlias("resolve") {
		t.Error("no resolve alias")
	}
}

// fakeResolver answers resolve and retry-provisioning calls with canned results.
type fakeResolver struct {
	units    []*jujupb.ResolveResult
	machines []*jujupb.RemoveResult
	err      error
	resolve  []*jujupb.ResolveUnitErrorsRequest
	retry    []*jujupb.RetryProvisioningRequest
}

func (f *fakeResolver) ResolveUnitErrors(_ context.Context, req *jujupb.ResolveUnitErrorsRequest) ([]*jujupb.ResolveResult, error) {
	f.resolve = append(f.resolve, req)
	return f.units, f.err
}

func (f *fakeResolver) RetryProvisioning(_ context.Context, req *jujupb.RetryProvisioningRequest) ([]*jujupb.RemoveResult, error) {
	f.retry = append(f.retry, req)
	return f.machines, nil
}

func TestResolvedRun_LU2_LM5(t *testing.T) {
	tests := []struct {
		name, args string
		fake       *fakeResolver
		wantErr    string
		check      func(t *testing.T, f *fakeResolver)
	}{
		{name: "retry", args: "mysql/0 wordpress/1", fake: &fakeResolver{units: []*jujupb.ResolveResult{
			{Name: "mysql/0", Next: `will re-run "install" hook`},
			{Name: "wordpress/1", Next: `will re-run "db-relation-changed" hook`},
		}}, check: func(t *testing.T, f *fakeResolver) {
			r := f.resolve[0]
			if len(f.resolve) != 1 || len(f.retry) != 0 || !r.GetRetry() || r.GetAll() || r.GetModel() != "uuid-default" ||
				strings.Join(r.GetUnits(), " ") != "mysql/0 wordpress/1" {
				t.Errorf("calls = %v %v", f.resolve, f.retry)
			}
		}},
		{name: "no-retry-all", args: "--all --no-retry", fake: &fakeResolver{units: []*jujupb.ResolveResult{
			{Name: "mysql/0", Next: `will skip "install" hook`},
		}}, check: func(t *testing.T, f *fakeResolver) {
			if r := f.resolve[0]; r.GetRetry() || !r.GetAll() || len(r.GetUnits()) != 0 {
				t.Errorf("request = %v", r)
			}
		}},
		{name: "failures", args: "mysql/0 mysql/1 foo/0", fake: &fakeResolver{units: []*jujupb.ResolveResult{
			{Name: "mysql/0", Next: `will re-run "start" hook`},
			{Name: "mysql/1", Error: `unit "mysql/1" is not in an error state`},
			{Name: "foo/0", Error: "not found"},
		}}, wantErr: cmdutil.ErrSilent.Error()},
		// L-M5, seed 002: `juju resolved 14 --constraints "mem=2G"` replaces the machine's constraints.
		{name: "machine-constraints", args: "14 --constraints mem=2G", fake: &fakeResolver{machines: []*jujupb.RemoveResult{{Name: "14"}}},
			check: func(t *testing.T, f *fakeResolver) {
				if len(f.resolve) != 0 || len(f.retry) != 1 {
					t.Fatalf("calls = %v %v", f.resolve, f.retry)
				}
				if r := f.retry[0]; strings.Join(r.GetMachines(), " ") != "14" || r.GetConstraints() != "mem=2048M" ||
					!r.GetReplaceConstraints() || r.GetModel() != "uuid-default" || r.GetAll() {
					t.Errorf("request = %v", r)
				}
			}},
		{name: "units-and-machines", args: "mysql/0 3", fake: &fakeResolver{
			units:    []*jujupb.ResolveResult{{Name: "mysql/0", Next: `will re-run "install" hook`}},
			machines: []*jujupb.RemoveResult{{Name: "3", Error: "machine 3 is not in an error state"}},
		}, wantErr: cmdutil.ErrSilent.Error(), check: func(t *testing.T, f *fakeResolver) {
			if len(f.resolve) != 1 || len(f.retry) != 1 || f.retry[0].GetReplaceConstraints() {
				t.Errorf("calls = %v %v", f.resolve, f.retry)
			}
		}},
		{name: "call-error", args: "mysql/0", fake: &fakeResolver{err: apierr.Errorf(apierr.NotFound, `model "x" not found`)},
			wantErr: `resolving units: model "x" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			cmd := NewCmdResolved(cmdutil.TestFactory(), func(o *resolvedOptions) error {
				o.IO = ios
				o.ResolveModel = removeModelRef
				o.Client = func(context.Context) (resolvedAPI, error) { return tt.fake, nil }
				return resolvedRun(context.Background(), o)
			})
			cmdtest.CheckErr(t, cmdtest.Execute(cmd, tt.args), tt.wantErr, false)
			if tt.check != nil {
				tt.check(t, tt.fake)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q", out.String())
			}
			golden.Assert(t, errOut.String(), "resolved/"+tt.name+".stderr.golden")
		})
	}
}
