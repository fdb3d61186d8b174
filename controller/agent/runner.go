package agent

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/jujuclone/juju/client"
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
	agents map[string]context.CancelFunc
	wg     sync.WaitGroup
	// leases extends the leadership leases of the runner's leading units, apart from their
	// hooks (leadership.go).
	leases *leaseKeeper
}

// RunnerConfig is what unit agents need to run hooks.
type RunnerConfig struct {
	// ToolsBinary is the binary the hook tools link to (jujuc, or jujud: either runs as a
	// tool under the tool's name); empty means hooks run without tools.
	ToolsBinary string
	// HookTimeout is how long a hook may run (DefaultHookTimeout when zero).
	HookTimeout time.Duration
	// LeaseDuration is how long a leadership claim holds (DefaultLeaseDuration when zero;
	// the controller takes 2 s to 5 min). is-leader promises half of it; tests shorten it.
	LeaseDuration time.Duration
}

// NewRunner returns a runner whose agents stop when ctx ends.
func NewRunner(ctx context.Context, conn *grpc.ClientConn, log *slog.Logger, cfg RunnerConfig) *Runner {
	if cfg.HookTimeout <= 0 {
		cfg.HookTimeout = DefaultHookTimeout
	}
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	r := &Runner{cfg: cfg, ctx: ctx, conn: conn, log: log, agents: map[string]context.CancelFunc{}, leases: newLeaseKeeper()}
	r.wg.Go(func() { r.leases.run(ctx) })
	return r
}

// StartMachineAgent starts the machine agent configured in dir, unless it runs already.
func (r *Runner) StartMachineAgent(dir string) error {
	conf, err := ReadConf(dir)
	if err != nil {
		return err
	}
	r.start(dir, func(ctx context.Context) error {
		return newMachineAgent(r, dir, conf, r.client(conf)).run(ctx)
	})
	return nil
}

// StartUnitAgent starts the unit agent configured in dir, unless it runs already.
func (r *Runner) StartUnitAgent(dir string) error {
	conf, err := ReadConf(dir)
	if err != nil {
		return err
	}
	r.start(dir, func(ctx context.Context) error {
		return newUnitAgent(r, dir, conf, r.client(conf)).run(ctx)
	})
	return nil
}

// Stop stops the agent of dir.
func (r *Runner) Stop(dir string) {
	r.mu.Lock()
	cancel, ok := r.agents[dir]
	delete(r.agents, dir)
	r.mu.Unlock()
	if ok {
		cancel()
	}
}

// StopTree stops the agent of dir and every agent in a directory below it (a unit and its
// subordinates, a machine and its units).
func (r *Runner) StopTree(dir string) {
	dir = filepath.Clean(dir)
	r.mu.Lock()
	var cancels []context.CancelFunc
	for d, cancel := range r.agents {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			cancels = append(cancels, cancel)
			delete(r.agents, d)
		}
	}
	r.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.agents[dir]; ok || r.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.agents[dir] = cancel
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
