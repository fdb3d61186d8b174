package apiserver

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// juju expose and unexpose through the API: the admin's alone; status shows the exposure.
func TestExposeUnexpose(t *testing.T) {
	ctx := context.Background()
	env := startWorkloadEnv(t, false)
	units, err := env.deployBlog(t, "blog", 1, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	exposure := func() (bool, []*pb.ExposedEndpoint) {
		t.Helper()
		fs, err := env.admin.FullStatus(ctx, "default", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range fs.Applications {
			if a.Name == "blog" {
				return a.Exposed, a.ExposedEndpoints
			}
		}
		t.Fatal("no blog in status")
		return false, nil
	}

	agent := env.unitAgent(t, units[0])
	wantErr(t, "agent exposing", agent.Expose(ctx, &pb.ExposeRequest{Model: env.model, Application: "blog"}), apierr.PermissionDenied)
	wantErr(t, "bad name", env.admin.Expose(ctx, &pb.ExposeRequest{Model: "default", Application: "Blog"}), apierr.NotValid)
	wantErr(t, "unknown application", env.admin.Expose(ctx, &pb.ExposeRequest{Model: "default", Application: "nope"}), apierr.NotFound)
	wantErr(t, "unknown endpoint", env.admin.Expose(ctx, &pb.ExposeRequest{Model: "default", Application: "blog",
		Endpoints: []*pb.ExposedEndpoint{{Endpoint: "www"}}}), apierr.NotFound)
	if exposed, eps := exposure(); exposed || len(eps) != 0 {
		t.Fatalf("exposed by a refused call: %v %v", exposed, eps)
	}

	if err := env.admin.Expose(ctx, &pb.ExposeRequest{Model: "default", Application: "blog"}); err != nil {
		t.Fatal(err)
	}
	if err := env.admin.Expose(ctx, &pb.ExposeRequest{Model: "default", Application: "blog",
		Endpoints: []*pb.ExposedEndpoint{{Endpoint: "db", ToSpaces: []string{"alpha"}, ToCidrs: []string{"10.0.0.0/8"}}}}); err != nil {
		t.Fatal(err)
	}
	exposed, eps := exposure()
	if !exposed || len(eps) != 2 || eps[0].Endpoint != "" || eps[0].ToCidrs[1] != "::/0" ||
		eps[1].Endpoint != "db" || eps[1].ToSpaces[0] != "alpha" || eps[1].ToCidrs[0] != "10.0.0.0/8" {
		t.Fatalf("status after expose: %v %v", exposed, eps)
	}

	wantErr(t, "agent unexposing", agent.Unexpose(ctx, &pb.UnexposeRequest{Model: env.model, Application: "blog"}), apierr.PermissionDenied)
	if err := env.admin.Unexpose(ctx, &pb.UnexposeRequest{Model: "default", Application: "blog", Endpoints: []string{""}}); err != nil {
		t.Fatal(err)
	}
	if exposed, eps := exposure(); !exposed || len(eps) != 1 || eps[0].Endpoint != "db" {
		t.Fatalf("status after unexposing every endpoint's entry: %v %v", exposed, eps)
	}
	if err := env.admin.Unexpose(ctx, &pb.UnexposeRequest{Model: "default", Application: "blog"}); err != nil {
		t.Fatal(err)
	}
	if exposed, eps := exposure(); exposed || len(eps) != 0 {
		t.Fatalf("status after unexpose: %v %v", exposed, eps)
	}
}
