package agent

import (
	"context"
	"sync"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// keysFeeds shares one WatchAuthorizedKeys stream per model between the ssh servers of a
// runner's machines (issue 16: a stream per machine cost the agent host two goroutines and
// the controller one, for each of thousands of machines). A model's stream is opened with
// the credentials of the first machine to watch and lasts while any machine of the model
// watches; when it breaks, every machine's watch ends with its error and is made again.
type keysFeeds struct {
	ctx   context.Context // the runner's: a stream outlives the machine that opened it
	mu    sync.Mutex
	feeds map[string]*keysFeed
}

// keysFeed is one model's stream and what it last said.
type keysFeed struct {
	cancel   context.CancelFunc
	keys     *pb.AuthorizedKeys // nil until the first answer
	err      error              // why the stream ended
	ended    bool
	watchers int
	changed  chan struct{} // closed and replaced at each answer and at the end
}

func newKeysFeeds(ctx context.Context) *keysFeeds {
	return &keysFeeds{ctx: ctx, feeds: map[string]*keysFeed{}}
}

// watch calls fn with the model's keys, then again after each change, until ctx ends (nil),
// fn fails, or the model's stream breaks (its error), as client.WatchAuthorizedKeys does.
func (k *keysFeeds) watch(ctx context.Context, c *client.Client, model, machine string, fn func(*pb.AuthorizedKeys) error) error {
	f := k.join(c, model, machine)
	defer k.leave(model, f)
	var seen *pb.AuthorizedKeys
	for {
		k.mu.Lock()
		keys, ended, err, changed := f.keys, f.ended, f.err, f.changed
		k.mu.Unlock()
		if keys != nil && keys != seen {
			seen = keys
			if err := fn(keys); err != nil {
				return err
			}
			continue // a change may have come while fn ran
		}
		if ended {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// join counts a watcher of model's feed, opening the stream with c's credentials if none runs.
func (k *keysFeeds) join(c *client.Client, model, machine string) *keysFeed {
	k.mu.Lock()
	defer k.mu.Unlock()
	if f := k.feeds[model]; f != nil && !f.ended {
		f.watchers++
		return f
	}
	ctx, cancel := context.WithCancel(k.ctx)
	f := &keysFeed{cancel: cancel, watchers: 1, changed: make(chan struct{})}
	k.feeds[model] = f
	go func() {
		err := c.WatchAuthorizedKeys(ctx, model, machine, func(keys *pb.AuthorizedKeys) error {
			k.mu.Lock()
			defer k.mu.Unlock()
			f.keys = keys
			close(f.changed)
			f.changed = make(chan struct{})
			return nil
		})
		if err == nil {
			err = context.Canceled // the last watcher left, or the runner stops
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		f.ended, f.err = true, err
		close(f.changed)
		if k.feeds[model] == f {
			delete(k.feeds, model)
		}
	}()
	return f
}

// leave uncounts a watcher; the last one out stops the stream.
func (k *keysFeeds) leave(model string, f *keysFeed) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if f.watchers--; f.watchers == 0 {
		f.cancel()
		if k.feeds[model] == f {
			delete(k.feeds, model)
		}
	}
}

// machineSSHAPI is what a machine's ssh server uses: the model's shared keys stream, and the
// machine's own client for the rest.
type machineSSHAPI struct {
	*client.Client
	feeds *keysFeeds
}

func (m machineSSHAPI) WatchAuthorizedKeys(ctx context.Context, model, machine string, fn func(*pb.AuthorizedKeys) error) error {
	return m.feeds.watch(ctx, m.Client, model, machine, fn)
}
