package agent

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// watchSignals turns a watch into a channel that holds at most one pending "something changed",
// so bursts of changes cost one re-read. The error channel gets the watch's end.
func watchSignals(ctx context.Context, c *client.Client, model string, targets ...*pb.WatchTarget) (<-chan struct{}, <-chan error, error) {
	changed, _, done, err := watchSplit(ctx, c, model, nil, targets...)
	return changed, done, err
}

// watchSplit is watchSignals for one stream that serves two readers: events of kind apart
// signal on other, the rest on changed. One stream costs the agent one goroutine and the
// controller one subscription where two watches cost twice that (issue 16).
func watchSplit(ctx context.Context, c *client.Client, model string, apart map[string]bool, targets ...*pb.WatchTarget) (changed, other <-chan struct{}, done <-chan error, err error) {
	chans, done, err := watchGroups(ctx, c, model, 2, func(kind string) int {
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

// watchGroups is watchSplit for n readers: group says which channel an event's kind signals.
func watchGroups(ctx context.Context, c *client.Client, model string, n int, group func(kind string) int, targets ...*pb.WatchTarget) ([]<-chan struct{}, <-chan error, error) {
	w, err := c.Watch(ctx, &pb.WatchRequest{Model: model, Targets: targets})
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
		defer w.Close()
		for {
			ev, err := w.Next()
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
