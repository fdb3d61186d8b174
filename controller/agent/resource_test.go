package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/charm"
)

const resourceCharmMeta = "name: app\nsummary: x\nresources:\n  test-file:\n    type: file\n    filename: test-file.tar\n"

// fakeResources is the controller's side of resource-get: the current revision of each
// resource, and the fingerprints the unit sent.
type fakeResources struct {
	current map[string][]byte
	rev     int64
	sent    []string
}

func (f *fakeResources) GetResource(_ context.Context, model, unit, name, fingerprint string) (*pb.AgentResourceResponse, error) {
	f.sent = append(f.sent, fingerprint)
	content, ok := f.current[name]
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "resource %q not found", name)
	}
	fp := charm.ResourceFingerprint(content)
	resp := &pb.AgentResourceResponse{Resource: &pb.Resource{Name: name, Type: "file", Path: "test-file.tar",
		Revision: f.rev, Fingerprint: fp, Size: int64(len(content))}}
	if fingerprint != fp {
		resp.Content = content
	}
	return resp, nil
}

// resource-get: the copy is downloaded to <agent dir>/resources/<name>/<filename> when the unit
// has none or an older one, and not sent again while it is current.
func TestFetchResource(t *testing.T) {
	a, _ := testUnit(t, map[string]string{"metadata.yaml": resourceCharmMeta})
	ctx := context.Background()
	f := &fakeResources{current: map[string][]byte{"test-file": []byte("one")}, rev: 1}
	path, err := a.fetchResourceFrom(ctx, f, "test-file")
	want := filepath.Join(a.dir, "resources", "test-file", "test-file.tar")
	if err != nil || path != want || !filepath.IsAbs(path) {
		t.Fatalf("fetch: %q %v, want %q", path, err, want)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "one" {
		t.Fatalf("copy: %q %v", data, err)
	}
	// Current: asked with its fingerprint, not sent again.
	if path, err = a.fetchResourceFrom(ctx, f, "test-file"); err != nil || path != want {
		t.Fatal(path, err)
	}
	if f.sent[0] != "" || f.sent[1] != charm.ResourceFingerprint([]byte("one")) {
		t.Errorf("fingerprints sent: %q", f.sent)
	}
	// A new revision replaces the copy; a copy the charm changed is fetched again.
	f.current["test-file"], f.rev = []byte("two"), 2
	if _, err := a.fetchResourceFrom(ctx, f, "test-file"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(want); string(data) != "two" {
		t.Errorf("after the new revision: %q", data)
	}
	if err := os.WriteFile(want, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.fetchResourceFrom(ctx, f, "test-file"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(want); string(data) != "two" {
		t.Errorf("a changed copy was kept: %q", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(want))
	if len(entries) != 1 {
		t.Errorf("left in the resource's directory: %v", entries)
	}

	// Never uploaded: the controller's words.
	if _, err := a.fetchResourceFrom(ctx, f, "other"); !errors.Is(err, apierr.NotFound) || err.Error() != `resource "other" not found` {
		t.Errorf("never uploaded: %v", err)
	}
	// A name that is no path element is refused before asking.
	asked := len(f.sent)
	for _, bad := range []string{"..", "a/b", ""} {
		if _, err := a.fetchResourceFrom(ctx, f, bad); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if len(f.sent) != asked {
		t.Errorf("bad names reached the controller")
	}
}

// Content that does not match its fingerprint is not put in place.
func TestFetchResourceChecksContent(t *testing.T) {
	a, _ := testUnit(t, map[string]string{"metadata.yaml": resourceCharmMeta})
	bad := badContent{}
	if _, err := a.fetchResourceFrom(context.Background(), bad, "test-file"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("bad content: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "resources", "test-file", "test-file.tar")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad content put in place: %v", err)
	}
}

type badContent struct{}

func (badContent) GetResource(context.Context, string, string, string, string) (*pb.AgentResourceResponse, error) {
	return &pb.AgentResourceResponse{Resource: &pb.Resource{Name: "test-file", Path: "test-file.tar", Revision: 1,
		Fingerprint: charm.ResourceFingerprint([]byte("good")), Size: 4}, Content: []byte("evil")}, nil
}

// A machine with a uid of its own: the copy is root's, readable by the uid through its group,
// and the uid cannot change it.
func TestIsolatedResourceReadableByTheMachineUID(t *testing.T) {
	needRoot(t)
	a, _ := isoUnit(t, map[string]string{"metadata.yaml": resourceCharmMeta})
	f := &fakeResources{current: map[string][]byte{"test-file": []byte("secret-ish")}, rev: 1}
	path, err := a.fetchResourceFrom(context.Background(), f, "test-file")
	if err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{path: 0o640, filepath.Dir(path): 0o750, filepath.Dir(filepath.Dir(path)): 0o750} {
		if uid, gid, m := owner(t, p); uid != 0 || gid != isoUID || m != mode {
			t.Errorf("%s: %d:%d %v, want 0:%d %v", p, uid, gid, m, isoUID, mode)
		}
	}
	var data []byte
	if err := asUser(isoUID, isoUID, func() error { var err error; data, err = os.ReadFile(path); return err }); err != nil || string(data) != "secret-ish" {
		t.Errorf("the machine's uid reads %q, %v", data, err)
	}
	if err := asUser(isoUID, isoUID, func() error { return os.WriteFile(path, []byte("x"), 0o644) }); err == nil {
		t.Error("the machine's uid could change its copy")
	}
}
