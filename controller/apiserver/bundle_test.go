package apiserver

import (
	"context"
	"encoding/hex"
	"maps"
	"slices"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/charm"
)

const (
	dbMeta = "name: db\nsummary: db\nprovides:\n  db: mysql\npeers:\n  cluster: db-ha\nbases: [ubuntu@22.04]\n" +
		"resources:\n  backup:\n    type: file\n    filename: backup.tar\n    description: The last backup.\n  seed:\n    type: file\n    filename: seed.sql\n"
	logMeta = "name: logger\nsummary: logs\nsubordinate: true\nrequires:\n  juju-info:\n    interface: juju-info\n    scope: container\nbases: [ubuntu@22.04]\n"
)

// DescribeModel: applications with their charm (and its archive's sha256), the config the user
// set (not defaults), constraints, trust, annotations and units on their machines; machines
// with theirs; relations as sorted endpoint pairs. SetAnnotations refuses bad keys, unknown
// entities and agents.
func TestDescribeModelAndSetAnnotations(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 2, "mem=2G", map[string]string{"title": "News", "port": "80"})
	if err != nil {
		t.Fatal(err)
	}
	up, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": dbMeta}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.admin.Deploy(ctx, &pb.DeployRequest{
		Model: "default", Application: "db", CharmUrl: up.Url, Base: &pb.Base{Name: "ubuntu", Channel: "22.04"},
		NumUnits: 1, Placement: []*pb.Placement{{Scope: "#", Directive: "0"}}, Trust: true,
	}); err != nil {
		t.Fatal(err)
	}
	sub, err := env.admin.UploadCharm(ctx, "default", charmArchive(t, map[string]string{"metadata.yaml": logMeta}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.admin.Deploy(ctx, &pb.DeployRequest{
		Model: "default", Application: "logger", CharmUrl: sub.Url, Base: &pb.Base{Name: "ubuntu", Channel: "22.04"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, eps := range [][]string{{"db", "blog"}, {"logger", "blog"}} {
		if _, err := env.admin.Integrate(ctx, "default", eps); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Application: "blog", Annotations: map[string]string{"gui-x": "1", "owner": "web"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Machine: "1", Annotations: map[string]string{"rack": "r2"}}); err != nil {
		t.Fatal(err)
	}

	if _, err := env.admin.UploadResource(ctx, &pb.UploadResourceRequest{Model: "default", Application: "db", Name: "backup", Filename: "b.tar", Content: []byte("backup")}); err != nil {
		t.Fatal(err)
	}
	if err := env.admin.Expose(ctx, &pb.ExposeRequest{Model: "default", Application: "blog", Endpoints: []*pb.ExposedEndpoint{{Endpoint: "db", ToCidrs: []string{"10.0.0.0/8"}}}}); err != nil {
		t.Fatal(err)
	}

	d, err := env.admin.DescribeModel(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "default" || d.Revision == 0 {
		t.Errorf("model %q at revision %d", d.Name, d.Revision)
	}
	apps := map[string]*pb.DescribedApplication{}
	for _, a := range d.Applications {
		apps[a.Name] = a
	}
	blog := apps["blog"]
	if blog == nil || blog.CharmName != "blog" || blog.CharmUrl != "local:blog-0" || blog.CharmRevision != 0 || blog.Base != "ubuntu@22.04" ||
		blog.Constraints != "mem=2048M" || blog.Subordinate || blog.Trust || blog.Life != "alive" {
		t.Fatalf("blog: %v", blog)
	}
	if ex := blog.ExposedEndpoints; !blog.Exposed || len(ex) != 1 || ex[0].Endpoint != "db" || !slices.Equal(ex[0].ToCidrs, []string{"10.0.0.0/8"}) {
		t.Errorf("blog's exposure: %v %v", blog.Exposed, ex)
	}
	if sum, err := hex.DecodeString(blog.CharmSha256); err != nil || len(sum) != 32 {
		t.Errorf("blog's charm sha256 %q", blog.CharmSha256)
	}
	if want := map[string]string{"title": `"News"`, "port": "80"}; !maps.Equal(blog.ConfigJson, want) {
		t.Errorf("blog's config %v, want the values set only, %v", blog.ConfigJson, want)
	}
	if want := map[string]string{"gui-x": "1", "owner": "web"}; !maps.Equal(blog.Annotations, want) {
		t.Errorf("blog's annotations %v", blog.Annotations)
	}
	var placed []string
	for _, u := range blog.Units {
		placed = append(placed, u.Name+"@"+u.Machine)
	}
	if want := []string{units[0] + "@0", units[1] + "@1"}; !slices.Equal(placed, want) {
		t.Errorf("blog's units %v, want %v", placed, want)
	}
	if db := apps["db"]; db == nil || !db.Trust || len(db.Units) != 1 || db.Units[0].Machine != "0" {
		t.Errorf("db: %v", db)
	}
	// The uploaded revisions, read at the description's revision; seed was never uploaded.
	if res := apps["db"].GetResources(); len(res) != 1 || res[0].Name != "backup" || res[0].Revision != 1 || res[0].Path != "backup.tar" ||
		res[0].Fingerprint != charm.ResourceFingerprint([]byte("backup")) || res[0].Size != 6 || res[0].Application != "db" {
		t.Errorf("db's resources: %v", res)
	}
	if lg := apps["logger"]; lg == nil || !lg.Subordinate || len(lg.Units) != 0 {
		t.Errorf("logger: %v", lg)
	}
	var machines []string
	for _, m := range d.Machines {
		machines = append(machines, m.Id+" "+m.Base+" "+m.Constraints+" "+m.Annotations["rack"])
	}
	if want := []string{"0 ubuntu@22.04 mem=2048M ", "1 ubuntu@22.04 mem=2048M r2"}; !slices.Equal(machines, want) {
		t.Errorf("machines %q, want %q", machines, want)
	}
	var rels []string
	for _, r := range d.Relations {
		rels = append(rels, r.Interface+" "+r.Life)
		for _, ep := range r.Endpoints {
			rels[len(rels)-1] += " " + ep
		}
	}
	want := []string{"mysql alive blog:db db:db", "juju-info alive blog:juju-info logger:juju-info", "db-ha alive db:cluster"}
	if !slices.Equal(rels, want) {
		t.Errorf("relations %q, want %q", rels, want)
	}

	// Refusals.
	err = env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Application: "blog", Annotations: map[string]string{"a.b": "x"}})
	wantErr(t, "a key with a dot", err, apierr.NotValid)
	err = env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Application: "nope", Annotations: map[string]string{"a": "x"}})
	wantErr(t, "unknown application", err, apierr.NotFound)
	err = env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Machine: "7", Annotations: map[string]string{"a": "x"}})
	wantErr(t, "unknown machine", err, apierr.NotFound)
	err = env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Machine: "x/y", Annotations: map[string]string{"a": "x"}})
	wantErr(t, "bad machine id", err, apierr.NotValid)
	err = env.admin.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: "default", Annotations: map[string]string{"a": "x"}})
	wantErr(t, "no target", err, apierr.NotValid)
	agent := env.unitAgent(t, units[0])
	err = agent.SetAnnotations(ctx, &pb.SetAnnotationsRequest{Model: env.model, Application: "blog", Annotations: map[string]string{"a": "x"}})
	wantErr(t, "an agent", err, apierr.PermissionDenied)
	_, err = agent.DescribeModel(ctx, env.model)
	wantErr(t, "an agent describing", err, apierr.PermissionDenied)
	if d, err := env.admin.DescribeModel(ctx, "default"); err != nil || !maps.Equal(d.Applications[0].Annotations, blog.Annotations) {
		t.Errorf("refusals changed the annotations: %v %v", d.GetApplications()[0].GetAnnotations(), err)
	}
}
