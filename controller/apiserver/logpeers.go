package apiserver

// juju debug-log on a controller of several members.
//
// Each member keeps the model logs that the agents connected to it sent it (logsink), so no
// member holds the whole log. The member a caller's DebugLog reaches answers it from every
// member: it opens the same DebugLog on each of the others (Config.Peers), with the caller's own
// credentials, which the peer checks as usual, and MetaLogLocal, which tells the peer to answer
// from its own log only (so a call fans out once, never in a loop) and to mark the end of its
// backlog with a record of module backlogEndModule. The backlogs are merged by time, the limit
// and lines counted over the merge; then each member's new records are sent as they come. A
// member that cannot be reached within about a second is left out, said once in the controller
// log; while the call follows, a lost member is dialled again with backoff.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/logsink"
	"github.com/jujuclone/juju/controller/state"
)

// MetaLogLocal marks a DebugLog call that one member makes to another: the peer answers from its
// own log only. Its value says what the caller wants first: logLocalBacklog or logLocalFollow.
const MetaLogLocal = "x-juju-log-local"

const (
	// logLocalBacklog: the backlog asked for, the backlog-end marker, then (unless no_tail) the
	// follow.
	logLocalBacklog = "1"
	// logLocalFollow: the marker at once, then the follow; for a peer stream opened again after
	// it failed, whose backlog was sent already.
	logLocalFollow = "follow"
)

// backlogEndModule is the module of the record that ends a peer's backlog. It has no entity,
// which no stored record lacks (WriteLogs fills in the caller's), and never reaches a caller.
const backlogEndModule = "juju.apiserver.backlog-end"

func backlogEnd() *pb.LogRecord { return &pb.LogRecord{Module: backlogEndModule} }

func isBacklogEnd(r *pb.LogRecord) bool {
	return r.GetEntity() == "" && r.GetModule() == backlogEndModule
}

// logLocalMode is the MetaLogLocal of the call ("" for a caller's own DebugLog).
func logLocalMode(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get(MetaLogLocal)
	switch {
	case len(v) == 0:
		return ""
	case v[0] == logLocalFollow:
		return logLocalFollow
	}
	return logLocalBacklog
}

const (
	// peerConnectTimeout bounds reaching a peer (TCP and TLS) and listing the peers: a dead
	// member delays the caller's DebugLog by at most this much.
	peerConnectTimeout = time.Second
	// peerOpenTimeout bounds a peer's answer once reached: its login and its follow in place.
	peerOpenTimeout = 3 * time.Second
	// A peer stream that fails during the follow is opened again after peerRetryMin, doubling
	// up to peerRetryMax while it keeps failing.
	peerRetryMin = 250 * time.Millisecond
	peerRetryMax = 5 * time.Second
)

// LivePeers is the Config.Peers of controller member memberID: the API addresses of the other
// members whose heartbeat is live, read from the store at each call.
func LivePeers(st *state.State, memberID string) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		members, err := st.Members(ctx)
		if err != nil {
			return nil, err
		}
		var addrs []string
		for _, m := range members {
			if m.Alive && m.GetId() != memberID && m.GetApiAddr() != "" {
				addrs = append(addrs, m.GetApiAddr())
			}
		}
		return addrs, nil
	}
}

// peers are the other members to ask for their records, with the TLS to reach them; none when
// this member has no peers, or when they cannot be listed (said in the controller log: the
// caller gets this member's records rather than an error).
func (s *logServer) peers(ctx context.Context) ([]string, *tls.Config) {
	if s.cfg.Peers == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, peerConnectTimeout)
	defer cancel()
	addrs, err := s.cfg.Peers(ctx)
	if err != nil {
		s.cfg.Log.Warn("debug-log shows this member's records only: cannot list the other controller members", "err", err)
		return nil, nil
	}
	if len(addrs) == 0 {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.cfg.CACert) {
		s.cfg.Log.Error("debug-log shows this member's records only: no valid CA certificate to reach the other controller members")
		return nil, nil
	}
	return addrs, &tls.Config{RootCAs: pool, ServerName: client.ServerName, MinVersion: tls.VersionTLS12}
}

// logSender sends records to a DebugLog caller, counting them against the request's limit:
// errLimit once it is reached.
type logSender struct {
	stream      pb.LogService_DebugLogServer
	sent, limit int
}

func (l *logSender) send(r *pb.LogRecord) error {
	if err := l.stream.Send(r); err != nil {
		return err
	}
	if l.sent++; l.limit > 0 && l.sent >= l.limit {
		return errLimit
	}
	return nil
}

// debugLogAll answers a caller's DebugLog from this member's log and its peers'. The request is
// valid and f is its filter; the header is sent once every reachable member follows.
func (s *logServer) debugLogAll(ctx context.Context, req *pb.DebugLogRequest, uuid string, f *logsink.Filter, sink *logsink.Sink,
	peers []string, tlsCfg *tls.Config, stream pb.LogService_DebugLogServer) error {
	// The peers' goroutines end (and close their connections) before the call does.
	var following sync.WaitGroup
	defer following.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	preq := proto.CloneOf(req)
	preq.Model = uuid // the model this member resolved, whatever the caller named
	opened := make([]*peerStream, len(peers))
	openErrs := make([]error, len(peers))
	var opening sync.WaitGroup
	for i, addr := range peers {
		opening.Go(func() {
			opened[i], openErrs[i] = openPeer(ctx, tlsCfg, addr, forwardedCredentials(ctx, logLocalBacklog), preq)
		})
	}
	backlog, sub, err := sink.Tail(uuid, f, !req.GetNoTail())
	opening.Wait()
	defer func() {
		for _, p := range opened {
			p.close()
		}
	}()
	for i, err := range openErrs {
		if err != nil {
			s.cfg.Log.Warn("debug-log leaves out the records of a controller member it cannot reach", "member", peers[i], "err", err)
		}
	}
	if err != nil {
		return err
	}
	defer backlog.Close()
	if sub != nil {
		defer sub.Close()
	}
	if err := stream.SendHeader(nil); err != nil {
		return err
	}

	// The backlog: this member's first, so that it wins ties.
	out := &logSender{stream: stream, limit: int(req.GetLimit())}
	var sources []func() (*pb.LogRecord, error)
	if req.GetReplay() {
		next, stop := iter.Pull2(backlogRecords(ctx, backlog, f))
		defer stop()
		sources = append(sources, func() (*pb.LogRecord, error) {
			r, err, _ := next()
			return r, err
		})
	} else {
		recs, err := backlog.Last(ctx, f, int(req.GetLines()))
		if err != nil {
			return err
		}
		sources = append(sources, func() (*pb.LogRecord, error) {
			if len(recs) == 0 {
				return nil, nil
			}
			r := recs[0]
			recs = recs[1:]
			return r, nil
		})
	}
	for _, p := range opened {
		if p != nil {
			sources = append(sources, p.nextBacklog)
		}
	}
	if req.GetReplay() {
		err = mergeByTime(sources, out.send)
	} else {
		// Each member sent its last lines; the last lines of all of them are among those.
		var merged []*pb.LogRecord
		err = mergeByTime(sources, func(r *pb.LogRecord) error { merged = append(merged, r); return nil })
		lines := int(req.GetLines())
		if lines <= 0 {
			lines = logsink.DefaultLines
		}
		for _, r := range merged[max(0, len(merged)-lines):] {
			if err != nil {
				break
			}
			err = out.send(r)
		}
	}
	backlog.Close()
	if errors.Is(err, errLimit) {
		return nil
	}
	if err != nil || sub == nil {
		return err
	}

	// The follow: every member's new records as they come.
	fromPeers := make(chan *pb.LogRecord)
	freq := proto.CloneOf(preq)
	freq.Replay, freq.Lines, freq.Limit = false, 0, 0 // this member counts the limit
	for i, addr := range peers {
		p := opened[i]
		opened[i] = nil // the follower closes it
		if p == nil && permanent(openErrs[i]) {
			continue
		}
		following.Go(func() { s.followPeer(ctx, tlsCfg, addr, p, freq, fromPeers) })
	}
	return s.follow(ctx, out, sub.Records(), fromPeers)
}

// backlogRecords yields the matching records of b, then the error that ended the reading, if
// any.
func backlogRecords(ctx context.Context, b *logsink.Backlog, f *logsink.Filter) iter.Seq2[*pb.LogRecord, error] {
	stopped := errors.New("stopped")
	return func(yield func(*pb.LogRecord, error) bool) {
		err := b.Each(ctx, f, func(r *pb.LogRecord) error {
			if !yield(r, nil) {
				return stopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopped) {
			yield(nil, err)
		}
	}
}

// mergeByTime calls emit with the records of every source, earliest first; each source's own
// order is kept (agents may stamp records out of order) and ties go to the earlier source. A
// source returns nil when it has no more. It stops at the first error of a source or of emit.
func mergeByTime(sources []func() (*pb.LogRecord, error), emit func(*pb.LogRecord) error) error {
	heads := make([]*pb.LogRecord, len(sources))
	for i, next := range sources {
		r, err := next()
		if err != nil {
			return err
		}
		heads[i] = r
	}
	for {
		first := -1
		for i, h := range heads {
			if h != nil && (first < 0 || h.GetTime() < heads[first].GetTime()) {
				first = i
			}
		}
		if first < 0 {
			return nil
		}
		if err := emit(heads[first]); err != nil {
			return err
		}
		r, err := sources[first]()
		if err != nil {
			return err
		}
		heads[first] = r
	}
}

// forwardedCredentials are the caller's credentials, for a peer to check, and the marker that
// keeps the peer to its own log.
func forwardedCredentials(ctx context.Context, mode string) metadata.MD {
	in, _ := metadata.FromIncomingContext(ctx)
	out := metadata.Pairs(MetaLogLocal, mode)
	for _, k := range []string{MetaTag, MetaPassword, MetaModel} {
		if v := in.Get(k); len(v) > 0 {
			out.Set(k, v[0])
		}
	}
	return out
}

// peerStream is a DebugLog of one peer, which that peer answers from its own log.
type peerStream struct {
	conn   *grpc.ClientConn
	stream pb.LogService_DebugLogClient
	cancel context.CancelFunc
	once   sync.Once

	backlogDone bool
	ended       bool  // the peer ended the stream (its backlog with no_tail, or the limit)
	err         error // the stream failed
}

// openPeer calls DebugLog on the peer at addr and waits for its header, so that the peer
// follows its log when it returns. Reaching the peer is bounded by peerConnectTimeout, its
// answer by peerOpenTimeout; the stream then lasts as long as ctx.
func openPeer(ctx context.Context, tlsCfg *tls.Config, addr string, md metadata.MD, req *pb.DebugLogRequest) (*peerStream, error) {
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: peerConnectTimeout}
			return d.DialContext(ctx, "tcp", addr)
		}),
		// The TLS handshake too: a member that accepts connections but does not answer.
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: peerConnectTimeout}),
		// A peer that goes silent mid-follow is noticed and dialled again (the server allows
		// pings every 10 s).
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, md))
	p := &peerStream{conn: conn, cancel: cancel}
	timer := time.AfterFunc(peerOpenTimeout, cancel)
	p.stream, err = pb.NewLogServiceClient(conn).DebugLog(ctx, req)
	if err == nil {
		var hdr metadata.MD
		if hdr, err = p.stream.Header(); err == nil && hdr == nil {
			// Ended without a header: Recv gives its status.
			if _, err = p.stream.Recv(); err == nil || errors.Is(err, io.EOF) {
				err = errors.New("log stream ended before its header")
			}
		}
	}
	if !timer.Stop() {
		err = fmt.Errorf("no answer within %s", peerOpenTimeout)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("opening its log stream: %w", err)
	}
	return p, nil
}

// close ends the stream and its connection; a nil stream has none.
func (p *peerStream) close() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		p.cancel()
		p.conn.Close()
	})
}

// nextBacklog is the peer's next backlog record, nil once its backlog is over: at its marker, at
// the end of its stream, or when the stream fails (kept for the follow, which opens it again).
func (p *peerStream) nextBacklog() (*pb.LogRecord, error) {
	if p.backlogDone {
		return nil, nil
	}
	r, err := p.stream.Recv()
	switch {
	case errors.Is(err, io.EOF):
		p.ended = true
	case err != nil:
		p.err = err
	case !isBacklogEnd(r):
		return r, nil
	}
	p.backlogDone = true
	return nil, nil
}

// forward hands the peer's records to out until the stream ends (io.EOF) or fails.
func (p *peerStream) forward(ctx context.Context, out chan<- *pb.LogRecord) error {
	if p.ended {
		return io.EOF
	}
	if p.err != nil {
		return p.err
	}
	for {
		r, err := p.stream.Recv()
		if err != nil {
			return err
		}
		if isBacklogEnd(r) {
			continue
		}
		select {
		case out <- r:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// permanent reports whether a peer's refusal would not change by asking again: the caller's
// credentials, its request or the peer's version.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.NotFound, codes.Unimplemented:
		return true
	}
	return false
}

// followPeer forwards the records of the peer at addr to out until ctx ends, opening its stream
// again with backoff whenever it fails. p is the stream opened for the backlog (nil when the
// peer could not be reached then, which was said already).
func (s *logServer) followPeer(ctx context.Context, tlsCfg *tls.Config, addr string, p *peerStream, req *pb.DebugLogRequest, out chan<- *pb.LogRecord) {
	lost := p == nil
	delay := peerRetryMin
	for {
		if p != nil {
			err := p.forward(ctx, out)
			p.close()
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return
			}
			if permanent(err) {
				s.cfg.Log.Warn("debug-log stops following a controller member", "member", addr, "err", err)
				return
			}
			if !lost {
				s.cfg.Log.Warn("debug-log lost a controller member's records; trying again", "member", addr, "err", err)
				lost = true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, peerRetryMax)
		var err error
		if p, err = openPeer(ctx, tlsCfg, addr, forwardedCredentials(ctx, logLocalFollow), req); err != nil {
			if permanent(err) {
				s.cfg.Log.Warn("debug-log stops following a controller member", "member", addr, "err", err)
				return
			}
			continue
		}
		s.cfg.Log.Info("debug-log follows a controller member again", "member", addr)
		lost, delay = false, peerRetryMin
	}
}

var errShuttingDown = apierr.Errorf(apierr.Unavailable, "controller shutting down")

// follow sends the records of local and of peers (nil: none) until ctx ends, the limit is
// reached or the controller shuts down.
func (s *logServer) follow(ctx context.Context, out *logSender, local <-chan *pb.LogRecord, peers <-chan *pb.LogRecord) error {
	shutdown := context.Background().Done()
	if s.cfg.Context != nil {
		shutdown = s.cfg.Context.Done()
	}
	for {
		var r *pb.LogRecord
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-shutdown:
			return errShuttingDown
		case rec, ok := <-local:
			if !ok {
				return errShuttingDown
			}
			r = rec
		case r = <-peers:
		}
		if err := out.send(r); err != nil {
			if errors.Is(err, errLimit) {
				return nil
			}
			return err
		}
	}
}
