package state_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/charm"
)

// testappMeta declares two file resources and an OCI image, as jubilant's testapp does.
const testappMeta = `name: testapp
summary: resources
peers:
  ring: testapp-ring
resources:
  test-file:
    type: file
    filename: test-file.tar
    description: A test file.
  config-file:
    filename: app.conf
  image:
    type: oci-image
bases: [ubuntu@22.04]
`

// resourceKeys lists, sorted, every key the model's resources use (documents and chunks),
// without the model's prefix or the chunks' blob prefix.
func resourceKeys(t *testing.T, uuid string) []string {
	t.Helper()
	var out []string
	for _, prefix := range []string{state.ModelPrefix(uuid) + "resources/", state.ModelPrefix(uuid) + "pendingresources/", state.ResourceBlobPrefixForTest(uuid)} {
		resp, err := st.Client().Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			key := strings.TrimPrefix(strings.TrimPrefix(string(kv.Key), state.ModelPrefix(uuid)), state.ResourceBlobPrefixForTest(uuid))
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// countKeys counts keys containing part.
func countKeys(keys []string, part string) int {
	n := 0
	for _, k := range keys {
		if strings.Contains(k, part) {
			n++
		}
	}
	return n
}

// deployTestapp deploys testapp with test-file given (pending, then used by the deploy).
func deployTestapp(t *testing.T, uuid string, content string, units int) string {
	t.Helper()
	ctx := context.Background()
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, testappMeta))
	if err != nil {
		t.Fatal(err)
	}
	up, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "testapp", Name: "test-file",
		Filename: "dir/v1.tar", Content: []byte(content), Username: "admin", Pending: true, CharmURL: ch.Url})
	if err != nil {
		t.Fatal(err)
	}
	if up.PendingID == "" || up.Resource.Rev.Revision != 1 {
		t.Fatalf("pending upload = %+v", up)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "testapp", CharmURL: ch.Url, Base: "ubuntu@22.04",
		Resources: map[string]string{"test-file": up.PendingID}}); err != nil {
		t.Fatal(err)
	}
	if units > 0 {
		addUnits(t, uuid, "testapp", units)
	}
	return ch.Url
}

func current(t *testing.T, uuid, name string) state.Resource {
	t.Helper()
	res, err := st.ListResources(context.Background(), uuid, "testapp", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		if r.Meta.Name == name {
			return r
		}
	}
	t.Fatalf("no resource %q in %+v", name, res.Resources)
	return state.Resource{}
}

func charmModifiedVersion(t *testing.T, uuid string) int64 {
	t.Helper()
	app, err := st.Application(context.Background(), uuid, "testapp")
	if err != nil {
		t.Fatal(err)
	}
	return app.CharmModifiedVersion
}

// Every upload that becomes the application's is its next revision and grows its charm
// modified version (its units run upgrade-charm); content is stored once per application,
// keyed by its sha384, and goes with the last revision or pending upload that names it.
func TestResourceRevisionsShareContent(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployTestapp(t, uuid, "first", 0)

	r := current(t, uuid, "test-file")
	if r.Rev == nil || r.Rev.Revision != 1 || r.Rev.Fingerprint != charm.ResourceFingerprint([]byte("first")) || r.Rev.Size != 5 ||
		r.Rev.Origin != "upload" || r.Rev.Username != "admin" || r.Rev.Filename != "v1.tar" || r.Rev.Timestamp == 0 || r.Rev.CharmUrl != "" {
		t.Fatalf("after deploy: %+v", r.Rev)
	}
	if r.Meta.Filename != "test-file.tar" || r.Meta.Description != "A test file." || r.Meta.Type != "file" {
		t.Errorf("meta = %+v", r.Meta)
	}
	if c := current(t, uuid, "config-file"); c.Rev != nil {
		t.Errorf("config-file uploaded: %+v", c.Rev)
	}
	keys := resourceKeys(t, uuid)
	if countKeys(keys, "pending") != 0 || countKeys(keys, "/blobs/") != 1 || countKeys(keys, "current/") != 1 {
		t.Fatalf("keys after deploy: %v", keys)
	}
	before := charmModifiedVersion(t, uuid)

	attach := func(content string) *state.UploadedResource {
		t.Helper()
		up, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "testapp", Name: "test-file",
			Filename: "v.tar", Content: []byte(content), Username: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		return up
	}
	if up := attach("second"); up.Resource.Rev.Revision != 2 || up.PendingID != "" {
		t.Fatalf("attach = %+v", up)
	}
	if v := charmModifiedVersion(t, uuid); v != before+1 {
		t.Errorf("charm modified version %d, want %d", v, before+1)
	}
	keys = resourceKeys(t, uuid)
	if countKeys(keys, "/blobs/") != 1 || countKeys(keys, charm.ResourceFingerprint([]byte("first"))) != 0 {
		t.Errorf("the first content outlived its last revision: %v", keys)
	}
	// The same content again: a new revision, nothing stored again.
	attach("second")
	if r := current(t, uuid, "test-file"); r.Rev.Revision != 3 || r.Rev.Username != "bob" {
		t.Errorf("revision 3 = %+v", r.Rev)
	}
	if again := resourceKeys(t, uuid); !slices.Equal(again, keys) {
		t.Errorf("the same content stored twice:\n%v\n%v", keys, again)
	}
	attach("first")
	if r := current(t, uuid, "test-file"); r.Rev.Revision != 4 || r.Rev.Fingerprint != charm.ResourceFingerprint([]byte("first")) {
		t.Errorf("revision 4 = %+v", r.Rev)
	}
	if v := charmModifiedVersion(t, uuid); v != before+3 {
		t.Errorf("charm modified version %d, want %d", v, before+3)
	}
	audit(t, uuid)
}

// Refused uploads store nothing and change nothing.
func TestUploadResourceRefusals(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	url := deployTestapp(t, uuid, "first", 1)
	keys := resourceKeys(t, uuid)
	version := charmModifiedVersion(t, uuid)
	for _, tt := range []struct {
		args state.UploadResourceArgs
		err  error
		msg  string
	}{
		{state.UploadResourceArgs{Application: "testapp", Name: "nope", Content: []byte("x")}, apierr.NotFound, `charm "testapp" has no resource "nope"`},
		{state.UploadResourceArgs{Application: "testapp", Name: "image", Content: []byte("x")}, apierr.NotSupported,
			`resource "image" is of type oci-image: machine models take file resources only`},
		{state.UploadResourceArgs{Application: "ghost", Name: "test-file", Content: []byte("x")}, apierr.NotFound, `application "ghost" not found`},
		{state.UploadResourceArgs{Application: "ghost", Name: "test-file", Content: []byte("x"), Pending: true}, apierr.NotValid,
			`a pending upload of resource "test-file" needs the charm url`},
		{state.UploadResourceArgs{Application: "testapp", Name: "test-file", Content: make([]byte, charm.MaxResourceSize+1)}, apierr.NotValid,
			`resource "test-file" of 268435457 bytes is larger than the 268435456 bytes (256.0 MiB) a resource may hold`},
		{state.UploadResourceArgs{Application: "testapp", Name: "nope", Content: []byte("x"), Pending: true, CharmURL: url}, apierr.NotFound,
			`charm "testapp" has no resource "nope"`},
	} {
		_, err := st.UploadResource(ctx, uuid, tt.args)
		if !errors.Is(err, tt.err) || err.Error() != tt.msg {
			t.Errorf("%s/%s: %v, want %s", tt.args.Application, tt.args.Name, err, tt.msg)
		}
	}
	if after := resourceKeys(t, uuid); !slices.Equal(after, keys) || charmModifiedVersion(t, uuid) != version {
		t.Errorf("a refused upload changed something:\n%v\n%v", keys, after)
	}
	// Not alive: refused too.
	if res, err := st.DestroyApplication(ctx, uuid, "testapp", state.DestroyOptions{}); err != nil || res.Outcome != state.OutcomeDying {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	_, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "testapp", Name: "test-file", Content: []byte("x")})
	if !errors.Is(err, apierr.NotAlive) || err.Error() != `application "testapp" is not alive` {
		t.Errorf("upload to a dying application: %v", err)
	}
}

// A pending upload becomes a revision only in the transaction that names it (deploy or
// refresh), once; a wrong or used id refuses the whole deploy.
func TestPendingResourcesAtDeployAndRefresh(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	ch, err := st.AddCharm(ctx, uuid, charmZip(t, testappMeta))
	if err != nil {
		t.Fatal(err)
	}
	up, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "testapp", Name: "config-file",
		Content: []byte("conf"), Pending: true, CharmURL: ch.Url})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		resources map[string]string
		err       error
		msg       string
	}{
		{map[string]string{"config-file": "0123456789abcdef0123456789abcdef"}, apierr.NotFound, "pending upload"},
		{map[string]string{"config-file": "../../x"}, apierr.NotFound, "pending upload"},
		{map[string]string{"test-file": up.PendingID}, apierr.NotFound, "pending upload"}, // another resource's
		{map[string]string{"nope": up.PendingID}, apierr.NotFound, `charm "testapp" has no resource "nope"`},
		{map[string]string{"image": up.PendingID}, apierr.NotSupported, "oci-image"},
	} {
		_, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "testapp", CharmURL: ch.Url, Base: "ubuntu@22.04", NumUnits: 1, Resources: tt.resources})
		if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("deploy with %v: %v, want %s", tt.resources, err, tt.msg)
		}
		if _, err := st.Application(ctx, uuid, "testapp"); !errors.Is(err, apierr.NotFound) {
			t.Fatalf("a refused deploy left the application: %v", err)
		}
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: "testapp", CharmURL: ch.Url, Base: "ubuntu@22.04",
		Resources: map[string]string{"config-file": up.PendingID}}); err != nil {
		t.Fatal(err)
	}
	if r := current(t, uuid, "config-file"); r.Rev == nil || r.Rev.Revision != 1 || r.Rev.CharmUrl != "" {
		t.Fatalf("config-file after deploy: %+v", r.Rev)
	}
	if n := countKeys(resourceKeys(t, uuid), "pending"); n != 0 {
		t.Errorf("%d pending keys left", n)
	}

	// refresh --resource: the new charm and the next revision in one transaction, which grows
	// the charm modified version once.
	v2, err := st.AddCharm(ctx, uuid, charmZip(t, testappMeta))
	if err != nil {
		t.Fatal(err)
	}
	up2, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "testapp", Name: "config-file",
		Content: []byte("conf v2"), Pending: true, CharmURL: v2.Url})
	if err != nil {
		t.Fatal(err)
	}
	if up2.Resource.Rev.Revision != 2 {
		t.Errorf("pending revision %d, want 2", up2.Resource.Rev.Revision)
	}
	// Nothing changes until it is used.
	if r := current(t, uuid, "config-file"); r.Rev.Revision != 1 {
		t.Fatalf("a pending upload changed the application: %+v", r.Rev)
	}
	version := charmModifiedVersion(t, uuid)
	if _, err := st.SetApplicationCharm(ctx, uuid, "testapp", state.SetCharmArgs{CharmURL: v2.Url,
		Resources: map[string]string{"config-file": up2.PendingID}}); err != nil {
		t.Fatal(err)
	}
	if r := current(t, uuid, "config-file"); r.Rev.Revision != 2 || r.Rev.Fingerprint != charm.ResourceFingerprint([]byte("conf v2")) {
		t.Errorf("after refresh: %+v", r.Rev)
	}
	if v := charmModifiedVersion(t, uuid); v != version+1 {
		t.Errorf("charm modified version %d, want %d", v, version+1)
	}
	// Used once: the same id again is refused.
	if _, err := st.SetApplicationCharm(ctx, uuid, "testapp", state.SetCharmArgs{CharmURL: ch.Url,
		Resources: map[string]string{"config-file": up2.PendingID}}); !errors.Is(err, apierr.NotFound) {
		t.Errorf("pending id used twice: %v", err)
	}
	if app, _ := st.Application(ctx, uuid, "testapp"); app.CharmUrl != v2.Url {
		t.Errorf("a refused refresh switched the charm to %s", app.CharmUrl)
	}
	audit(t, uuid)
}

// Pending uploads never used go, with their content, at the first upload an hour later.
func TestPendingResourcesExpire(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	now := time.Now()
	clocked := state.New(st.Client())
	clocked.SetClock(func() time.Time { return now })
	ch, err := clocked.AddCharm(ctx, uuid, charmZip(t, testappMeta))
	if err != nil {
		t.Fatal(err)
	}
	old, err := clocked.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "never", Name: "test-file",
		Content: []byte("abandoned"), Pending: true, CharmURL: ch.Url})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(state.PendingResourceTTL - time.Minute)
	if _, err := clocked.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "other", Name: "test-file",
		Content: []byte("recent"), Pending: true, CharmURL: ch.Url}); err != nil {
		t.Fatal(err)
	}
	if keys := resourceKeys(t, uuid); countKeys(keys, "pendingresources/never/") != 1 || countKeys(keys, "never/") != 3 {
		t.Fatalf("expired too early: %v", keys)
	}
	now = now.Add(2 * time.Minute)
	if _, err := clocked.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "other", Name: "test-file",
		Content: []byte("recent"), Pending: true, CharmURL: ch.Url}); err != nil {
		t.Fatal(err)
	}
	keys := resourceKeys(t, uuid)
	if countKeys(keys, "never/") != 0 {
		t.Errorf("the expired upload is left: %v", keys)
	}
	// other's two uploads share one blob (and its one chunk).
	if countKeys(keys, "pendingresources/other/") != 2 || countKeys(keys, "other/blobs/") != 1 || countKeys(keys, "other/"+charm.ResourceFingerprint([]byte("recent"))+"/") != 1 {
		t.Errorf("keys = %v", keys)
	}
	if _, err := clocked.Deploy(ctx, uuid, state.DeployArgs{Name: "never", CharmURL: ch.Url, Base: "ubuntu@22.04",
		Resources: map[string]string{"test-file": old.PendingID}}); !errors.Is(err, apierr.NotFound) {
		t.Errorf("deploy with an expired upload: %v", err)
	}
}

// resource-get: the current revision, its content unless the unit has it, and the record of
// what the unit has; a resource nobody uploaded is Juju's "not found".
func TestOpenUnitResource(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deployTestapp(t, uuid, "first", 2)
	res, content, err := st.OpenUnitResource(ctx, uuid, "testapp/0", "test-file", "")
	if err != nil || string(content) != "first" || res.Rev.Revision != 1 || res.Meta.Filename != "test-file.tar" {
		t.Fatalf("open: %+v %q %v", res, content, err)
	}
	res, content, err = st.OpenUnitResource(ctx, uuid, "testapp/0", "test-file", charm.ResourceFingerprint([]byte("first")))
	if err != nil || content != nil || res.Rev.Revision != 1 {
		t.Fatalf("open with the current copy: %+v %q %v", res, content, err)
	}
	for name, msg := range map[string]string{"config-file": `resource "config-file" not found`, "nope": `resource "nope" not found`} {
		if _, _, err := st.OpenUnitResource(ctx, uuid, "testapp/0", name, ""); !errors.Is(err, apierr.NotFound) || err.Error() != msg {
			t.Errorf("%s: %v, want %s", name, err, msg)
		}
	}
	if _, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: "testapp", Name: "test-file", Content: bytes.Repeat([]byte("z"), 3<<20)}); err != nil {
		t.Fatal(err)
	}
	// Several chunks, read back whole.
	if _, content, err := st.OpenUnitResource(ctx, uuid, "testapp/1", "test-file", ""); err != nil || !bytes.Equal(content, bytes.Repeat([]byte("z"), 3<<20)) {
		t.Fatalf("3 MiB back: %d bytes, %v", len(content), err)
	}

	list, err := st.ListResources(ctx, uuid, "testapp", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Units) != 2 || list.Units[0].Unit != "testapp/0" || len(list.Units[0].Resources) != 1 ||
		list.Units[0].Resources[0].Rev.Revision != 1 || list.Units[1].Resources[0].Rev.Revision != 2 {
		t.Errorf("units = %+v", list.Units)
	}
	if names := []string{list.Resources[0].Meta.Name, list.Resources[1].Meta.Name}; len(list.Resources) != 2 || names[0] != "config-file" || names[1] != "test-file" {
		t.Errorf("resources = %+v (the OCI image is not listed)", list.Resources)
	}
	one, err := st.ListResources(ctx, uuid, "", "testapp/1")
	if err != nil || len(one.Units) != 1 || one.Units[0].Unit != "testapp/1" || one.Application != "testapp" {
		t.Errorf("unit list = %+v %v", one, err)
	}
	if _, err := st.ListResources(ctx, uuid, "", "testapp/9"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown unit: %v", err)
	}
}

// Removal: a unit's records go with it, every document and chunk of an application's
// resources with the application, and what is left of a model's with the model.
func TestResourcesGoWithTheirOwners(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	url := deployTestapp(t, uuid, "first", 1)
	if _, _, err := st.OpenUnitResource(ctx, uuid, "testapp/0", "test-file", ""); err != nil {
		t.Fatal(err)
	}
	if n := countKeys(resourceKeys(t, uuid), "testapp/units/0/"); n != 1 {
		t.Fatalf("unit records %d", n)
	}
	// A pending upload for the application, and one for an application never deployed.
	for _, app := range []string{"testapp", "ghost"} {
		if _, err := st.UploadResource(ctx, uuid, state.UploadResourceArgs{Application: app, Name: "config-file",
			Content: []byte("c"), Pending: true, CharmURL: url}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DestroyUnit(ctx, uuid, "testapp/0", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	unitGoes(t, uuid, "testapp/0")
	if n := countKeys(resourceKeys(t, uuid), "testapp/units/"); n != 0 {
		t.Errorf("unit records outlived the unit: %d", n)
	}
	if res, err := st.DestroyApplication(ctx, uuid, "testapp", state.DestroyOptions{}); err != nil || res.Outcome != state.OutcomeRemoved {
		t.Fatalf("destroy application: %+v %v", res, err)
	}
	keys := resourceKeys(t, uuid)
	if countKeys(keys, "testapp/") != 0 || countKeys(keys, "ghost/") != 3 {
		t.Errorf("after removing testapp: %v", keys)
	}
	audit(t, uuid)

	name := modelName(t, uuid)
	if _, err := st.DestroyModel(ctx, uuid, state.DestroyModelOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d := drain(t, uuid)
		if d.Removed {
			break
		}
		snap, err := st.Snapshot(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range snap.Machines {
			if m.Life == "dying" {
				machineGoes(t, uuid, m.Id)
			}
		}
	}
	assertModelGone(t, uuid, name)
	if keys := resourceKeys(t, uuid); len(keys) != 0 {
		t.Errorf("left after the model: %v", keys)
	}
}
