package agent

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// watchSignals turns a watch into a channel that holds at most one pending "something changed",
// so bursts of changes cost one re-read. The error channel gets the watch's end.
func watchSignals(ctx context.Context, c *client.Client, model string, targets ...*pb.WatchTarget) (<-chan struct{}, <-chan error, error) {
	w, err := c.Watch(ctx, &pb.WatchRequest{Model: model, Targets: targets})
	if err != nil {
		return nil, nil, err
	}
	changed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		defer w.Close()
		for {
			if _, err := w.Next(); err != nil {
				done <- err
				return
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	return changed, done, nil
}
