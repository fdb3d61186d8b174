package apiserver

import (
	"context"
	"errors"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/charm"
)

const resourceMeta = "name: testapp\nsummary: resources\nresources:\n  test-file:\n    type: file\n    filename: test-file.tar\n" +
	"  other:\n    filename: other.conf\nbases: [ubuntu@22.04]\n"

// deploy --resource, attach-resource, resources and resource-get through the API: the admin
// uploads (pending, then named by Deploy; then the next revision at once), lists, and the
// unit's own agent fetches its application's revision, which the listing then shows.
func TestResourceService(t *testing.T) {
	ctx := context.Background()
	env := &workloadEnv{testEnv: startTestEnv(t)}
	admin := env.admin
	up, err := admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": resourceMeta}))
	if err != nil {
		t.Fatal(err)
	}
	pending, err := admin.UploadResource(ctx, &pb.UploadResourceRequest{Model: "default", Application: "testapp", Name: "test-file",
		Filename: "v1.tar", Content: []byte("one"), Pending: true, CharmUrl: up.Url})
	if err != nil || pending.PendingId == "" || pending.Resource.Revision != 1 || pending.Resource.Username != "admin" {
		t.Fatalf("pending upload: %v %v", pending, err)
	}
	if _, err := admin.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "testapp", CharmUrl: up.Url,
		Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, NumUnits: 2, Resources: map[string]string{"test-file": pending.PendingId}}); err != nil {
		t.Fatal(err)
	}
	list, err := admin.ListResources(ctx, &pb.ListResourcesRequest{Model: "default", Application: "testapp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 2 || list.Resources[0].Name != "other" || list.Resources[0].Revision != 0 || list.Resources[0].Origin != "upload" ||
		list.Resources[1].Name != "test-file" || list.Resources[1].Revision != 1 || list.Resources[1].Path != "test-file.tar" ||
		list.Resources[1].Fingerprint != charm.ResourceFingerprint([]byte("one")) || list.Resources[1].Size != 3 ||
		list.Resources[1].Type != "file" || list.Resources[1].Application != "testapp" || list.Resources[1].Timestamp == 0 {
		t.Fatalf("list = %v", list)
	}
	if len(list.Units) != 2 || len(list.Units[0].Resources) != 0 {
		t.Fatalf("units = %v", list.Units)
	}

	attach, err := admin.UploadResource(ctx, &pb.UploadResourceRequest{Model: "default", Application: "testapp", Name: "test-file",
		Filename: "v2.tar", Content: []byte("two")})
	if err != nil || attach.Resource.Revision != 2 || attach.PendingId != "" {
		t.Fatalf("attach: %v %v", attach, err)
	}

	agent := env.unitAgent(t, "testapp/0")
	got, err := agent.GetResource(ctx, env.model, "testapp/0", "test-file", "")
	if err != nil || string(got.Content) != "two" || got.Resource.Revision != 2 || got.Resource.Path != "test-file.tar" {
		t.Fatalf("resource-get: %v %v", got, err)
	}
	got, err = agent.GetResource(ctx, env.model, "testapp/0", "test-file", charm.ResourceFingerprint([]byte("two")))
	if err != nil || len(got.Content) != 0 || got.Resource.Revision != 2 {
		t.Fatalf("resource-get with the current copy: %v %v", got, err)
	}
	_, err = agent.GetResource(ctx, env.model, "testapp/0", "other", "")
	if !errors.Is(err, apierr.NotFound) || err.Error() != `resource "other" not found` {
		t.Errorf("never uploaded: %v", err)
	}
	unit, err := admin.ListResources(ctx, &pb.ListResourcesRequest{Model: "default", Unit: "testapp/0"})
	if err != nil || len(unit.Units) != 1 || len(unit.Units[0].Resources) != 1 || unit.Units[0].Resources[0].Revision != 2 {
		t.Fatalf("unit list: %v %v", unit, err)
	}

	for what, c := range map[string]struct {
		err error
		req *pb.UploadResourceRequest
	}{
		"bad application": {apierr.NotValid, &pb.UploadResourceRequest{Model: "default", Application: "Bad", Name: "x"}},
		"no name":         {apierr.NotValid, &pb.UploadResourceRequest{Model: "default", Application: "testapp"}},
		"undeclared":      {apierr.NotFound, &pb.UploadResourceRequest{Model: "default", Application: "testapp", Name: "nope", Content: []byte("x")}},
	} {
		if _, err := admin.UploadResource(ctx, c.req); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", what, err, c.err)
		}
	}
	for what, req := range map[string]*pb.ListResourcesRequest{
		"neither": {Model: "default"},
		"both":    {Model: "default", Application: "testapp", Unit: "testapp/0"},
		"bad":     {Model: "default", Unit: "testapp"},
	} {
		if _, err := admin.ListResources(ctx, req); !errors.Is(err, apierr.NotValid) {
			t.Errorf("list %s: %v", what, err)
		}
	}
	// Agents reach no ResourceService method (TestAgentsSeeOnlyWhatIsTheirs holds the table).
	if _, err := agent.ListResources(ctx, &pb.ListResourcesRequest{Model: env.model, Application: "testapp"}); !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("agent listing: %v", err)
	}
	// Another unit's agent may not fetch for testapp/0.
	other := env.unitAgent(t, "testapp/1")
	if _, err := other.GetResource(ctx, env.model, "testapp/0", "test-file", ""); !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("another unit fetching: %v", err)
	}
}
