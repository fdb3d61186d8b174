package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/core/fdlimit"
)

// Runner starts agents as goroutines of one process (the agent host, package agent/host, or
// the controller itself in tests), sharing one connection to the API; each agent
// authenticates every call as itself.
type Runner struct {
	cfg    RunnerConfig
	ctx    context.Context
	conn   *grpc.ClientConn
	log    *slog.Logger
	mu     sync.Mutex
	agents agentTree
	wg     sync.WaitGroup
	// leases extends the leadership leases of the runner's leading units, apart from their
	// hooks (leadership.go).
	leases *leaseKeeper
	// work bounds how many agents work at once (workslots.go).
	work workSlots
	// watches carries every agent's watches on one stream (watchmux.go); keys, the models'
	// authorized keys for the machines' ssh servers, one stream per model (keysfeed.go).
	watches *watchMux
	keys    *keysFeeds
	// charms keeps the charm archives its agents fetched (charmcache.go).
	charms charmArchives
	// tools answers the hook tools of every unit of the runner (started with the first unit):
	// one listener for the process, not one per unit (issue 16).
	toolsMu sync.Mutex
	tools   *hooktool.Server
	// fdReserve is how many descriptors must stay free for an agent to start (fdlimit.Check).
	fdReserve int
	// hookTools is the process's installed hook tools (cfg.ToolsDir's version directory; ""
	// until the first unit installs them); isolatedTools says whether a machine's uid may run
	// them (0 not yet asked, 1 no, 2 yes). Guarded by hookToolsMu.
	hookToolsMu   sync.Mutex
	hookTools     string
	isolatedTools int
}

// RunnerConfig is what unit agents need to run hooks.
type RunnerConfig struct {
	// ToolsBinary is the binary the hook tools link to (jujuc, or jujud: either runs as a
	// tool under the tool's name); empty means hooks run without tools.
	ToolsBinary string
	// ToolsDir is where the hook tools are installed once for the process and shared by its
	// units (issue 16: forty links per unit were a quarter of the agents' deploy CPU). It must
	// be a directory the machines' uids may pass through when they have their own (the local
	// provider's instances directory). Empty: each unit installs its own, in its directory.
	ToolsDir string
	// HookTimeout is how long a hook may run (DefaultHookTimeout when zero).
	HookTimeout time.Duration
	// LeaseDuration is how long a leadership claim holds (DefaultLeaseDuration when zero;
	// the controller takes 2 s to 5 min). is-leader promises half of it; tests shorten it.
	LeaseDuration time.Duration
	// FDReserve is how many file descriptors must stay free for a new agent to start
	// (fdlimit.DefaultReserve when zero; negative: no check, for tests).
	FDReserve int
}

// NewRunner returns a runner whose agents stop when ctx ends.
func NewRunner(ctx context.Context, conn *grpc.ClientConn, log *slog.Logger, cfg RunnerConfig) *Runner {
	if cfg.HookTimeout <= 0 {
		cfg.HookTimeout = DefaultHookTimeout
	}
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.FDReserve == 0 {
		cfg.FDReserve = fdlimit.DefaultReserve
	}
	r := &Runner{cfg: cfg, ctx: ctx, conn: conn, log: log, leases: newLeaseKeeper(), fdReserve: cfg.FDReserve, work: newWorkSlots(maxBusyAgents),
		watches: newWatchMux(ctx), keys: newKeysFeeds(ctx)}
	r.wg.Go(func() { r.leases.run(ctx) })
	return r
}

// StartMachineAgent starts the machine agent configured in dir, unless it runs already. It
// refuses (an error wrapping fdlimit.ErrTooManyOpenFiles) when the process is near its limit
// of open files.
func (r *Runner) StartMachineAgent(dir string) error {
	conf, err := ReadConf(dir)
	if err != nil {
		return err
	}
	return r.startChecked(dir, func(ctx context.Context) error {
		return newMachineAgent(r, dir, conf, r.client(conf)).run(ctx)
	})
}

// StartUnitAgent starts the unit agent configured in dir, unless it runs already; like
// StartMachineAgent, it refuses near the limit of open files.
func (r *Runner) StartUnitAgent(dir string) error {
	conf, err := ReadConf(dir)
	if err != nil {
		return err
	}
	return r.startChecked(dir, func(ctx context.Context) error {
		return newUnitAgent(r, dir, conf, r.client(conf)).run(ctx)
	})
}

// CheckFiles says (an error that is fdlimit.ErrTooManyOpenFiles, a *fdlimit.LimitError) when
// the process is too near its limit of open files to start more agents: what the controller
// asks before it adds units (of an agent host: host.Launcher.CheckFiles, which has the same
// signature).
func (r *Runner) CheckFiles(context.Context) error {
	if r.fdReserve <= 0 {
		return nil
	}
	return fdlimit.Check(r.fdReserve)
}

// startChecked starts a new agent unless the process is too near its limit of open files:
// an agent holds none while idle, but its hooks do, and a process that runs out fails in
// every part at once (issue 16).
func (r *Runner) startChecked(dir string, fn func(ctx context.Context) error) error {
	if r.running(dir) {
		return nil
	}
	if err := r.CheckFiles(r.ctx); err != nil {
		return fmt.Errorf("not starting the agent of %s: %w", filepath.Base(dir), err)
	}
	r.start(dir, fn)
	return nil
}

func (r *Runner) running(dir string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.get(filepath.Clean(dir)) != nil
}

// Stop stops the agent of dir.
func (r *Runner) Stop(dir string) {
	r.mu.Lock()
	cancel := r.agents.remove(filepath.Clean(dir))
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// StopTree stops the agent of dir and every agent in a directory below it (a unit and its
// subordinates, a machine and its units): the work is that of the tree, never of every agent.
func (r *Runner) StopTree(dir string) {
	r.mu.Lock()
	cancels := r.agents.removeTree(filepath.Clean(dir))
	r.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

// toolsServer is the runner's hook-tool server, started on first use; it serves until the
// runner stops.
func (r *Runner) toolsServer() (*hooktool.Server, error) {
	r.toolsMu.Lock()
	defer r.toolsMu.Unlock()
	if r.tools != nil {
		return r.tools, nil
	}
	// Named by the process, so that a test (or an operator) finds this process's server among
	// the host's abstract sockets: @jujud-agents-<pid>-<random>.
	s, err := hooktool.NewServer(hooktool.SocketAddr(fmt.Sprintf("agents-%d", os.Getpid())))
	if err != nil {
		return nil, err
	}
	r.tools = s
	// Called by a running agent: the wait group is not at zero, so Wait waits for it too.
	r.wg.Go(func() { _ = s.Serve(r.ctx) })
	return s, nil
}

// Wait waits for every agent to stop (after the runner's context ended).
func (r *Runner) Wait() { r.wg.Wait() }

func (r *Runner) client(conf Conf) *client.Client {
	return client.NewFromConn(r.conn, client.Config{
		Endpoint: conf.APIAddr, CACert: []byte(conf.CACert), Tag: conf.Tag, Password: conf.Password,
		Model: conf.Model, Timeout: 30 * time.Second,
	})
}

// backoffReset is how long an agent must have run for its next restart to wait the shortest.
const backoffReset = 10 * time.Second

// start runs fn until it returns nil or the runner stops, restarting it after failures.
func (r *Runner) start(dir string, fn func(ctx context.Context) error) {
	dir = filepath.Clean(dir)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agents.get(dir) != nil || r.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.agents.put(dir, cancel)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		backoff := 100 * time.Millisecond
		for {
			started := time.Now()
			err := fn(ctx)
			if err == nil || ctx.Err() != nil {
				return
			}
			if time.Since(started) > backoffReset {
				// It ran well for a while (a controller restart ended its watch): come back
				// fast, not after the longest wait of some earlier trouble.
				backoff = 100 * time.Millisecond
			}
			r.log.Warn("agent failed; restarting", "dir", dir, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		}
	}()
}

// sharedTools returns the process's hook tools directory, installing it on the first call,
// when the runner has one and the unit's charm code may run what it holds; ok is false when
// the unit must install its own (installTools). Whether a machine's uid may run the tools is
// asked of the kernel once: every machine's uid is neither the owner nor in the group of the
// directories on the way (root's), so the kernel answers them all alike.
func (r *Runner) sharedTools(conf Conf) (dir string, ok bool, err error) {
	if r == nil || r.cfg.ToolsDir == "" || r.cfg.ToolsBinary == "" {
		return "", false, nil
	}
	r.hookToolsMu.Lock()
	defer r.hookToolsMu.Unlock()
	if r.hookTools == "" {
		dir, err := installSharedTools(r.cfg.ToolsDir, r.cfg.ToolsBinary)
		if err != nil {
			return "", false, err
		}
		r.hookTools = dir
	}
	if conf.isolated() {
		if r.isolatedTools == 0 {
			r.isolatedTools = 1
			if conf.canRun(filepath.Join(r.hookTools, "status-set")) {
				r.isolatedTools = 2
			} else {
				r.log.Warn("machines' uids cannot run the shared hook tools; each unit installs its own", "dir", r.hookTools)
			}
		}
		if r.isolatedTools != 2 {
			return "", false, nil
		}
	}
	return r.hookTools, true, nil
}
