package apiserver

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
)

func TestCompleteNames(t *testing.T) {
	env := startTestEnv(t)
	ctx := context.Background()
	env.deploy(t, "wordpress", "name: wordpress\nsummary: blog\nrequires:\n  db: mysql\nprovides:\n  website: http\nbases: [ubuntu@22.04]\n", 12)
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nprovides:\n  db: mysql\nbases: [ubuntu@22.04]\n", 1)

	for _, tc := range []struct {
		model     string
		kind      client.NameKind
		prefix    string
		limit     int
		want      []string
		truncated bool
	}{
		{"default", client.NameApplication, "", 0, []string{"mysql", "wordpress"}, false},
		{"default", client.NameUnit, "wordpress/1", 0, []string{"wordpress/1", "wordpress/10", "wordpress/11"}, false},
		{env.model, client.NameUnit, "wordpress/", 2, []string{"wordpress/0", "wordpress/1"}, true},
		{"default", client.NameMachine, "1", 0, []string{"1", "10", "11", "12"}, false},
		{"", client.NameModel, "", 0, []string{"controller", "default"}, false},
		{"default", client.NameEndpoint, "wordpress:", 0, []string{"wordpress:db", "wordpress:juju-info", "wordpress:website"}, false},
		{"default", client.NameEndpoint, "mysql:d", 0, []string{"mysql:db"}, false},
	} {
		got, truncated, err := env.admin.CompleteNames(ctx, tc.model, tc.kind, tc.prefix, tc.limit)
		if err != nil {
			t.Errorf("%s %q: %v", tc.kind, tc.prefix, err)
			continue
		}
		if !slices.Equal(got, tc.want) || truncated != tc.truncated {
			t.Errorf("%s %q = %q truncated %v, want %q truncated %v", tc.kind, tc.prefix, got, truncated, tc.want, tc.truncated)
		}
	}

	for what, req := range map[string]*pb.CompleteNamesRequest{
		"no kind":         {Model: "default"},
		"no model":        {Kind: pb.NameKind_NAME_KIND_UNIT},
		"endpoint no app": {Model: "default", Kind: pb.NameKind_NAME_KIND_ENDPOINT, Prefix: "word"},
	} {
		_, _, err := env.admin.CompleteNames(ctx, req.Model, req.Kind, req.Prefix, int(req.Limit))
		wantErr(t, what, err, apierr.NotValid)
	}
	// The client never sends a negative limit: ask the server directly.
	admin := metadata.AppendToOutgoingContext(ctx, MetaTag, AdminTag, MetaPassword, "admin-secret")
	_, err := pb.NewCompletionServiceClient(env.admin.Conn()).CompleteNames(admin,
		&pb.CompleteNamesRequest{Model: "default", Kind: pb.NameKind_NAME_KIND_UNIT, Limit: -1})
	wantErr(t, "negative limit", apierr.FromStatus(err), apierr.NotValid)
	_, _, err = env.admin.CompleteNames(ctx, "nope", client.NameUnit, "", 0)
	wantErr(t, "unknown model", err, apierr.NotFound)
}

func TestCompleteNamesIsForTheAdmin(t *testing.T) {
	env := startTestEnv(t)
	ctx := context.Background()
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nbases: [ubuntu@22.04]\n", 1)
	if err := env.st.SetUnitPassword(ctx, env.model, "mysql/0", state.HashPassword("unit-secret")); err != nil {
		t.Fatal(err)
	}
	agent := env.dial(t, "unit-mysql-0", "unit-secret", env.model)
	_, _, err := agent.CompleteNames(ctx, "", client.NameUnit, "", 0)
	wantErr(t, "agent", err, apierr.PermissionDenied)
}
