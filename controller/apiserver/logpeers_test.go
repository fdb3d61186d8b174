package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/logsink"
	"github.com/jujuclone/juju/controller/state"
)

// logMember is one API server of a controller whose members share one store and one CA, each
// with a log sink of its own, as enable-ha runs them.
type logMember struct {
	env   *testEnv
	addr  string
	cfg   Config
	srv   func() // stops the server, as a killed member
	sink  *logsink.Sink
	log   *logLines
	admin *client.Client
	unit  *client.Client // mysql/0's agent's
}

// logLines is a controller log that a test can wait on.
type logLines struct {
	mu      sync.Mutex
	text    strings.Builder
	changed chan struct{}
}

func newLogLines() *logLines { return &logLines{changed: make(chan struct{})} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.text.String(), s)
}

// waitFor waits until the log says s; the test fails after 10 s without it.
func (l *logLines) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		has, changed := strings.Contains(l.text.String(), s), l.changed
		l.mu.Unlock()
		if has {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the controller log never said %q:\n%s", s, l.text.String())
		}
	}
}

// logMembersEnv is a store with mysql/0 deployed and the CA its members share.
type logMembersEnv struct {
	*testEnv
	cert  tls.Certificate
	caPEM []byte
}

func startLogMembersEnv(t *testing.T) *logMembersEnv {
	t.Helper()
	env := startTestEnv(t)
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nbases: [ubuntu@22.04]\n", 2)
	if err := env.st.SetUnitPassword(context.Background(), env.model, "mysql/0", state.HashPassword("unit-secret")); err != nil {
		t.Fatal(err)
	}
	cert, caPEM, err := bootstrap.EnsureCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &logMembersEnv{testEnv: env, cert: cert, caPEM: caPEM}
}

// listen reserves a member's address before its server starts, so that members can name each
// other as peers.
func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// startLogMember serves a member on lis with its own log sink and peers.
func (e *logMembersEnv) startLogMember(t *testing.T, lis net.Listener, peers func(context.Context) ([]string, error)) *logMember {
	t.Helper()
	sink, err := logsink.New(filepath.Join(t.TempDir(), "logs"), logsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	lines := newLogLines()
	m := &logMember{env: e.testEnv, addr: lis.Addr().String(), sink: sink, log: lines, cfg: Config{
		State: e.st, ControllerName: "test", Cloud: "localhost", Region: "localhost",
		TLS:     &tls.Config{Certificates: []tls.Certificate{e.cert}, MinVersion: tls.VersionTLS12},
		LogSink: sink, Log: slog.New(slog.NewTextHandler(lines, nil)), Peers: peers, CACert: e.caPEM,
	}}
	m.serve(t, lis)
	dial := func(tag, password, model string) *client.Client {
		c, err := client.Dial(context.Background(), client.Config{Endpoint: m.addr, CACert: e.caPEM, Tag: tag, Password: password, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	m.admin = dial(AdminTag, "admin-secret", "")
	m.unit = dial("unit-mysql-0", "unit-secret", e.model)
	return m
}

// serve starts (or starts again) m's server on lis.
func (m *logMember) serve(t *testing.T, lis net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := m.cfg
	cfg.Context = ctx
	srv := New(cfg)
	go srv.Serve(lis)
	m.srv = func() { srv.Stop(); cancel() }
	t.Cleanup(m.srv)
}

// debugLog reads a NoTail DebugLog of m.
func (m *logMember) debugLog(t *testing.T, req *pb.DebugLogRequest) string {
	t.Helper()
	req.Model, req.NoTail = m.env.model, true
	s, err := m.admin.DebugLog(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return logMessages(readAll(t, s))
}

// next is the next record of a followed stream; the test fails after 10 s without one.
func next(t *testing.T, s *client.LogStream) (*pb.LogRecord, error) {
	t.Helper()
	type result struct {
		r   *pb.LogRecord
		err error
	}
	done := make(chan result, 1)
	go func() { r, err := s.Next(); done <- result{r, err} }()
	select {
	case res := <-done:
		return res.r, res.err
	case <-time.After(10 * time.Second):
		t.Fatal("no record followed")
		return nil, nil
	}
}

// startTwoLogMembers starts members 1 (a) and 2 (b), registered in the store as enable-ha
// does, with member 3 registered but down (its address would cost a second if it were asked);
// each finds the others through LivePeers.
func startTwoLogMembers(t *testing.T) (a, b *logMember) {
	t.Helper()
	e := startLogMembersEnv(t)
	ctx := context.Background()
	lisA, lisB := listen(t), listen(t)
	silent := silentListener(t)
	for id, addr := range map[string]string{"1": lisA.Addr().String(), "2": lisB.Addr().String(), "3": silent} {
		if err := e.st.PutMember(ctx, &storepb.ControllerMember{Id: id, ApiAddr: addr}); err != nil {
			t.Fatal(err)
		}
		if id != "3" {
			if _, err := e.st.Client().Put(ctx, state.MemberAliveKey(id), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	a = e.startLogMember(t, lisA, LivePeers(e.st, "1"))
	b = e.startLogMember(t, lisB, LivePeers(e.st, "2"))
	return a, b
}

// silentListener is the address of a process that accepts connections and never answers.
func silentListener(t *testing.T) string {
	t.Helper()
	lis := listen(t)
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return lis.Addr().String()
}

// deadAddress is an address where nothing listens.
func deadAddress(t *testing.T) string {
	t.Helper()
	lis := listen(t)
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// Records sent to either member are shown by both, merged in time order, with lines and limit
// counted over every member's records; a follow sees what is written to each member after
// the header.
func TestDebugLogShowsEveryMember(t *testing.T) {
	a, b := startTwoLogMembers(t)
	ctx := context.Background()
	if err := a.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Message: "a1", Time: 1}, {Message: "a3", Time: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := b.admin.WriteLogs(ctx, b.env.model, []*pb.LogRecord{
		{Entity: "unit-mysql-1", Message: "b2", Time: 2}, {Entity: "unit-mysql-1", Message: "b4", Time: 4, Level: "ERROR"},
	}); err != nil {
		t.Fatal(err)
	}
	own, err := a.sink.Read(ctx, a.env.model, nil, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := logMessages(own); got != "a1 a3" {
		t.Fatalf("member a's own log = %q, want a1 a3", got)
	}

	t.Run("backlog", func(t *testing.T) {
		for _, tt := range []struct {
			req  *pb.DebugLogRequest
			want string
		}{
			{&pb.DebugLogRequest{Replay: true}, "a1 b2 a3 b4"},
			{&pb.DebugLogRequest{}, "a1 b2 a3 b4"},
			{&pb.DebugLogRequest{Lines: 3}, "b2 a3 b4"},
			{&pb.DebugLogRequest{Lines: 1}, "b4"},
			{&pb.DebugLogRequest{Replay: true, Limit: 3}, "a1 b2 a3"},
			{&pb.DebugLogRequest{Lines: 3, Limit: 2}, "b2 a3"},
			{&pb.DebugLogRequest{Replay: true, Include: []string{"mysql/0"}}, "a1 a3"},
			{&pb.DebugLogRequest{Replay: true, Level: "error"}, "b4"},
		} {
			for _, m := range []*logMember{a, b} {
				if got := m.debugLog(t, copyRequest(tt.req)); got != tt.want {
					t.Errorf("%v through %s: got %q, want %q", tt.req, m.addr, got, tt.want)
				}
			}
		}
	})

	t.Run("follow", func(t *testing.T) {
		s, err := b.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: "default", Lines: 1, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// DebugLog returned once every member followed: neither record can be missed.
		if err := a.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Message: "a5"}}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 2 {
			r, err := next(t, s)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r.GetMessage())
		}
		if err := b.admin.WriteLogs(ctx, b.env.model, []*pb.LogRecord{{Message: "b6"}}); err != nil {
			t.Fatal(err)
		}
		r, err := next(t, s)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.GetMessage())
		if strings.Join(got, " ") != "b4 a5 b6" {
			t.Errorf("followed %q, want b4 a5 b6", got)
		}
		// The limit counts the records of both members.
		if _, err := next(t, s); !errors.Is(err, io.EOF) {
			t.Errorf("after the limit: %v, want the end of the stream", err)
		}
	})

	t.Run("a peer's call shows its own records", func(t *testing.T) {
		pctx := metadata.AppendToOutgoingContext(ctx, MetaLogLocal, logLocalBacklog)
		s, err := b.admin.DebugLog(pctx, &pb.DebugLogRequest{Model: "default", Replay: true, NoTail: true})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		if len(got) == 0 || !isBacklogEnd(got[len(got)-1]) {
			t.Fatalf("no backlog-end marker last: %v", got)
		}
		if msgs := logMessages(got[:len(got)-1]); msgs != "b2 b4 b6" {
			t.Errorf("a peer's call through b = %q, want b's records only", msgs)
		}
	})

	// Member 3, registered but without a heartbeat, was never asked.
	for _, m := range []*logMember{a, b} {
		if n := m.log.count("cannot reach"); n != 0 {
			t.Errorf("member %s said it could not reach a member %d times", m.addr, n)
		}
	}
}

// copyRequest copies a request, so that a table's requests are not changed by the calls.
func copyRequest(req *pb.DebugLogRequest) *pb.DebugLogRequest {
	return &pb.DebugLogRequest{Replay: req.Replay, Lines: req.Lines, Limit: req.Limit, Include: req.Include, Level: req.Level}
}

// A member that is down or does not answer costs about a second, once, and is said in the
// controller log, not to the caller; the others' records are shown.
func TestDebugLogSkipsDeadMembers(t *testing.T) {
	e := startLogMembersEnv(t)
	lisA, lisB := listen(t), listen(t)
	peersOfB := []string{lisA.Addr().String(), deadAddress(t), silentListener(t)}
	a := e.startLogMember(t, lisA, nil)
	b := e.startLogMember(t, lisB, func(context.Context) ([]string, error) { return peersOfB, nil })
	ctx := context.Background()
	if err := a.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Message: "a1", Time: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := b.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Message: "b2", Time: 2}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := b.debugLog(t, &pb.DebugLogRequest{Replay: true}); got != "a1 b2" {
		t.Errorf("through b: %q, want a1 b2", got)
	}
	if took := time.Since(start); took > peerConnectTimeout+time.Second {
		t.Errorf("two dead members cost %s", took)
	}
	if n := b.log.count("cannot reach"); n != 2 {
		t.Errorf("b said %d times that it could not reach a member, want once for each dead one:\n%s", n, b.log.text.String())
	}
}

// A member that goes away during a follow is followed again when it is back; meanwhile the
// others' records keep coming.
func TestDebugLogFollowsAMemberThatComesBack(t *testing.T) {
	e := startLogMembersEnv(t)
	lisA, lisB := listen(t), listen(t)
	addrA := lisA.Addr().String()
	a := e.startLogMember(t, lisA, nil)
	b := e.startLogMember(t, lisB, func(context.Context) ([]string, error) { return []string{addrA}, nil })
	ctx := context.Background()
	s, err := b.admin.DebugLog(ctx, &pb.DebugLogRequest{Model: "default", Lines: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect := func(want string) {
		t.Helper()
		r, err := next(t, s)
		if err != nil || r.GetMessage() != want {
			t.Fatalf("followed %v %v, want %s", r, err, want)
		}
	}

	a.srv()
	b.log.waitFor(t, "lost a controller member's records")
	if err := b.unit.WriteLogs(ctx, "", []*pb.LogRecord{{Message: "b1"}}); err != nil {
		t.Fatal(err)
	}
	expect("b1")

	lis, err := net.Listen("tcp", addrA)
	if err != nil {
		t.Fatal(err)
	}
	a.serve(t, lis)
	b.log.waitFor(t, "follows a controller member again")
	if err := a.admin.WriteLogs(ctx, e.model, []*pb.LogRecord{{Message: "a2"}}); err != nil {
		t.Fatal(err)
	}
	expect("a2")
}
