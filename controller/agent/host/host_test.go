package host

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/core/fdlimit"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// serve runs a host for dir in this process until the test ends or it is shut down; done is
// closed when Serve returned, with its error in *err.
func serve(t *testing.T, dir string) (done <-chan struct{}, err *error) {
	t.Helper()
	return serveWith(t, dir, agent.RunnerConfig{})
}

// serveWith is serve with the runner's configuration rc.
func serveWith(t *testing.T, dir string, rc agent.RunnerConfig) (done <-chan struct{}, err *error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	closed, serveErr := make(chan struct{}), new(error)
	ca := testCA(t)
	go func() {
		*serveErr = Serve(ctx, Config{DataDir: dir, APIAddrs: []string{"127.0.0.1:1"}, CACert: ca, Runner: rc, Log: quiet()})
		close(closed)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Error("agent host did not stop")
		}
	})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	for {
		if conn, err := dial(ctx2, dir); err == nil {
			conn.Close()
			return closed, serveErr
		}
		select {
		case <-closed:
			t.Fatalf("agent host stopped: %v", *serveErr)
		case <-ctx2.Done():
			t.Fatal("agent host did not answer")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// One host per controller; it takes requests only for the controller's own directories and
// stops when asked.
func TestHostIsAloneAndStopsWhenAsked(t *testing.T) {
	dir := t.TempDir()
	done, serveErr := serve(t, dir)
	if err := Serve(context.Background(), Config{DataDir: dir, APIAddrs: []string{"127.0.0.1:1"}, CACert: testCA(t), Log: quiet()}); !errors.Is(err, ErrRunning) {
		t.Fatalf("second host: %v, want ErrRunning", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, PIDFile)); err != nil || strings.TrimSpace(string(data)) == "" {
		t.Fatalf("pid file: %q, %v", data, err)
	}

	l, err := NewLauncher(context.Background(), LauncherConfig{DataDir: dir, Command: []string{"/nonexistent"}, Log: quiet()})
	if err != nil {
		t.Fatalf("launcher did not find the running host: %v", err)
	}
	if err := l.StartMachineAgent("/etc"); err == nil || !strings.Contains(err.Error(), "not an agent directory of this controller") {
		t.Errorf("start outside the data dir: %v", err)
	}
	if err := l.StartMachineAgent(filepath.Join(dir, "instances", "none")); err == nil || !strings.Contains(err.Error(), "agent conf") {
		t.Errorf("start without agent.conf: %v", err)
	}
	l.Close()

	shutdownAndWait(t, dir, done, serveErr, "after shutdown")
	if _, err := os.Stat(filepath.Join(dir, PIDFile)); !os.IsNotExist(err) {
		t.Errorf("pid file left: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Shutdown(ctx, dir); err != nil {
		t.Errorf("shutdown without a host: %v", err)
	}
}

// A new host kills what a killed one's hooks left running (found by their JUJU_CHARM_DIR),
// and nothing else: not a process that only sits in an instance directory.
func TestOrphansOfAKilledHostAreKilled(t *testing.T) {
	dir := t.TempDir()
	charm := filepath.Join(dir, "instances", "juju-x-0", "units", "unit-a-0", "charm")
	if err := os.MkdirAll(charm, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(env ...string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Dir = charm
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	orphan := start("JUJU_CHARM_DIR=" + charm)
	bystander := start()
	elsewhere := start("JUJU_CHARM_DIR=/var/lib/juju/agents/unit-a-0/charm")
	got := Orphans(dir)
	if !slices.Contains(got, orphan.Process.Pid) || slices.Contains(got, bystander.Process.Pid) || slices.Contains(got, elsewhere.Process.Pid) {
		t.Fatalf("orphans %v; want %d and neither %d nor %d", got, orphan.Process.Pid, bystander.Process.Pid, elsewhere.Process.Pid)
	}
	serve(t, dir)
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the orphan survived a new host")
	}
	if err := syscall.Kill(bystander.Process.Pid, 0); err != nil {
		t.Errorf("the bystander was killed: %v", err)
	}
}

func testCA(t *testing.T) []byte {
	t.Helper()
	_, ca, err := bootstrap.EnsureCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// The controller asks the host whether it could start more agents: a host far from its limit
// of open files says yes; one too near says no with its numbers, and refuses to start a
// machine agent with the same words.
func TestCheckFilesAnswersForTheHost(t *testing.T) {
	limit, err := fdlimit.Limit()
	if err != nil || limit > 1<<30 {
		t.Skip("no limit of open files to come near")
	}
	for _, near := range []bool{false, true} {
		dir := t.TempDir()
		rc := agent.RunnerConfig{}
		if near {
			rc.FDReserve = int(limit) // every descriptor must stay free: the host is "near"
		}
		serveWith(t, dir, rc)
		l, err := NewLauncher(context.Background(), LauncherConfig{DataDir: dir, Command: []string{"/nonexistent"}, Log: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		err = l.CheckFiles(context.Background())
		var limitErr *fdlimit.LimitError
		switch {
		case !near && err != nil:
			t.Errorf("a host far from its limit: %v", err)
		case near && (!errors.Is(err, fdlimit.ErrTooManyOpenFiles) || !errors.As(err, &limitErr) || limitErr.Limit != limit ||
			!strings.HasPrefix(err.Error(), "agent host: too many open files: ")):
			t.Errorf("a host near its limit: %v", err)
		}
		if near {
			machine := filepath.Join(dir, "instances", "i-0")
			if err := agent.WriteConf(machine, agent.Conf{ID: "0", Tag: "machine-0", Model: "m"}); err != nil {
				t.Fatal(err)
			}
			if err := l.StartMachineAgent(machine); err == nil || !strings.Contains(err.Error(), "not starting the agent of i-0: too many open files: ") {
				t.Errorf("starting a machine agent near the limit: %v", err)
			}
		}
		l.Close()
	}
}

// shutdownAndWait asks the host serving dir to stop and fails the test unless it ends, without
// error, within 10 s; when says what was so if it did not.
func shutdownAndWait(t *testing.T, dir string, done <-chan struct{}, serveErr *error, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Shutdown(ctx, dir); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		if *serveErr != nil {
			t.Fatalf("host ended with %v", *serveErr)
		}
	case <-ctx.Done():
		t.Fatal("host still running " + when)
	}
}
