package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/core/fdlimit"
	"github.com/jujuclone/juju/internal/atomicfile"
	"github.com/jujuclone/juju/internal/peercred"
)

// HookToolsDir is the directory in the controller's instances directory where the agent host
// installs the hook tools once for all its units.
const HookToolsDir = ".hook-tools"

// ErrRunning says another agent host serves the data directory already.
var ErrRunning = errors.New("an agent host runs for this controller already")

// Config is what the agent host needs.
type Config struct {
	// DataDir is the controller's data directory (instances, CA certificate).
	DataDir string
	// APIAddrs are the controller's API addresses; the agents use whichever answers.
	APIAddrs []string
	// CACert is the controller's CA certificate (PEM).
	CACert []byte
	Runner agent.RunnerConfig
	Log    *slog.Logger
}

// Serve runs the agent host until ctx ends or the controller asks it to shut down; then it
// stops every agent (and with them their hooks) before it returns.
func Serve(ctx context.Context, cfg Config) error {
	lock, err := os.OpenFile(filepath.Join(cfg.DataDir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("opening agent host lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrRunning
		}
		return fmt.Errorf("locking agent host: %w", err)
	}
	lis, err := net.Listen("unix", socketName(cfg.DataDir))
	if err != nil {
		return fmt.Errorf("listening for the controller: %w", err)
	}
	defer lis.Close()
	pidPath := filepath.Join(cfg.DataDir, PIDFile)
	if err := atomicfile.Write(pidPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pidPath)

	if n := killOrphans(cfg.DataDir); n > 0 {
		cfg.Log.Warn("agent host: killed processes of hooks the previous host left behind", "count", n)
	}
	conn, setAddrs, err := client.NewUpdatableAgentConn(cfg.APIAddrs, cfg.CACert)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if cfg.Runner.ToolsDir == "" {
		// Beside the machines, under the directory their uids may pass through.
		cfg.Runner.ToolsDir = filepath.Join(cfg.DataDir, "instances", HookToolsDir)
	}
	runner := agent.NewRunner(ctx, conn, cfg.Log, cfg.Runner)
	h := &host{cfg: cfg, runner: runner, stop: stop, setAddrs: setAddrs, addrs: cfg.APIAddrs}
	go h.accept(ctx, lis)
	go h.watchDataDir(ctx)
	cfg.Log.Info("agent host ready", "pid", os.Getpid(), "api", cfg.APIAddrs)
	<-ctx.Done()
	lis.Close()
	runner.Wait()
	h.conns.Wait()
	cfg.Log.Info("agent host stopped")
	return nil
}

type host struct {
	cfg    Config
	runner *agent.Runner
	stop   context.CancelFunc
	conns  sync.WaitGroup
	// setAddrs changes the addresses the agents' connection uses; addrs are the current ones.
	setAddrs func([]string)
	addrsMu  sync.Mutex
	addrs    []string
}

func (h *host) accept(ctx context.Context, lis net.Listener) {
	for {
		conn, err := lis.Accept()
		if err != nil {
			return
		}
		h.conns.Add(1)
		go func() {
			defer h.conns.Done()
			defer conn.Close()
			h.serve(ctx, conn)
		}()
	}
}

// serve answers the requests of a connection, one after another, until the controller closes
// it (the launcher keeps a few open between requests) or the host stops; a hello stays open
// until the host stops, so the controller learns at once when the host is gone.
func (h *host) serve(ctx context.Context, conn net.Conn) {
	// Only the controller's user: hooks run as users of their own, and must not start or
	// stop agents.
	if uid, err := peercred.UID(conn); err != nil || uid != uint32(os.Geteuid()) {
		h.cfg.Log.Warn("agent host: refused a caller", "uid", uid, "err", err)
		return
	}
	// A connection waiting for its next request must not hold the host's stop up.
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	r := bufio.NewReader(conn)
	// The first request comes at once; later ones when the controller has one.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var req request
		if err := readMsg(r, &req); err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Time{})
		if !h.answer(ctx, conn, req) {
			return
		}
	}
}

// answer carries out one request and answers it; false when the connection ends with it.
func (h *host) answer(ctx context.Context, conn net.Conn, req request) bool {
	var resp response
	switch req.Op {
	case opHello:
		h.addrsMu.Lock()
		resp.PID, resp.APIAddrs = os.Getpid(), h.addrs
		h.addrsMu.Unlock()
		if writeMsg(conn, resp) != nil {
			return false
		}
		// Held open: the read ends when the controller goes, or when the host stops (serve
		// closes the connection).
		_, _ = conn.Read(make([]byte, 1))
		return false
	case opStart:
		if err := h.checkDir(req.Dir); err != nil {
			resp.Error = err.Error()
		} else if err := h.runner.StartMachineAgent(req.Dir); err != nil {
			resp.Error = err.Error()
		}
	case opStopTree:
		if err := h.checkDir(req.Dir); err != nil {
			resp.Error = err.Error()
		} else {
			h.runner.StopTree(req.Dir)
		}
	case opSetAddrs:
		if len(req.Addrs) == 0 {
			resp.Error = "no API addresses"
			break
		}
		h.addrsMu.Lock()
		h.addrs = req.Addrs
		h.addrsMu.Unlock()
		h.setAddrs(req.Addrs)
		h.cfg.Log.Info("agent host: the controller's API addresses changed", "api", req.Addrs)
	case opCheckFiles:
		var limitErr *fdlimit.LimitError
		if err := h.runner.CheckFiles(ctx); errors.As(err, &limitErr) {
			resp.FilesInUse, resp.FilesLimit = limitErr.InUse, limitErr.Limit
		}
	case opShutdown:
		h.cfg.Log.Info("agent host: shutting down at the controller's request")
		// Answered first: stopping closes every connection (serve).
		_ = writeMsg(conn, resp)
		h.stop()
		return false
	default:
		resp.Error = fmt.Sprintf("unknown request %q", req.Op)
	}
	return writeMsg(conn, resp) == nil
}

// checkDir keeps requests to directories of this controller.
func (h *host) checkDir(dir string) error {
	rel, err := filepath.Rel(h.cfg.DataDir, dir)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not an agent directory of this controller", dir)
	}
	return nil
}

// watchDataDir stops the host once the controller's data directory is gone (a controller
// removed without its agents being told): nothing is left for its agents to do.
func (h *host) watchDataDir(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := os.Stat(filepath.Join(h.cfg.DataDir, LockFile)); errors.Is(err, os.ErrNotExist) {
				h.cfg.Log.Warn("agent host: the controller's data directory is gone; stopping")
				h.stop()
				return
			}
		}
	}
}
