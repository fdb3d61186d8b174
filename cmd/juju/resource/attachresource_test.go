package resource

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdAttachResource(t *testing.T) {
	tests := []struct {
		args, wantErr string
		check         func(t *testing.T, o *attachResourceOptions)
	}{
		{args: "testapp test-file=./v1.tar -m other", check: func(t *testing.T, o *attachResourceOptions) {
			if o.Application != "testapp" || o.Name != "test-file" || o.Path != "./v1.tar" || o.Model != "other" {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "testapp a=b=c", check: func(t *testing.T, o *attachResourceOptions) {
			if o.Name != "a" || o.Path != "b=c" {
				t.Errorf("opts = %+v", o)
			}
		}},
		// Juju's words, in Juju's order.
		{args: "", wantErr: "missing application name"},
		{args: "testapp", wantErr: "no resource specified"},
		{args: "Test test-file=x", wantErr: `application "Test" not valid`},
		{args: "testapp test-file", wantErr: `bad resource arg "test-file": expected name=path format`},
		{args: "testapp =x", wantErr: `bad resource arg "=x": missing resource name`},
		{args: "testapp test-file=", wantErr: `bad resource arg "test-file=": missing resource value`},
		{args: "testapp a=b c", wantErr: `unrecognized args: ["c"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *attachResourceOptions
			cmd := NewCmdAttachResource(cmdutil.TestFactory(), func(o *attachResourceOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" {
				tt.check(t, got)
			}
		})
	}
}

type fakeUpload struct {
	reqs []*jujupb.UploadResourceRequest
	err  error
}

func (f *fakeUpload) UploadResource(_ context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error) {
	f.reqs = append(f.reqs, req)
	return &jujupb.UploadResourceResponse{Resource: &jujupb.Resource{Name: req.Name, Revision: 2}}, f.err
}

func runAttach(t *testing.T, fake *fakeUpload, args string) (stdout, stderr string, err error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	cmd := NewCmdAttachResource(cmdutil.TestFactory(), func(o *attachResourceOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (attachResourceAPI, error) { return fake, nil }
		return attachResourceRun(context.Background(), o)
	})
	err = execute(cmd, args)
	return out.String(), errOut.String(), err
}

// The file is uploaded as the application's next revision (not pending), under its base name;
// nothing is printed, as in Juju. A file that is not there is refused before anything is sent.
func TestAttachResourceRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v2.tar")
	if err := os.WriteFile(path, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := &fakeUpload{}
	stdout, stderr, err := runAttach(t, fake, "testapp test-file="+path)
	if err != nil || stderr != "" {
		t.Fatalf("err %v stderr %q", err, stderr)
	}
	golden.Assert(t, stdout, "attach-resource/attach.stdout.golden")
	if len(fake.reqs) != 1 {
		t.Fatalf("%d uploads", len(fake.reqs))
	}
	r := fake.reqs[0]
	if r.Model != "uuid-default" || r.Application != "testapp" || r.Name != "test-file" || r.Filename != "v2.tar" ||
		string(r.Content) != "second" || r.Pending || r.CharmUrl != "" {
		t.Errorf("request %v", r)
	}

	fake = &fakeUpload{}
	_, _, err = runAttach(t, fake, "testapp test-file="+filepath.Join(dir, "missing.tar"))
	checkErr(t, err, `file for resource "test-file": stat `+filepath.Join(dir, "missing.tar")+": no such file or directory", false)
	if len(fake.reqs) != 0 {
		t.Errorf("uploaded %d before refusing", len(fake.reqs))
	}

	fake = &fakeUpload{err: apierr.Errorf(apierr.NotFound, `charm "testapp" has no resource "nope"`)}
	stdout, _, err = runAttach(t, fake, "testapp nope="+path)
	checkErr(t, err, `failed to upload resource "nope": charm "testapp" has no resource "nope"`, false)
	golden.Assert(t, stdout+"ERROR "+err.Error()+"\n", "attach-resource/unknown.error.golden")
}
