package agent

import (
	"context"
	"sync"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// watchMux carries the watches of every agent of a runner on one WatchMany stream (issue 16):
// a stream per watch cost the agent host three goroutines and the controller one, with
// their grpc state, for each of thousands of agents. The stream is opened by the first agent
// to watch, lives as long as the runner, and when it breaks every watch on it ends as a
// broken Watch would (its agent restarts and watches again, which opens the next stream).
type watchMux struct {
	ctx    context.Context // the runner's: the stream outlives the agent that opened it
	mu     sync.Mutex
	stream *muxStream // nil until the first watch, and after the stream broke
	nextID int64
}

type muxStream struct {
	ws      *client.WatchStream
	watches map[int64]*muxWatch // guarded by the mux's mu; nil once the stream broke
}

// muxWatch is one agent's watch: each event signals the channel its kind's group names.
type muxWatch struct {
	group       func(kind string) int
	chans       []chan struct{}
	established chan error // nil when the controller has it, or why it refused it
	done        chan error
}

func newWatchMux(ctx context.Context) *watchMux { return &watchMux{ctx: ctx} }

// watch adds a watch of targets made as c's agent and waits until it is established: every
// change after watch returns is signalled. It ends (done) when ctx does (context.Canceled),
// or when the controller ends it or the stream breaks (the error).
func (m *watchMux) watch(ctx context.Context, c *client.Client, model string, n int, group func(kind string) int, targets ...*pb.WatchTarget) ([]<-chan struct{}, <-chan error, error) {
	w := &muxWatch{group: group, chans: make([]chan struct{}, n), established: make(chan error, 1), done: make(chan error, 1)}
	out := make([]<-chan struct{}, n)
	for i := range w.chans {
		w.chans[i] = make(chan struct{}, 1)
		out[i] = w.chans[i]
	}
	s, id, err := m.register(c, w)
	if err != nil {
		return nil, nil, err
	}
	if err := s.ws.Add(id, c, &pb.WatchRequest{Model: model, Targets: targets}); err != nil {
		m.remove(s, id)
		return nil, nil, err
	}
	select {
	case err := <-w.established:
		if err != nil {
			return nil, nil, err
		}
	case <-ctx.Done():
		m.remove(s, id)
		return nil, nil, ctx.Err()
	}
	context.AfterFunc(ctx, func() {
		m.remove(s, id)
		select {
		case w.done <- context.Canceled:
		default:
		}
	})
	return out, w.done, nil
}

// register gives w an id on the current stream, opening one with c's credentials if needed.
func (m *watchMux) register(c *client.Client, w *muxWatch) (*muxStream, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stream == nil {
		ws, err := c.WatchMany(m.ctx)
		if err != nil {
			return nil, 0, err
		}
		m.stream = &muxStream{ws: ws, watches: map[int64]*muxWatch{}}
		go m.receive(m.stream)
	}
	m.nextID++
	m.stream.watches[m.nextID] = w
	return m.stream, m.nextID, nil
}

// remove ends watch id on s, telling the controller when the stream still runs.
func (m *watchMux) remove(s *muxStream, id int64) {
	m.mu.Lock()
	_, ok := s.watches[id]
	delete(s.watches, id)
	m.mu.Unlock()
	if ok {
		_ = s.ws.Remove(id) // a broken stream ends the watch anyway
	}
}

// receive hands each watch its news until the stream breaks, then ends every watch on it.
func (m *watchMux) receive(s *muxStream) {
	for {
		ev, err := s.ws.Recv()
		if err != nil {
			m.mu.Lock()
			if m.stream == s {
				m.stream = nil
			}
			watches := s.watches
			s.watches = nil
			m.mu.Unlock()
			s.ws.Close()
			for _, w := range watches {
				w.end(err)
			}
			return
		}
		m.mu.Lock()
		w := s.watches[ev.GetId()]
		if ev.GetEnded() {
			delete(s.watches, ev.GetId())
		}
		m.mu.Unlock()
		if w == nil {
			continue // removed meanwhile
		}
		if ev.GetEstablished() {
			w.established <- nil
		}
		for _, e := range ev.GetEvents() {
			select {
			case w.chans[w.group(e.GetKind())] <- struct{}{}:
			default:
			}
		}
		if ev.GetEnded() {
			w.end(s.ws.WatchEndError(ev))
		}
	}
}

// end tells the watch's agent why it ended, whether it still waits for its establishment
// or already watches.
func (w *muxWatch) end(err error) {
	select {
	case w.established <- err:
	default:
	}
	select {
	case w.done <- err:
	default:
	}
}
