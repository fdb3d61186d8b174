package resource

import (
	"context"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

var (
	execute  = cmdtest.Execute
	checkErr = cmdtest.CheckErr
)

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

func TestNewCmdResources(t *testing.T) {
	tests := []struct {
		args, wantErr string
		check         func(t *testing.T, o *resourcesOptions)
	}{
		{args: "testapp", check: func(t *testing.T, o *resourcesOptions) {
			if o.Target != "testapp" || o.Format != output.Tabular || o.Details {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "testapp/0 --details --format json -m other -o out.json", check: func(t *testing.T, o *resourcesOptions) {
			if o.Target != "testapp/0" || o.Format != output.JSON || !o.Details || o.Model != "other" || o.Output != "out.json" {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "", wantErr: "missing application or unit name"},
		{args: "a b", wantErr: `unrecognized args: ["b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *resourcesOptions
			cmd := NewCmdResources(cmdutil.TestFactory(), func(o *resourcesOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" {
				tt.check(t, got)
			}
		})
	}
	cmd := NewCmdResources(cmdutil.TestFactory(), func(*resourcesOptions) error { return nil })
	if err := execute(cmd, "a --format xml"); err == nil || err.Error() != `invalid value "xml" for --format: expected one of json, tabular, yaml` {
		t.Errorf("--format xml: %v", err)
	}
	if cmd.Aliases[0] != "list-resources" {
		t.Errorf("aliases %v", cmd.Aliases)
	}
}

type fakeResources struct {
	resp *jujupb.ListResourcesResponse
	err  error
	req  *jujupb.ListResourcesRequest
}

func (f *fakeResources) ListResources(_ context.Context, req *jujupb.ListResourcesRequest) (*jujupb.ListResourcesResponse, error) {
	f.req = req
	return f.resp, f.err
}

// uploadedAt is when the fixtures' revision 2 was uploaded, 14 March, to show Juju's
// year-day-month layout; revision 1 was uploaded the day before.
var uploadedAt = time.Date(2025, 3, 14, 9, 30, 15, 0, time.UTC).UnixNano()

// testappResources: testapp declares test-file (revision 2, uploaded by admin) and
// config-file (never uploaded); testapp/0 fetched revision 1 of test-file, testapp/1 nothing.
func testappResources() *jujupb.ListResourcesResponse {
	testFile := func(rev int64, fp string, size int64) *jujupb.Resource {
		at := uploadedAt - int64(2-rev)*int64(24*time.Hour)
		return &jujupb.Resource{Name: "test-file", Type: "file", Path: "test-file.tar", Description: "A test file.",
			Revision: rev, Fingerprint: fp, Size: size, Origin: "upload", Username: "admin", Timestamp: at, Application: "testapp"}
	}
	return &jujupb.ListResourcesResponse{
		Resources: []*jujupb.Resource{
			{Name: "config-file", Type: "file", Path: "app.conf", Origin: "upload", Application: "testapp"},
			testFile(2, "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b", 6),
		},
		Units: []*jujupb.UnitResources{
			{Unit: "testapp/0", Resources: []*jujupb.Resource{
				testFile(1, "768412320f7b0aa5812fce428dc4706b3cae50e02a64caa16a782249bfe8efc4b7ef1ccb126255d196047dfedf17a0a9", 3)}},
			{Unit: "testapp/1"},
		},
	}
}

func runResources(t *testing.T, fake *fakeResources, args string) (stdout, stderr string, err error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	cmd := NewCmdResources(cmdutil.TestFactory(), func(o *resourcesOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (resourcesAPI, error) { return fake, nil }
		return resourcesRun(context.Background(), o)
	})
	err = execute(cmd, args)
	return out.String(), errOut.String(), err
}

func TestResourcesRun(t *testing.T) {
	for _, tt := range []struct{ name, args string }{
		{"application", "testapp"},
		{"unit", "testapp/0"},
		{"unit-nothing-fetched", "testapp/1"},
		{"details", "testapp --details"},
		{"unit-details", "testapp/0 --details"},
	} {
		for _, format := range []string{"tabular", "json", "yaml"} {
			t.Run(tt.name+"-"+format, func(t *testing.T) {
				fake := &fakeResources{resp: testappResources()}
				stdout, stderr, err := runResources(t, fake, tt.args+" --format "+format)
				if err != nil || stderr != "" {
					t.Fatalf("err %v, stderr %q", err, stderr)
				}
				if fake.req.GetModel() != "uuid-default" {
					t.Errorf("request %v", fake.req)
				}
				golden.Assert(t, stdout, "resources/"+tt.name+"."+format+".golden")
			})
		}
	}
	// Whom the request names.
	fake := &fakeResources{resp: testappResources()}
	if _, _, err := runResources(t, fake, "testapp/0"); err != nil || fake.req.GetUnit() != "testapp/0" || fake.req.GetApplication() != "" {
		t.Errorf("unit request %v, %v", fake.req, err)
	}
}

// No resources: Juju's line on stderr, nothing on stdout, in every format; errors name what.
func TestResourcesRunNone(t *testing.T) {
	for _, format := range []string{"tabular", "json"} {
		fake := &fakeResources{resp: &jujupb.ListResourcesResponse{Units: []*jujupb.UnitResources{{Unit: "mysql/0"}}}}
		stdout, stderr, err := runResources(t, fake, "mysql --format "+format)
		if err != nil || stdout != "" || stderr != "No resources to display.\n" {
			t.Errorf("%s: stdout %q stderr %q err %v", format, stdout, stderr, err)
		}
		golden.Assert(t, stderr, "resources/none."+format+".stderr.golden")
	}
	fake := &fakeResources{err: apierr.Errorf(apierr.NotFound, `application "nope" not found`)}
	_, _, err := runResources(t, fake, "nope")
	checkErr(t, err, `listing resources of "nope": application "nope" not found`, false)
	_, _, err = runResources(t, &fakeResources{}, "Bad!")
	checkErr(t, err, `"Bad!" is neither an application nor a unit`, false)
}
