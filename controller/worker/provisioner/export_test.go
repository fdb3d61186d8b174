package provisioner

import (
	"context"
	"log/slog"

	"github.com/jujuclone/juju/controller/state"
)

// NewWithStore is New reading and writing through s, each model's watch living on the context
// watchContext gives it.
func NewWithStore(st *state.State, s Store, p Provider, log *slog.Logger, watchContext func(ctx context.Context, uuid string) context.Context) *Worker {
	w := New(st, p, log)
	w.store = s
	w.watchContext = watchContext
	return w
}
