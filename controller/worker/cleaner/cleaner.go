// Package cleaner runs the cleanup documents that removals leave behind: a removed relation's
// settings are deleted in bounded batches (L-R7, L-G4).
package cleaner

import (
	"context"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/modelloop"
)

// Worker runs the cleanups of every model.
type Worker struct {
	st  *state.State
	log *slog.Logger
}

// New returns a cleaner.
func New(st *state.State, log *slog.Logger) *Worker {
	return &Worker{st: st, log: log}
}

// Run cleans up until ctx ends: one loop per model, started as models appear.
func (w *Worker) Run(ctx context.Context) {
	modelloop.Run(ctx, w.st, w.log, "cleaner", w.runModel)
}

// runModel runs a model's pending cleanups on start and after every burst of new ones; a
// failed cleanup is retried on the next change or after a backoff.
func (w *Worker) runModel(ctx context.Context, uuid string) {
	changes, err := modelloop.WatchStore(ctx, w.st, modelloop.Watch{
		Prefix: state.CleanupsPrefix(uuid),
		// Only new cleanups: deleting the ones done must not wake us again.
		Keep: func(ev *clientv3.Event) bool { return ev.Type == clientv3.EventTypePut },
	})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("cleaner: watching cleanups", "model", uuid, "err", err)
		}
		return
	}
	modelloop.Follow(ctx, changes, modelloop.RealClock, func(ctx context.Context) (time.Time, error) {
		return time.Time{}, w.clean(ctx, uuid)
	})
}

// clean runs every pending cleanup of a model; it returns the last failure, after trying
// every cleanup.
func (w *Worker) clean(ctx context.Context, uuid string) error {
	cleanups, err := w.st.Cleanups(ctx, uuid)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("cleaner: listing cleanups", "model", uuid, "err", err)
		}
		return err
	}
	var failed error
	for _, c := range cleanups {
		if err := w.st.RunCleanup(ctx, uuid, c); err != nil {
			if ctx.Err() != nil {
				return err
			}
			w.log.Error("cleaner: cleanup failed; will retry", "model", uuid, "cleanup", c.ID, "kind", c.Doc.Kind, "err", err)
			failed = err
		}
	}
	return failed
}
