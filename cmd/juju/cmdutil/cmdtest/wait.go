package cmdtest

import (
	"context"
	"sync"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

var _ cmdutil.WaitAPI = (*WaitAPI)(nil)

// WaitAPI is a fake cmdutil.WaitAPI for --wait tests: FullStatus answers the snapshots in
// turn (the last one again once they run out), and the watch reports one change after each
// read while snapshots remain, so a wait reads each snapshot exactly once, in order.
type WaitAPI struct {
	mu        sync.Mutex
	snapshots []*jujupb.FullStatusResponse
	// Watches and Patterns record the requests; Reads counts the FullStatus calls.
	Watches  []*jujupb.WatchRequest
	Patterns [][]string
	Reads    int
	events   chan struct{}
	// EndFirstWatch makes the first watch end as the controller ends one it cannot keep up.
	EndFirstWatch bool
}

// NewWaitAPI returns a fake answering snapshots.
func NewWaitAPI(snapshots ...*jujupb.FullStatusResponse) *WaitAPI {
	return &WaitAPI{snapshots: snapshots, events: make(chan struct{}, len(snapshots)+1)}
}

func (f *WaitAPI) Watch(_ context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Watches = append(f.Watches, req)
	w := &watcher{events: f.events, done: make(chan struct{})}
	if f.EndFirstWatch && len(f.Watches) == 1 {
		w.err = apierr.Errorf(apierr.Unavailable, "watch ended; watch again")
	}
	return w, nil
}

func (f *WaitAPI) FullStatus(_ context.Context, _ string, patterns []string) (*jujupb.FullStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Patterns = append(f.Patterns, patterns)
	i := min(f.Reads, len(f.snapshots)-1)
	f.Reads++
	if f.Reads < len(f.snapshots) && !(f.EndFirstWatch && f.Reads == 1) {
		f.events <- struct{}{}
	}
	return f.snapshots[i], nil
}

type watcher struct {
	events chan struct{}
	done   chan struct{}
	once   sync.Once
	err    error
}

func (w *watcher) Next() (*jujupb.WatchEvent, error) {
	if w.err != nil {
		return nil, w.err
	}
	select {
	case <-w.events:
		return &jujupb.WatchEvent{Kind: "unit"}, nil
	case <-w.done:
		return nil, context.Canceled
	}
}

func (w *watcher) Close() { w.once.Do(func() { close(w.done) }) }
