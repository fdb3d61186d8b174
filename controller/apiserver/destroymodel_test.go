package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

const destroyMeta = "name: db\nsummary: db\nprovides:\n  db: mysql\nbases: [ubuntu@22.04]\n"

func TestDestroyModel(t *testing.T) {
	ctx := context.Background()
	e := &workloadEnv{startTestEnv(t)}
	e.deploy(t, "db", destroyMeta, 2)

	// A dry run lists and changes nothing.
	resp, err := e.admin.DestroyModel(ctx, &pb.DestroyModelRequest{Model: "default", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(resp.Applications, resp.Units, resp.Machines, resp.Uuid == e.model); got != "[db] [db/0 db/1] [0 1] true" {
		t.Fatalf("dry run = %s", got)
	}
	if m, _ := e.admin.GetModel(ctx, "default"); m.GetLife() != "alive" {
		t.Fatalf("dry run changed the model: %v", m)
	}

	if _, err := e.admin.DestroyModel(ctx, &pb.DestroyModelRequest{Model: "default", NoWait: true}); !errors.Is(err, apierr.NotValid) ||
		err.Error() != "--no-wait without --force not valid" {
		t.Fatalf("--no-wait alone: %v", err)
	}
	if _, err := e.admin.DestroyModel(ctx, &pb.DestroyModelRequest{Model: "nope"}); !errors.Is(err, apierr.NotFound) ||
		err.Error() != `model "nope" not found` {
		t.Fatalf("unknown model: %v", err)
	}

	// Only the admin may destroy a model.
	agent := e.unitAgent(t, "db/0")
	if _, err := agent.DestroyModel(ctx, &pb.DestroyModelRequest{Model: e.model}); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("agent destroying its model: %v", err)
	}

	for range 2 { // the second time: already dying, not an error
		if _, err := e.admin.DestroyModel(ctx, &pb.DestroyModelRequest{Model: "default", Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := e.admin.GetModel(ctx, "default")
	if err != nil || m.GetLife() != "dying" || m.GetStatus().GetStatus() != "destroying" {
		t.Fatalf("model after destroy: %v %v", m, err)
	}
	_, err = e.admin.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "db", NumUnits: 1})
	if !errors.Is(err, apierr.NotAlive) || !strings.Contains(err.Error(), `model "default" is being destroyed`) {
		t.Fatalf("add-unit to a dying model: %v", err)
	}
}

// The controller model is refused with FailedPrecondition and a message saying what to do.
func TestDestroyControllerModel(t *testing.T) {
	e := startTestEnv(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), MetaTag, AdminTag, MetaPassword, "admin-secret")
	_, err := pb.NewControllerServiceClient(e.admin.Conn()).DestroyModel(ctx, &pb.DestroyModelRequest{Model: "controller"})
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("code = %v (%v)", status.Code(err), err)
	}
	_, err = e.admin.DestroyModel(context.Background(), &pb.DestroyModelRequest{Model: "controller", DryRun: true})
	want := `cannot destroy model "controller": it is the controller model; use juju kill-controller to destroy the controller`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
