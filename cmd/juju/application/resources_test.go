package application

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/charm"
)

// The fakes of deploy and refresh take uploads too, recorded among their calls as
// "UploadResource <app> <name>=<content> pending <charm url> <filename>".

func (f *fakeDeployAPI) UploadResource(_ context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error) {
	f.calls = append(f.calls, uploadCall(req))
	return &jujupb.UploadResourceResponse{PendingId: "id-" + req.GetName()}, nil
}

func (f *fakeRefreshAPI) UploadResource(_ context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error) {
	f.calls = append(f.calls, uploadCall(req))
	return &jujupb.UploadResourceResponse{PendingId: "id-" + req.GetName()}, nil
}

func uploadCall(req *jujupb.UploadResourceRequest) string {
	return fmt.Sprintf("UploadResource %s %s=%s pending=%v %s %s", req.GetApplication(), req.GetName(), req.GetContent(),
		req.GetPending(), req.GetCharmUrl(), req.GetFilename())
}

// writeResourceCharm is writeCharm with resources: two files and an OCI image.
func writeResourceCharm(t *testing.T, dir, name string) string {
	t.Helper()
	path := writeCharm(t, dir, name, false, "ubuntu@22.04")
	meta, err := os.ReadFile(filepath.Join(path, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	meta = append(meta, []byte("resources:\n  test-file:\n    type: file\n    filename: test-file.tar\n"+
		"  config-file:\n    filename: app.conf\n  image:\n    type: oci-image\n")...)
	if err := os.WriteFile(filepath.Join(path, "metadata.yaml"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestResourceFlag(t *testing.T) {
	for _, tt := range []struct{ args, want, wantErr string }{
		{args: "./x --resource a=./f --resource b=/g", want: "a=./f,b=/g"},
		{args: "./x --resource a=", want: "a="},
		// The root command words these `invalid value "a" for option --resource: ...`.
		{args: "./x --resource a", wantErr: `"--resource" flag: badly formatted name value pair: a`},
		{args: "./x --resource a=1 --resource a=2", wantErr: `"--resource" flag: duplicate name specified: "a"`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			var got *deployOptions
			cmd := NewCmdDeploy(cmdutil.TestFactory(), func(o *deployOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := (resourceFlag{&got.Resources}).String(); s != tt.want {
				t.Errorf("resources = %s", s)
			}
		})
	}
	for _, cmd := range []string{"deploy", "refresh"} {
		f := cmdutil.TestFactory()
		c := NewCmdDeploy(f, nil)
		if cmd == "refresh" {
			c = NewCmdRefresh(f, nil)
		}
		if c.Flags().Lookup("resource") == nil {
			t.Errorf("%s has no --resource", cmd)
		}
	}
}

// deploy --resource: the files are read and checked before anything is sent, uploaded after
// the charm (kept aside, naming the charm), and named by their pending ids in Deploy.
func TestDeployWithResources(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeResourceCharm(t, dir, "wordpress")
	if err := os.WriteFile("payload.tar", []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("adir", 0o755); err != nil {
		t.Fatal(err)
	}
	fake := &fakeDeployAPI{}
	if _, err := deployWith(t, fake, "", "./wordpress --resource test-file=./payload.tar"); err != nil {
		t.Fatal(err)
	}
	want := "GetModel uuid-default,FullStatus uuid-default wordpress,UploadCharm uuid-default," +
		"UploadResource wordpress test-file=v1 pending=true local:wordpress-3 payload.tar,Deploy wordpress"
	if got := strings.Join(fake.calls, ","); got != want {
		t.Errorf("calls = %s\nwant    %s", got, want)
	}
	if r := fake.req.GetResources(); len(r) != 1 || r["test-file"] != "id-test-file" {
		t.Errorf("Deploy resources = %v", r)
	}

	// Refused before anything is sent.
	for _, tt := range []struct{ args, wantErr string }{
		{"--resource nope=./payload.tar", `unrecognized resource "nope"`},
		{"--resource nope=./payload.tar --resource zed=./payload.tar", `unrecognized resources: nope, zed`},
		{"--resource test-file=./missing.tar", `file for resource "test-file": stat ./missing.tar: no such file or directory`},
		{"--resource test-file=./adir", `file for resource "test-file": ./adir is a directory`},
		{"--resource image=./payload.tar", `resource "image" is of type oci-image: machine models take file resources only`},
	} {
		fake := &fakeDeployAPI{}
		_, err := deployWith(t, fake, "", "./wordpress "+tt.args)
		if err == nil || err.Error() != tt.wantErr {
			t.Errorf("%s: err = %v, want %s", tt.args, err, tt.wantErr)
		}
		if len(fake.calls) != 0 {
			t.Errorf("%s: calls %v before refusing", tt.args, fake.calls)
		}
	}
}

// A file larger than a resource may hold is refused before it is read whole.
func TestReadResourceFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(charm.MaxResourceSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadResourceFile("big", path)
	want := fmt.Sprintf("file for resource \"big\": %s is %d bytes, more than the %d bytes (256 MiB) a resource may hold",
		path, charm.MaxResourceSize+1, charm.MaxResourceSize)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// refresh --resource: uploaded after the new charm, named in SetCharm.
func TestRefreshWithResources(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeResourceCharm(t, dir, "wordpress")
	if err := os.WriteFile("app.conf", []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := &fakeRefreshAPI{}
	if _, _, err := refreshWith(t, fake, "wordpress --path ./wordpress --resource config-file=app.conf"); err != nil {
		t.Fatal(err)
	}
	want := "FullStatus uuid-default wordpress,UploadCharm uuid-default," +
		"UploadResource wordpress config-file=v2 pending=true local:wordpress-3 app.conf,SetCharm wordpress local:wordpress-3"
	if got := strings.Join(fake.calls, ","); got != want {
		t.Errorf("calls = %s\nwant    %s", got, want)
	}
	if r := fake.req.GetResources(); len(r) != 1 || r["config-file"] != "id-config-file" {
		t.Errorf("SetCharm resources = %v", r)
	}
	fake = &fakeRefreshAPI{}
	_, _, err := refreshWith(t, fake, "wordpress --path ./wordpress --resource other=app.conf")
	if err == nil || err.Error() != `unrecognized resource "other"` || len(fake.calls) != 0 {
		t.Errorf("unknown resource: %v, calls %v", err, fake.calls)
	}
}
