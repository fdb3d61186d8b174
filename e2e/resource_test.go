package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/core/charm"
)

// filer declares two file resources; install and upgrade-charm put the content of payload
// (resource-get) in the workload status, and what resource-get says of extra, which nobody
// uploads.
var filer = map[string]string{
	"metadata.yaml": "name: filer\nsummary: resources\ndescription: shows its resources in its status\n" +
		"resources:\n  payload:\n    type: file\n    filename: payload.txt\n    description: shown in the status\n" +
		"  extra:\n    type: file\n    filename: extra.txt\n",
	"manifest.yaml":       "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n    architectures: [amd64, arm64]\n",
	"hooks/install":       filerHook,
	"hooks/upgrade-charm": filerHook,
}

const filerHook = `#!/bin/sh
set -e
path=$(resource-get payload)
extra=$(resource-get extra 2>&1 || true)
echo "$JUJU_HOOK_NAME $path" >>"$JUJU_CHARM_DIR/resources.log"
status-set active "payload=$(cat "$path") at $path; extra: $extra"
`

// TestResourceJourney: deploy --resource through the real binaries; the unit fetches it with
// resource-get (a resource never uploaded fails in Juju's words); attach-resource stores a new
// revision and the unit runs upgrade-charm, where it fetches the new content, and so does
// refresh --resource with a new charm; juju resources shows the revisions, per application and
// per unit. Refused requests change nothing.
func TestResourceJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })

	dir := writeCharm(t, filer)
	files := t.TempDir()
	v1, v2 := filepath.Join(files, "v1.txt"), filepath.Join(files, "v2.txt")
	if err := os.WriteFile(v1, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Refused before anything is sent: no application, no upload.
	e.fails(1, `unrecognized resource "nope"`, "deploy", dir, "--resource", "nope="+v1)
	e.fails(1, `file for resource "payload": stat `+filepath.Join(files, "missing.txt"), "deploy", dir, "--resource", "payload="+filepath.Join(files, "missing.txt"))
	e.fails(2, "duplicate name specified", "deploy", dir, "--resource", "payload="+v1, "--resource", "payload="+v2)
	if st := e.ok("status", "--format", "json").stdout; strings.Contains(st, "filer") {
		t.Fatalf("a refused deploy left something: %s", st)
	}

	e.ok("deploy", dir, "--resource", "payload="+v1)
	e.waitUntil("filer/0 shows revision 1", workloadIs("filer/0", "active", "payload=first"))
	u, _ := e.units().unit("filer/0")
	msg := u.WorkloadStatus.Message
	if !strings.Contains(msg, `extra: ERROR could not download resource: resource "extra" not found`) {
		t.Errorf("resource-get of a resource never uploaded: %q", msg)
	}
	// The unit's copy: <agent dir>/resources/<name>/<filename>.
	path := msg[strings.Index(msg, " at ")+4 : strings.Index(msg, "; extra")]
	if !strings.HasSuffix(path, "/units/unit-filer-0/resources/payload/payload.txt") || !filepath.IsAbs(path) {
		t.Errorf("path %q", path)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "first" {
		t.Errorf("the unit's copy: %q %v", data, err)
	}

	app := e.ok("resources", "filer").stdout
	if !strings.HasPrefix(app, "Resource  Supplied by  Revision\nextra     upload       -\npayload   admin        ") {
		t.Errorf("juju resources filer:\n%s", app)
	}
	checkRevisions(t, e, "1", "1")

	// Refused: nothing changes.
	e.fails(1, `failed to upload resource "nope": charm "filer" has no resource "nope"`, "attach-resource", "filer", "nope="+v2)
	e.fails(2, `bad resource arg "payload": expected name=path format`, "attach-resource", "filer", "payload")
	checkRevisions(t, e, "1", "1")

	r := e.ok("attach-resource", "filer", "payload="+v2)
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("attach-resource printed %q %q", r.stdout, r.stderr)
	}
	e.waitUntil("filer/0 fetched revision 2 in upgrade-charm", workloadIs("filer/0", "active", "payload=second"))
	e.waitHooks("filer/0", "install", "upgrade-charm")
	checkRevisions(t, e, "2", "2")
	if data, err := os.ReadFile(path); err != nil || string(data) != "second" {
		t.Errorf("the unit's copy after attach: %q %v", data, err)
	}
	details := e.ok("resources", "filer/0", "--details").stdout
	if !strings.HasPrefix(details, "Resource  Revision          Expected\nextra     -                 -\npayload   ") {
		t.Errorf("juju resources filer/0 --details:\n%s", details)
	}

	// refresh --resource: the new charm and revision 3 in one switch.
	v3 := filepath.Join(files, "v3.txt")
	if err := os.WriteFile(v3, []byte("third"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.fails(1, `unrecognized resource "nope"`, "refresh", "filer", "--path", dir, "--resource", "nope="+v3)
	e.ok("refresh", "filer", "--path", dir, "--resource", "payload="+v3)
	e.waitUntil("filer/0 fetched revision 3", workloadIs("filer/0", "active", "payload=third"))
	checkRevisions(t, e, "3", "3")
}

// checkRevisions: the application's revision of payload and the one filer/0 has, from
// juju resources --format json.
func checkRevisions(t *testing.T, e *env, app, unit string) {
	t.Helper()
	var a struct {
		Resources []struct{ Name, Revision, Fingerprint, Origin, Username string } `json:"resources"`
	}
	if err := json.Unmarshal([]byte(e.ok("resources", "filer", "--format", "json").stdout), &a); err != nil {
		t.Fatal(err)
	}
	var u []struct{ Name, Revision string }
	if err := json.Unmarshal([]byte(e.ok("resources", "filer/0", "--format", "json").stdout), &u); err != nil {
		t.Fatal(err)
	}
	content := map[string]string{"1": "first", "2": "second", "3": "third"}[app]
	if len(a.Resources) != 2 || a.Resources[1].Name != "payload" || a.Resources[1].Revision != app || a.Resources[1].Username != "admin" ||
		a.Resources[1].Fingerprint != charm.ResourceFingerprint([]byte(content)) || a.Resources[0].Revision != "-" {
		t.Errorf("application resources: %+v, want payload revision %s", a.Resources, app)
	}
	if len(u) != 2 || u[1].Name != "payload" || u[1].Revision != unit {
		t.Errorf("filer/0's resources: %+v, want payload revision %s", u, unit)
	}
}
