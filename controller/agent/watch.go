package agent

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// watcher is how an agent watches: the runner's shared stream (watchMux), or nil for a
// stream of its own (agents made outside a runner, in tests).
type watcher struct {
	mux *watchMux
	c   *client.Client
}

func (r *Runner) watcher(c *client.Client) watcher {
	if r == nil {
		return watcher{c: c}
	}
	return watcher{mux: r.watches, c: c}
}

// signals turns a watch into a channel that holds at most one pending "something changed",
// so bursts of changes cost one re-read. The error channel gets the watch's end.
func (w watcher) signals(ctx context.Context, model string, targets ...*pb.WatchTarget) (<-chan struct{}, <-chan error, error) {
	changed, _, done, err := w.split(ctx, model, nil, targets...)
	return changed, done, err
}

// split is signals for one watch that serves two readers: events of kind apart signal on
// other, the rest on changed. One watch costs the controller one subscription where two
// cost twice that (issue 16).
func (w watcher) split(ctx context.Context, model string, apart map[string]bool, targets ...*pb.WatchTarget) (changed, other <-chan struct{}, done <-chan error, err error) {
	chans, done, err := w.groups(ctx, model, 2, func(kind string) int {
		if apart[kind] {
			return 1
		}
		return 0
	}, targets...)
	if err != nil {
		return nil, nil, nil, err
	}
	return chans[0], chans[1], done, nil
}

// groups is split for n readers: group says which channel an event's kind signals.
func (w watcher) groups(ctx context.Context, model string, n int, group func(kind string) int, targets ...*pb.WatchTarget) ([]<-chan struct{}, <-chan error, error) {
	if w.mux != nil {
		return w.mux.watch(ctx, w.c, model, n, group, targets...)
	}
	ws, err := w.c.Watch(ctx, &pb.WatchRequest{Model: model, Targets: targets})
	if err != nil {
		return nil, nil, err
	}
	chans := make([]chan struct{}, n)
	out := make([]<-chan struct{}, n)
	for i := range chans {
		chans[i] = make(chan struct{}, 1)
		out[i] = chans[i]
	}
	doneCh := make(chan error, 1)
	go func() {
		defer ws.Close()
		for {
			ev, err := ws.Next()
			if err != nil {
				doneCh <- err
				return
			}
			select {
			case chans[group(ev.GetKind())] <- struct{}{}:
			default:
			}
		}
	}()
	return out, doneCh, nil
}
