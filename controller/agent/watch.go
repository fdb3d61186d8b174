package agent

import (
	"context"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// signals turns a watch made as c's agent into a channel that holds at most one pending
// "something changed", so bursts of changes cost one re-read. The error channel gets the
// watch's end.
func (m *watchMux) signals(ctx context.Context, c *client.Client, model string, targets ...*pb.WatchTarget) (<-chan struct{}, <-chan error, error) {
	changed, _, done, err := m.split(ctx, c, model, nil, targets...)
	return changed, done, err
}

// split is signals for one watch that serves two readers: events of kind apart signal on
// other, the rest on changed. One watch costs the controller one subscription where two
// cost twice that (issue 16).
func (m *watchMux) split(ctx context.Context, c *client.Client, model string, apart map[string]bool, targets ...*pb.WatchTarget) (changed, other <-chan struct{}, done <-chan error, err error) {
	chans, done, err := m.watch(ctx, c, model, 2, func(kind string) int {
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
