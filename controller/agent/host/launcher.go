package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/jujuclone/juju/core/fdlimit"
)

// LauncherConfig says how the controller starts its agent host.
type LauncherConfig struct {
	DataDir string
	// APIAddrs are the controller's addresses: a host whose agents know others (the
	// controller moved) is replaced.
	APIAddrs []string
	// Command is the host's command line: a binary and its arguments (jujud agents ...).
	Command []string
	Log     *slog.Logger
	// StartTimeout bounds how long a new host may take to answer (default 30 s).
	StartTimeout time.Duration
}

// Launcher is the controller's side of the agent host: it starts agents there (starting the
// host when none runs), and when the host dies it starts a new one and starts again every
// agent it had asked for. It implements the local provider's Launcher.
type Launcher struct {
	cfg    LauncherConfig
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// started holds the machine directories whose agents the host should run.
	started map[string]bool
	// up is closed while a host answers; replaced when it is gone.
	up chan struct{}
	// kept holds the connections to the host that wait for the next request (keptConns).
	kept chan *hostConn
}

// keptConns is how many connections to the host the launcher keeps between requests: as many
// as the machines the provisioner starts side by side. A connection per request cost the two
// processes a dial, an accept and a goroutine for every machine started (issue 16: about 2 %
// of each one's CPU in a deploy).
const keptConns = 16

// NewLauncher connects to the controller's agent host, starting one if none runs, and keeps
// it running until Close.
func NewLauncher(ctx context.Context, cfg LauncherConfig) (*Launcher, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("no agent host command")
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Launcher{cfg: cfg, ctx: ctx, cancel: cancel, done: make(chan struct{}), started: map[string]bool{}, up: make(chan struct{}),
		kept: make(chan *hostConn, keptConns)}
	hello, err := l.connect()
	if err != nil {
		cancel()
		return nil, err
	}
	go l.supervise(hello)
	return l, nil
}

// Close stops watching the host; the host and its agents go on (a controller restart must
// not stop any hook).
func (l *Launcher) Close() {
	l.cancel()
	<-l.done
	l.dropKept()
}

// Shutdown asks the host to stop every agent and exit, and waits until it has (or ctx ends).
func Shutdown(ctx context.Context, dataDir string) error {
	var resp response
	if err := call(ctx, dataDir, request{Op: opShutdown}, &resp); err != nil {
		if isNoHost(err) {
			return nil
		}
		return err
	}
	// The host holds its lock until its last agent has stopped.
	if err := awaitReleased(ctx, dataDir, nil); err != nil {
		return fmt.Errorf("agent host still running: %w", err)
	}
	return nil
}

// awaitReleased waits until no host holds dataDir's lock, calling waiting (when not nil) with
// how long it has waited, once a minute.
func awaitReleased(ctx context.Context, dataDir string, waiting func(time.Duration)) error {
	start, report := time.Now(), time.Minute
	for !released(dataDir) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if waited := time.Since(start); waiting != nil && waited >= report {
			waiting(waited)
			report += time.Minute
		}
	}
	return nil
}

// StartMachineAgent asks the host to run the machine agent of dir. It is remembered, so a
// host started again later runs it too.
func (l *Launcher) StartMachineAgent(dir string) error {
	l.mu.Lock()
	l.started[dir] = true
	l.mu.Unlock()
	return l.send(request{Op: opStart, Dir: dir})
}

// SetAPIAddrs gives the host's agents the controller's addresses now (members added or
// removed); a host started later gets them too.
func (l *Launcher) SetAPIAddrs(addrs []string) error {
	l.mu.Lock()
	same := slices.Equal(addrs, l.cfg.APIAddrs)
	l.cfg.APIAddrs = slices.Clone(addrs)
	l.mu.Unlock()
	if same {
		return nil
	}
	return l.send(request{Op: opSetAddrs, Addrs: addrs})
}

// setAddrs tells a host the addresses before it is marked up (connect).
func (l *Launcher) setAddrs(addrs []string) error {
	ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
	defer cancel()
	var resp response
	if err := call(ctx, l.cfg.DataDir, request{Op: opSetAddrs, Addrs: addrs}, &resp); err != nil {
		return err
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}

// CheckFiles asks the host whether it could start more agents: a *fdlimit.LimitError
// (errors.Is fdlimit.ErrTooManyOpenFiles) with the host's numbers when it is too near its
// limit of open files, for the controller to refuse new units before the host runs out.
func (l *Launcher) CheckFiles(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := l.roundTrip(ctx, request{Op: opCheckFiles})
	if err != nil {
		return fmt.Errorf("asking the agent host for its open files: %w", err)
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	if resp.FilesLimit > 0 {
		return fmt.Errorf("agent host: %w", &fdlimit.LimitError{InUse: resp.FilesInUse, Limit: resp.FilesLimit})
	}
	return nil
}

// StopTree asks the host to stop the agents of dir and below.
func (l *Launcher) StopTree(dir string) {
	dir = filepath.Clean(dir)
	l.mu.Lock()
	if l.started[dir] {
		// A machine's directory (the usual case): machines' directories do not nest, so
		// nothing else is below it, and no scan of every machine is needed (issue 16).
		delete(l.started, dir)
	} else {
		for d := range l.started {
			if within(d, dir) {
				delete(l.started, d)
			}
		}
	}
	l.mu.Unlock()
	if err := l.send(request{Op: opStopTree, Dir: dir}); err != nil {
		l.cfg.Log.Warn("agent host: stopping agents", "dir", dir, "err", err)
	}
}

// send delivers a request, waiting (up to the start timeout) for a host to answer.
func (l *Launcher) send(req request) error {
	ctx, cancel := context.WithTimeout(l.ctx, l.cfg.StartTimeout)
	defer cancel()
	l.mu.Lock()
	up := l.up
	l.mu.Unlock()
	select {
	case <-up:
	case <-ctx.Done():
		return fmt.Errorf("agent host not running: %w", ctx.Err())
	}
	resp, err := l.roundTrip(ctx, req)
	if err != nil {
		return err
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}

// roundTrip sends req on a kept connection (a new one when none waits) and reads the answer,
// then keeps the connection for the next request. A kept connection whose host has gone (it
// was replaced, or is of an earlier version, which answers one request per connection) fails
// at once, and the request goes again on a new one: every request sent this way may be
// carried out twice (starting a running agent, stopping stopped ones, giving the same
// addresses, counting files).
func (l *Launcher) roundTrip(ctx context.Context, req request) (response, error) {
	for {
		var hc *hostConn
		select {
		case hc = <-l.kept:
		default:
		}
		reused := hc != nil
		if !reused {
			conn, err := dial(ctx, l.cfg.DataDir)
			if err != nil {
				return response{}, fmt.Errorf("reaching agent host: %w", err)
			}
			hc = newHostConn(conn)
		}
		resp, err := hc.exchange(ctx, req)
		if err == nil {
			select {
			case l.kept <- hc:
			default:
				hc.Close()
			}
			return resp, nil
		}
		hc.Close()
		if !reused || ctx.Err() != nil {
			return response{}, err
		}
	}
}

// dropKept closes the kept connections: their host is gone, or the launcher is.
func (l *Launcher) dropKept() {
	for {
		select {
		case hc := <-l.kept:
			hc.Close()
		default:
			return
		}
	}
}

// connect says hello to the running host, or starts one and waits for its hello.
func (l *Launcher) connect() (net.Conn, error) {
	if conn, addrs, err := l.hello(l.ctx); err == nil {
		l.mu.Lock()
		want := l.cfg.APIAddrs
		l.mu.Unlock()
		if len(want) == 0 || slices.Equal(addrs, want) {
			l.markUp()
			return conn, nil
		}
		// A host that takes new addresses keeps its agents (and their hooks) running.
		if err := l.setAddrs(want); err == nil {
			l.markUp()
			return conn, nil
		}
		// Its agents would wait for an address nobody serves any more.
		conn.Close()
		l.cfg.Log.Warn("agent host knows other controller addresses; replacing it", "host", addrs, "controller", l.cfg.APIAddrs)
		ctx, cancel := context.WithTimeout(l.ctx, l.cfg.StartTimeout)
		err := Shutdown(ctx, l.cfg.DataDir)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	// A host that is stopping (shut down, or killed by SIGTERM) holds the lock until its last
	// agent has stopped, minutes with 100,000 of them (issue 16), and a host started meanwhile
	// would exit at once ("already running"): wait for it, without counting that wait against
	// the start timeout.
	for {
		if err := l.awaitRelease(); err != nil {
			return nil, err
		}
		exited, err := l.spawn()
		if err != nil {
			return nil, err
		}
		conn, err := l.awaitHello(exited)
		if !errors.Is(err, errLockTaken) {
			return conn, err
		}
	}
}

// errLockTaken says the host just started exited because another held the lock.
var errLockTaken = errors.New("another agent host holds the lock")

// awaitRelease waits until no host holds the data directory's lock, saying so in the log.
func (l *Launcher) awaitRelease() error {
	if released(l.cfg.DataDir) {
		return nil
	}
	l.cfg.Log.Info("agent host: waiting for the previous one to stop its agents")
	err := awaitReleased(l.ctx, l.cfg.DataDir, func(waited time.Duration) {
		l.cfg.Log.Warn("agent host: the previous one is still stopping its agents", "waited", waited.Round(time.Second))
	})
	if err != nil {
		return fmt.Errorf("waiting for the previous agent host to stop: %w", err)
	}
	return nil
}

// awaitHello waits (up to the start timeout) for the host just started to answer; exited is
// closed when that process has ended.
func (l *Launcher) awaitHello(exited <-chan struct{}) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.cfg.StartTimeout)
	defer cancel()
	hostExited := false
	for {
		conn, addrs, err := l.hello(ctx)
		if err == nil {
			l.mu.Lock()
			want := l.cfg.APIAddrs
			l.mu.Unlock()
			if len(want) > 0 && !slices.Equal(addrs, want) {
				// Started from the command line of an earlier address list.
				if err := l.setAddrs(want); err != nil {
					l.cfg.Log.Warn("agent host: giving it the controller's addresses", "err", err)
				}
			}
			l.markUp()
			return conn, nil
		}
		if hostExited {
			if !released(l.cfg.DataDir) {
				return nil, errLockTaken
			}
			return nil, fmt.Errorf("agent host exited as it started (see %s)", filepath.Join(l.cfg.DataDir, LogFile))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("agent host did not answer within %s (see %s): %w", l.cfg.StartTimeout,
				filepath.Join(l.cfg.DataDir, LogFile), err)
		case <-exited:
			// Once more: another host may answer (started by a launcher beside this one).
			hostExited, exited = true, nil
			continue
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (l *Launcher) hello(ctx context.Context) (net.Conn, []string, error) {
	conn, err := dial(ctx, l.cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var resp response
	if err := writeMsg(conn, request{Op: opHello}); err != nil {
		conn.Close()
		return nil, nil, err
	}
	if err := readMsg(bufio.NewReader(conn), &resp); err != nil {
		conn.Close()
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	l.cfg.Log.Info("agent host answers", "pid", resp.PID)
	return conn, resp.APIAddrs, nil
}

// markUp lets requests through to the host that answered.
func (l *Launcher) markUp() {
	l.mu.Lock()
	close(l.up)
	l.mu.Unlock()
}

// spawn starts a host in a session of its own, so that it outlives the controller and no
// signal meant for the controller's process group reaches it.
func (l *Launcher) spawn() (exited <-chan struct{}, err error) {
	logf, err := os.OpenFile(filepath.Join(l.cfg.DataDir, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening agent host log: %w", err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd := exec.Command(l.cfg.Command[0], l.cfg.Command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting agent host: %w", err)
	}
	l.cfg.Log.Info("agent host started", "pid", cmd.Process.Pid)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reaped while the controller lives; init reaps it after
	return done, nil
}

// supervise waits for the host to go away, then starts another and hands it every agent.
func (l *Launcher) supervise(hello net.Conn) {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for {
		gone := make(chan struct{})
		go func() { _, _ = hello.Read(make([]byte, 1)); close(gone) }()
		select {
		case <-l.ctx.Done():
			hello.Close()
			<-gone
			return
		case <-gone:
			hello.Close()
		}
		l.mu.Lock()
		l.up = make(chan struct{})
		l.mu.Unlock()
		l.dropKept()
		l.cfg.Log.Warn("agent host gone; starting another")
		for {
			conn, err := l.connect()
			if err == nil {
				hello = conn
				break
			}
			if l.ctx.Err() != nil {
				return
			}
			l.cfg.Log.Error("agent host: restarting", "err", err)
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		}
		backoff = 100 * time.Millisecond
		l.mu.Lock()
		dirs := make([]string, 0, len(l.started))
		for d := range l.started {
			dirs = append(dirs, d)
		}
		l.mu.Unlock()
		for _, d := range dirs {
			if err := l.send(request{Op: opStart, Dir: d}); err != nil {
				l.cfg.Log.Error("agent host: starting agent again", "dir", d, "err", err)
			}
		}
	}
}

func dial(ctx context.Context, dataDir string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", socketName(dataDir))
}

// call sends one request on a connection of its own.
func call(ctx context.Context, dataDir string, req request, resp *response) error {
	conn, err := dial(ctx, dataDir)
	if err != nil {
		return fmt.Errorf("reaching agent host: %w", err)
	}
	hc := newHostConn(conn)
	defer hc.Close()
	*resp, err = hc.exchange(ctx, req)
	return err
}

// hostConn is a connection to the host, which answers each request with one line.
type hostConn struct {
	net.Conn
	r *bufio.Reader
}

func newHostConn(conn net.Conn) *hostConn { return &hostConn{Conn: conn, r: bufio.NewReader(conn)} }

// exchange sends req and reads the answer, by ctx's deadline (30 s without one).
func (c *hostConn) exchange(ctx context.Context, req request) (response, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	_ = c.SetDeadline(deadline)
	var resp response
	if err := writeMsg(c.Conn, req); err != nil {
		return response{}, fmt.Errorf("asking agent host: %w", err)
	}
	if err := readMsg(c.r, &resp); err != nil {
		return response{}, fmt.Errorf("asking agent host: %w", err)
	}
	return resp, nil
}

func isNoHost(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist)
}

// released says whether no host holds the data directory's lock.
func released(dataDir string) bool {
	f, err := os.OpenFile(filepath.Join(dataDir, LockFile), os.O_RDWR, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}
