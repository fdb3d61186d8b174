package hooktool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RequestTimeout bounds the Context calls of one tool run.
const RequestTimeout = 30 * time.Second

// maxRequest bounds what a client may send (arguments and a relation-set or state-set --file).
const maxRequest = 16 << 20

// request is what a tool sends: one JSON value per connection, answered by one response.
type request struct {
	ContextID string   `json:"context_id"`
	Tool      string   `json:"tool"`
	Args      []string `json:"args"`
	// File is the --file of relation-set or state-set, read by the client so that a relative path means the
	// hook's working directory and "-" the hook's stdin.
	File []byte `json:"file,omitempty"`
}

type response struct {
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
	Code   int    `json:"code"`
}

// SocketAddr returns a fresh abstract socket address for a server of name (a unit, or the
// agents of a process). Abstract names escape the 108-byte limit of socket paths under deep
// unit directories and vanish with the process; the random part keeps servers of the same name
// apart.
func SocketAddr(unitName string) string {
	name := strings.ReplaceAll(unitName, "/", "-")
	if len(name) > 64 {
		name = name[:64]
	}
	return "@jujud-" + name + "-" + randomHex(8)
}

// NewContextID returns an unguessable id for Register: anyone on the host can reach an abstract
// socket, but only the hook's own environment holds its id.
func NewContextID() string {
	return randomHex(16)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// Server answers the hook tools of the unit agents of a process: one listener for all of them,
// each running hook's tools told apart by their context id (an idle unit costs the server
// nothing, issue 16).
type Server struct {
	ln        net.Listener
	timeout   time.Duration
	mu        sync.Mutex
	contexts  map[string]registered
	closing   chan struct{}
	closeOnce sync.Once
	// only is the one uid whose processes may call (OnlyFrom); -1: each context's own rule.
	only atomic.Int64
}

// registered is a running hook's context and the uid its tools must run as (-1: this
// process's uid or root).
type registered struct {
	c    Context
	only int64
}

// NewServer listens on a Unix socket: an abstract address ("@name", see SocketAddr) or a path
// (a stale socket file there is replaced).
func NewServer(socketAddr string) (*Server, error) {
	if !strings.HasPrefix(socketAddr, "@") {
		if fi, err := os.Lstat(socketAddr); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(socketAddr)
		}
	}
	ln, err := net.Listen("unix", socketAddr)
	if err != nil {
		return nil, fmt.Errorf("listening for hook tools: %w", err)
	}
	s := &Server{ln: ln, timeout: RequestTimeout, contexts: map[string]registered{}, closing: make(chan struct{})}
	s.only.Store(-1)
	return s, nil
}

// OnlyFrom makes the server answer processes of uid alone: the machine's own uid, when its
// hooks run as one. Every other caller is refused, root and this process's own uid included:
// nothing but the machine's hooks has a reason to call, and a context id copied out of a hook's
// environment is then worth nothing to another machine's processes.
func (s *Server) OnlyFrom(uid int) { s.only.Store(int64(uid)) }

// Addr is the address to pass to hooks as JUJU_AGENT_SOCKET.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Register makes c answer the tools of the hook started with JUJU_CONTEXT_ID=id.
func (s *Server) Register(id string, c Context) { s.RegisterAs(id, c, -1) }

// RegisterAs is Register for a hook whose processes run as uid (its machine's own): its tools
// are answered for callers of that uid alone, neither root nor this process's uid, so that
// one server serves the units of machines with uids of their own and of none. A negative uid
// is Register's rule: this process's uid or root.
func (s *Server) RegisterAs(id string, c Context, uid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contexts[id] = registered{c: c, only: int64(max(uid, -1))}
}

// Registered counts the running hooks' contexts.
func (s *Server) Registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.contexts)
}

// Unregister ends id's hook: its tools (and any process it left behind) are refused from now on.
func (s *Server) Unregister(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.contexts, id)
}

func (s *Server) lookup(id string) (registered, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.contexts[id]
	return r, ok
}

// Close stops the server; Serve returns once running requests end (their Context calls are
// cancelled).
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closing)
		err = s.ln.Close()
	})
	return err
}

// Serve answers connections, each in its own goroutine, until ctx ends or Close is called
// (either closes the server).
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.closing:
		}
		cancel()
		_ = s.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closing:
				return nil
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			time.Sleep(50 * time.Millisecond) // transient (out of descriptors): retry
			continue
		}
		wg.Go(func() { s.handle(ctx, conn) })
	}
}

// handle answers one connection: one request, one response, all within the deadline.
func (s *Server) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(s.timeout + 5*time.Second))
	resp := s.answer(ctx, conn)
	_ = json.NewEncoder(conn).Encode(resp)
}

func (s *Server) answer(ctx context.Context, conn net.Conn) (resp response) {
	fail := func(format string, a ...any) response {
		return response{Stderr: fmt.Appendf(nil, "ERROR "+format+"\n", a...), Code: 1}
	}
	// A panicking Context must not take the unit agent down with it.
	defer func() {
		if r := recover(); r != nil {
			resp = fail("internal error in the unit agent: %v", r)
		}
	}()
	// The request is read before the caller is judged, so that a refused tool reads why
	// rather than a broken pipe.
	var req request
	decodeErr := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&req)
	reg, ok := s.lookup(req.ContextID)
	only := s.only.Load()
	if only < 0 && ok {
		only = reg.only // the hook's machine's uid, when it has one
	}
	// An id no hook holds is refused below whoever calls: a process a hook left behind
	// learns that its hook ended, whatever its uid.
	if ok || only >= 0 {
		if err := checkPeer(conn, only); err != nil {
			return fail("permission denied: %v", err)
		}
	}
	if decodeErr != nil {
		return fail("reading the hook tool's request: %v", decodeErr)
	}
	if !ok {
		return fail("no running hook has context id %q: hook tools work only while their hook runs", req.ContextID)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	stdout, stderr, code := runTool(ctx, reg.c, req.Tool, req.Args, req.File)
	return response{Stdout: stdout, Stderr: stderr, Code: code}
}
