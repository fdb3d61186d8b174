package cleaner_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/cleaner"
	"github.com/jujuclone/juju/controller/worker/internal/workertest"
)

var st *state.State

func TestMain(m *testing.M) { workertest.Main(m, &st) }

func runWorker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		cleaner.New(st, slog.New(slog.NewTextHandler(io.Discard, nil))).Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("cleaner did not stop")
		}
	})
}

// removeRelationWithSettings removes an application's peer relation after n units joined it
// (and wrote settings), leaving a cleanup document (L-R4) and n settings to delete.
func removeRelationWithSettings(t *testing.T, uuid, app string, n int) int64 {
	t.Helper()
	ctx := context.Background()
	units := workertest.Deploy(t, st, uuid, app, workertest.WordpressMeta, n)
	peer := workertest.Find(workertest.Snapshot(t, st, uuid).Relations, func(r *storepb.Relation) bool {
		return len(r.Endpoints) == 1 && r.Endpoints[0].Application == app
	})
	for _, u := range units {
		workertest.EnterScope(t, st, uuid, peer.Id, u)
	}
	if _, err := st.DestroyApplication(ctx, uuid, app, state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		if err := st.LeaveScope(ctx, uuid, peer.Id, u); err != nil {
			t.Fatal(err)
		}
	}
	if rel := workertest.Relation(workertest.Snapshot(t, st, uuid), peer.Id); rel != nil {
		t.Fatalf("relation %d not removed: %v", peer.Id, rel)
	}
	return peer.Id
}

func cleaned(t *testing.T, uuid string, rel int64) func() bool {
	return func() bool {
		ctx := context.Background()
		cleanups, err := st.Cleanups(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		settings, err := st.RelationSettings(ctx, uuid, rel)
		if err != nil {
			t.Fatal(err)
		}
		return len(cleanups) == 0 && len(settings) == 0
	}
}

func TestPendingCleanupsRunOnStart_LR7(t *testing.T) {
	uuid := workertest.NewModel(t, st)
	rel := removeRelationWithSettings(t, uuid, "wordpress", 2)
	cleanups, err := st.Cleanups(context.Background(), uuid)
	if err != nil || len(cleanups) != 1 {
		t.Fatalf("cleanups before the worker: %v %v", cleanups, err)
	}
	runWorker(t)
	workertest.Eventually(t, "settings cleaned up", cleaned(t, uuid, rel))
}

// New cleanups are run as they come; a relation with more settings than one batch holds is
// cleaned up all the same (the batches are bounded, L-G4).
func TestNewCleanupsRunInBoundedBatches_LR7(t *testing.T) {
	runWorker(t)
	uuid := workertest.NewModel(t, st)
	small := removeRelationWithSettings(t, uuid, "wordpress", 1)
	workertest.Eventually(t, "first relation cleaned up", cleaned(t, uuid, small))
	big := removeRelationWithSettings(t, uuid, "blog", 70)
	workertest.Eventually(t, "second relation cleaned up", cleaned(t, uuid, big))
}
