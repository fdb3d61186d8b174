package agent

import (
	"context"
	"errors"
	"fmt"

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

// follow calls handle now and after every change signal until ctx ends or handle returns
// errStop (nil), or the watch ends (an error, so the runner restarts the agent with a fresh
// watch).
func follow(ctx context.Context, who string, changed <-chan struct{}, done <-chan error, handle func(context.Context) error) error {
	for {
		if err := handle(ctx); errors.Is(err, errStop) {
			return nil
		} else if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%s: watch ended: %w", who, err)
		case <-changed:
		}
	}
}
