package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// helperHostEnv names the data directory when this test binary runs as an agent host: the
// launcher's tests start real host processes, as jujud does with "jujud agents".
const helperHostEnv = "JUJU_TEST_AGENT_HOST_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperHostEnv); dir != "" {
		os.Exit(runHelperHost(dir))
	}
	os.Exit(m.Run())
}

// runHelperHost is "jujud agents" in short: serve until SIGTERM; another host running is no
// failure.
func runHelperHost(dir string) int {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err = Serve(ctx, Config{DataDir: dir, APIAddrs: []string{"127.0.0.1:1"}, CACert: ca, Log: quiet()})
	if errors.Is(err, ErrRunning) {
		fmt.Fprintln(os.Stderr, "agent host already running; leaving it be")
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// logLines is a slog handler's output, for a test to wait for a line.
type logLines struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *logLines) await(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.Contains(line, substr) {
				l.mu.Unlock()
				return
			}
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-deadline:
			t.Fatalf("no log line with %q", substr)
		}
	}
}

// A host that is still stopping its agents holds the lock with its socket closed; a host
// started then would exit at once. The launcher waits for the lock, however long past its
// start timeout that takes, and then starts the new host (issue 16: at 100,000 units the old
// host took minutes, and every start until then failed after 30 s).
func TestLauncherWaitsForTheStoppingHost(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), testCA(t), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperHostEnv, dir)
	old, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := syscall.Flock(int(old.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	logs := &logLines{added: make(chan struct{}, 1)}
	const startTimeout = 500 * time.Millisecond
	type result struct {
		l   *Launcher
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := NewLauncher(context.Background(), LauncherConfig{
			DataDir: dir, Command: []string{os.Args[0], "-test.run=^$"}, StartTimeout: startTimeout,
			Log: slog.New(slog.NewTextHandler(logs, nil)),
		})
		got <- result{l, err}
	}()
	logs.await(t, "waiting for the previous one to stop its agents")
	// Longer than the start timeout: the wait for the old host is not bounded by it.
	select {
	case r := <-got:
		t.Fatalf("the launcher returned while the old host held the lock: %v", r.err)
	case <-time.After(4 * startTimeout):
	}
	if err := old.Close(); err != nil { // the old host's last agent stopped
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no launcher 30 s after the old host went")
	}
	if r.err != nil {
		t.Fatalf("launcher: %v", r.err)
	}
	defer func() {
		r.l.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := Shutdown(ctx, dir); err != nil {
			t.Error(err)
		}
	}()
	if err := r.l.CheckFiles(context.Background()); err != nil {
		t.Errorf("the new host does not answer: %v", err)
	}
	if released(dir) {
		t.Error("the new host holds no lock")
	}
}

// A host that exits as it starts, with nobody holding the lock, is an error at once (not
// "did not answer" after the start timeout).
func TestLauncherReportsAHostThatExits(t *testing.T) {
	dir := t.TempDir()
	_, err := NewLauncher(context.Background(), LauncherConfig{
		DataDir: dir, Command: []string{"/bin/false"}, StartTimeout: time.Minute, Log: quiet(),
	})
	if err == nil || !strings.Contains(err.Error(), "agent host exited as it started (see "+filepath.Join(dir, LogFile)+")") {
		t.Fatalf("launcher: %v", err)
	}
}

// fakeHost answers the launcher on dir's socket as a host would, counting the connections it
// accepts; onePerConn answers one request per connection and closes it, as hosts before kept
// connections did (one may still run beside a newer controller).
func fakeHost(t *testing.T, dir string, onePerConn bool) (accepted *atomic.Int64) {
	t.Helper()
	lis, err := net.Listen("unix", socketName(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	accepted = new(atomic.Int64)
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					var req request
					if readMsg(r, &req) != nil {
						return
					}
					if writeMsg(conn, response{PID: 1}) != nil {
						return
					}
					if req.Op == opHello {
						_, _ = conn.Read(make([]byte, 1))
						return
					}
					if onePerConn {
						return
					}
				}
			}()
		}
	}()
	return accepted
}

// Requests one after another go on one kept connection (besides the hello held open); to a
// host that answers one request per connection, each goes on a new one, and none fails.
func TestLauncherKeepsConnections(t *testing.T) {
	for _, onePerConn := range []bool{false, true} {
		dir := t.TempDir()
		accepted := fakeHost(t, dir, onePerConn)
		l, err := NewLauncher(context.Background(), LauncherConfig{DataDir: dir, Command: []string{"/nonexistent"}, Log: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		const requests = 10
		for i := range requests {
			if err := l.CheckFiles(context.Background()); err != nil {
				t.Fatalf("one request per connection %v: request %d: %v", onePerConn, i, err)
			}
		}
		want := int64(2)
		if onePerConn {
			want = 1 + requests
		}
		if got := accepted.Load(); got != want {
			t.Errorf("one request per connection %v: %d connections for a hello and %d requests, want %d", onePerConn, got, requests, want)
		}
		l.Close()
	}
}

// A connection the launcher keeps open between requests does not hold up the host's stop.
func TestHostStopsWithAKeptConnection(t *testing.T) {
	dir := t.TempDir()
	done, serveErr := serve(t, dir)
	l, err := NewLauncher(context.Background(), LauncherConfig{DataDir: dir, Command: []string{"/nonexistent"}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.CheckFiles(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(l.kept) != 1 {
		t.Fatalf("%d connections kept after a request, want 1", len(l.kept))
	}
	shutdownAndWait(t, dir, done, serveErr, "with a kept connection open")
}
