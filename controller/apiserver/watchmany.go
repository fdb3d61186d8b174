package apiserver

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/controller/state"
)

// watchAddTimeout bounds the checks of one added watch (its credentials, what it may watch):
// store reads that do not answer must not hold up the stream's other adds for ever.
const watchAddTimeout = 10 * time.Second

// WatchMany carries many agents' watches on one stream (issue 16): an agent host's thousands
// of agents cost one stream and two goroutines here, not a stream and a goroutine each. Every
// added watch is authenticated with its own agent's credentials and checked as Watch checks
// it; it keeps its agent present (status) while it lasts. The stream ends when the client
// cancels it or closes its side, or when the server stops; every watch ends with it.
func (s *statusServer) WatchMany(stream pb.StatusService_WatchManyServer) error {
	ctx := stream.Context()
	if entityFrom(ctx).IsAdmin() {
		// The admin's watches need what Watch adds for them (presence changes): one stream each.
		return apierr.Errorf(apierr.PermissionDenied, "WatchMany carries agents' watches only: use Watch")
	}
	// The header says the stream is open; each watch says it is established on its own.
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	w := &watchMany{s: s, stream: stream, ctx: ctx, watches: map[int64]*manyWatch{}, wake: make(chan struct{}, 1)}
	defer w.close()
	received := make(chan error, 1)
	// The receive loop runs apart, so that the send loop also ends on ctx (the server
	// stopping), which Recv does not see; Recv returns once the handler has.
	go func() { received <- w.receive() }()
	return w.sendLoop(received)
}

// watchMany is one WatchMany stream.
type watchMany struct {
	s      *statusServer
	stream pb.StatusService_WatchManyServer
	ctx    context.Context

	// mu guards watches and closed, and serialises the stream's sends (grpc's Send is not safe
	// for concurrent use): the receive loop sends established and refusals, the send loop
	// events and ends. It is never held while calling the hub.
	mu      sync.Mutex
	watches map[int64]*manyWatch
	closed  bool // the handler returned: nothing more is sent or added

	// readyMu guards ready, the watches with events pending or ended since the send loop last
	// looked (the hub calls markReady with its locks held: nothing else is done under it);
	// wake holds a token while ready may not be empty.
	readyMu sync.Mutex
	ready   []*manyWatch
	wake    chan struct{}
}

// manyWatch is one watch of the stream: a hub subscription and no goroutine.
type manyWatch struct {
	id         int64
	sub        *state.Subscription
	disconnect func() // releases the agent's presence; nil: none held
}

func (mw *manyWatch) release() {
	mw.sub.Close()
	if mw.disconnect != nil {
		mw.disconnect()
	}
}

// markReady queues mw for the send loop; it must not block (the hub calls it).
func (w *watchMany) markReady(mw *manyWatch) {
	w.readyMu.Lock()
	w.ready = append(w.ready, mw)
	w.readyMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a token is already there
	}
}

// receive handles the client's adds and removes in order until the client closes its side
// (nil) or the stream fails.
func (w *watchMany) receive() error {
	for {
		req, err := w.stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if req.Watch == nil {
			w.remove(req.Id)
			continue
		}
		if err := w.add(req); err != nil {
			return err
		}
	}
}

// add starts watch req.Id, replacing any watch with that id, and says whether it is
// established or refused; an error is the stream's own.
func (w *watchMany) add(req *pb.WatchManyRequest) error {
	w.remove(req.Id)
	mw, err := w.start(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		if mw != nil {
			mw.release()
		}
		return nil
	}
	if err != nil {
		return w.sendEnd(req.Id, err)
	}
	// Sent once the subscription exists, so every later change reaches the watch (as a
	// Watch's header promises), and before its first events, which need it in watches.
	if err := w.stream.Send(&pb.WatchManyEvent{Id: req.Id, Established: true}); err != nil {
		mw.release()
		return err
	}
	w.watches[req.Id] = mw
	// Events that came before it was in watches found the send loop unable to use them.
	w.markReady(mw)
	return nil
}

// start checks req as its own agent's watch and subscribes it.
func (w *watchMany) start(req *pb.WatchManyRequest) (*manyWatch, error) {
	checkCtx, cancelCheck := context.WithTimeout(w.ctx, watchAddTimeout)
	defer cancelCheck()
	// The watch's own credentials, checked as a call's would be (throttle, cache, failed
	// login log), from the stream's peer.
	md := metadata.Pairs(MetaTag, req.Tag, MetaPassword, req.Password, MetaModel, req.Watch.Model)
	e, err := w.s.auth.authenticate(metadata.NewIncomingContext(checkCtx, md))
	if err != nil {
		return nil, err
	}
	if e.IsAdmin() {
		return nil, apierr.Errorf(apierr.PermissionDenied, "WatchMany carries agents' watches only: use Watch")
	}
	uuid, keys, err := w.s.watchKeys(checkCtx, e, req.Watch)
	if err != nil {
		return nil, err
	}
	// No context of its own: the stream's end closes its every watch (close), and a context
	// per watch was most of what a watch cost the heap.
	mw := &manyWatch{id: req.Id}
	mw.sub, err = w.s.hub.SubscribeFunc(checkCtx, uuid, keys, func() { w.markReady(mw) })
	if err != nil {
		return nil, err
	}
	// As with Watch, the agent's open watch is what tells status it runs (presence.go).
	if e.Kind == "machine" || e.Kind == "unit" {
		mw.disconnect = w.s.presence.connect(uuid, e.Kind, e.ID)
	}
	return mw, nil
}

// remove ends watch id, if the stream has it; nothing is answered.
func (w *watchMany) remove(id int64) {
	w.mu.Lock()
	mw := w.watches[id]
	delete(w.watches, id)
	w.mu.Unlock()
	if mw != nil {
		mw.release()
	}
}

// sendLoop sends the events of the watches that have some, one message per watch, until the
// stream ends.
func (w *watchMany) sendLoop(received <-chan error) error {
	var batch []*manyWatch
	for {
		select {
		case <-w.ctx.Done():
			return w.ctx.Err()
		case err := <-received:
			return err
		case <-w.wake:
		}
		w.readyMu.Lock()
		batch, w.ready = w.ready, batch
		w.readyMu.Unlock()
		for i, mw := range batch {
			if err := w.flush(mw); err != nil {
				return err
			}
			batch[i] = nil // hold no watch past its turn
		}
		batch = batch[:0]
	}
}

// flush sends mw's pending events, and its end if its subscription ended.
func (w *watchMany) flush(mw *manyWatch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watches[mw.id] != mw {
		return nil // removed or replaced by the client, or not yet established (add marks it)
	}
	evs, ok := mw.sub.Take()
	if len(evs) > 0 {
		out := &pb.WatchManyEvent{Id: mw.id, Events: make([]*pb.WatchEvent, len(evs))}
		for i, ev := range evs {
			out.Events[i] = &pb.WatchEvent{Kind: ev.Kind, Id: ev.ID, Removed: ev.Removed, Revision: ev.Revision}
		}
		if err := w.stream.Send(out); err != nil {
			return err
		}
	}
	if ok {
		return nil
	}
	// Too far behind, or the model's watch failed: the agent watches again and re-reads.
	delete(w.watches, mw.id)
	mw.release()
	if err := w.ctx.Err(); err != nil {
		return err // the stream is ending: every watch ends with it
	}
	return w.sendEnd(mw.id, apierr.Errorf(apierr.Unavailable, "watch ended; watch again"))
}

// sendEnd tells the client watch id has ended (or was refused) because of err, encoded as a
// call's error would be, so that the client finds the same apierr sentinel. w.mu is held.
func (w *watchMany) sendEnd(id int64, err error) error {
	why, merr := proto.Marshal(status.Convert(apierr.ToStatus(err)).Proto())
	if merr != nil {
		return merr
	}
	return w.stream.Send(&pb.WatchManyEvent{Id: id, Ended: true, Error: why})
}

// close ends every watch of the stream, and their agents' presence, once the handler returns.
func (w *watchMany) close() {
	w.mu.Lock()
	w.closed = true
	watches := w.watches
	w.watches = nil
	w.mu.Unlock()
	for _, mw := range watches {
		mw.release()
	}
}
