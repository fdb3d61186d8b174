// Package actionpruner removes the results of finished actions and exec commands that a model
// keeps no longer, as Juju's action pruner does: older than the model's max-action-results-age,
// or the oldest while they take more than its max-action-results-size.
package actionpruner

import (
	"context"
	"log/slog"
	"time"

	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/worker/modelloop"
	"github.com/jujuclone/juju/core/modelconfig"
)

// DefaultInterval is how often a model's operations are weighed when nothing changes.
const DefaultInterval = time.Hour

// Worker prunes the operations of every model.
type Worker struct {
	st       *state.State
	log      *slog.Logger
	interval time.Duration
}

// New returns a pruner that weighs each model on start, when its configuration changes and
// every interval (DefaultInterval when 0).
func New(st *state.State, log *slog.Logger, interval time.Duration) *Worker {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Worker{st: st, log: log, interval: interval}
}

// Run prunes until ctx ends: one loop per model, started as models appear.
func (w *Worker) Run(ctx context.Context) {
	modelloop.Run(ctx, w.st, w.log, "action-pruner", w.runModel)
}

func (w *Worker) runModel(ctx context.Context, uuid string) {
	// The model document carries its configuration, and a change of the controller's model
	// defaults writes it again too.
	changes, err := modelloop.WatchStore(ctx, w.st, modelloop.Watch{Prefix: state.ModelDocKey(uuid)})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("action-pruner: watching the model", "model", uuid, "err", err)
		}
		return
	}
	modelloop.Follow(ctx, changes, modelloop.RealClock, func(ctx context.Context) (time.Time, error) {
		return time.Now().Add(w.interval), w.prune(ctx, uuid)
	})
}

func (w *Worker) prune(ctx context.Context, uuid string) error {
	m, err := w.st.Model(ctx, uuid)
	if err != nil {
		return err
	}
	defaults, err := w.st.ModelDefaults(ctx)
	if err != nil {
		return err
	}
	maxAge, maxBytes := modelconfig.ActionResultsLimits(modelconfig.Inherit(defaults, m.Config))
	res, err := w.st.PruneOperations(ctx, uuid, maxAge, maxBytes)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("action-pruner: pruning", "model", uuid, "err", err)
		}
		return err
	}
	if res.Operations > 0 {
		w.log.Info("action-pruner: removed finished operations", "model", uuid,
			"operations", res.Operations, "tasks", res.Tasks, "bytes", res.Bytes)
	}
	return nil
}
