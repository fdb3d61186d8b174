// Package daemon runs a controller: the store, the API server, the provisioner and the agents of
// the local provider, until its context ends.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/agent/host"
	"github.com/jujuclone/juju/controller/apiserver"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/health"
	"github.com/jujuclone/juju/controller/logsink"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/controller/worker/actionpruner"
	"github.com/jujuclone/juju/controller/worker/cleaner"
	"github.com/jujuclone/juju/controller/worker/firewaller"
	"github.com/jujuclone/juju/controller/worker/forcer"
	"github.com/jujuclone/juju/controller/worker/modelremover"
	"github.com/jujuclone/juju/controller/worker/provisioner"
	"github.com/jujuclone/juju/controller/worker/singular"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// Config is the controller's resolved configuration.
type Config struct {
	DataDir        string
	ControllerName string
	APIAddr        string
	EtcdEndpoints  []string
	// EtcdCA, EtcdCert and EtcdKey are the TLS material for https:// EtcdEndpoints: the CA
	// of the cluster's servers and the controller's client certificate and key.
	EtcdCA, EtcdCert, EtcdKey string
	// EtcdInsecure allows plain http:// EtcdEndpoints.
	EtcdInsecure bool
	// NoFsync speeds up the embedded store at the cost of durability (tests, benchmarks).
	NoFsync bool
	Log     *slog.Logger
	// Ready, when set, is called once the API serves.
	Ready func(info bootstrap.Info)
	// AgentBinary is the binary hook tools link to. The default is jujuc beside this
	// executable, or else this executable, which must then act as the tools when run
	// under their names (hooktool.RunIfTool), as jujud does, at about 7 ms more a call.
	AgentBinary string
	// HookTimeout is how long a charm hook may run before it is killed (default 5 minutes).
	HookTimeout time.Duration
	// LeaseDuration is how long a leadership claim holds (default 60 s, as in Juju; is-leader
	// promises half of it). Tests shorten it.
	LeaseDuration time.Duration
	// ModelDefaults are the controller's model defaults, stored at the first start (bootstrap
	// --model-default); a restart keeps what the store holds.
	ModelDefaults map[string]string
	// MemberBinary is the jujud that enable-ha starts new members with (default: this
	// executable).
	MemberBinary string
	// AgentHostBinary, when set, runs the local provider's agents apart from the controller,
	// in `<AgentHostBinary> agents` (jujud), which outlives the controller (see package
	// agent/host). Empty runs them as goroutines of this process (tests that need no more).
	AgentHostBinary string
}

// Run serves until ctx ends, then shuts down cleanly.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	// The provider's mode from the start, not 0700 until it opens it: the agent host and its
	// hooks go on while the controller restarts.
	if err := os.Chmod(cfg.DataDir, local.DataDirMode()); err != nil {
		return fmt.Errorf("securing data dir: %w", err)
	}
	pidPath := filepath.Join(cfg.DataDir, bootstrap.PIDFile)
	if err := atomicfile.Write(pidPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pidPath)
	// A member removed through the API (itself) ends its own run.
	ctx, stopSelf := context.WithCancel(ctx)
	defer stopSelf()

	m, err := readMember(cfg)
	if err != nil {
		return err
	}
	// The CA first: it also signs the embedded store's certificates. A joining member got its
	// copy from the member that started it (which read it from the store).
	cert, caPEM, err := bootstrap.EnsureCerts(cfg.DataDir)
	if err != nil {
		return err
	}
	st, err := m.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	closeStore := sync.OnceValue(st.Close)
	defer closeStore()
	s := state.New(st.Client)

	info, err := initialise(ctx, s, cfg, caPEM, m)
	if err != nil {
		return err
	}
	if err := m.register(ctx, s, cfg, info.ControllerUUID); err != nil {
		return err
	}

	// The model logs (juju debug-log) live beside the store, in logs/ (0700, files 0600).
	logs, err := logsink.New(filepath.Join(cfg.DataDir, "logs"), logsink.Options{})
	if err != nil {
		return err
	}
	defer logs.Close()

	// A restarted controller binds the address it had: its clients and agents know no other
	// (see bootstrap.APIListenAddr). If that port is taken it fails rather than move silently.
	addr, kept := bootstrap.APIListenAddr(cfg.APIAddr, info.APIAddr)
	lis, err := net.Listen("tcp", addr)
	if err != nil && kept {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err // "bind: address already in use": the address is said already
		}
		return fmt.Errorf("cannot keep this controller's API address %s (recorded in %s, the only address its clients and agents know): %w; free the port, or move the controller with an explicit --api-addr port",
			addr, filepath.Join(cfg.DataDir, bootstrap.InfoFile), err)
	}
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if info.APIAddr != "" && info.APIAddr != lis.Addr().String() {
		cfg.Log.Warn("the API address changed: clients and agents that know only the old one cannot reach this controller",
			"old", info.APIAddr, "new", lis.Addr().String())
	}
	info.APIAddr = lis.Addr().String()
	info.PID = os.Getpid()

	monitor := health.New(st.CheckQuorum, 0)
	monitor.Log = cfg.Log
	go monitor.Run(ctx)
	mgr := newMembers(cfg, s, st, m, info.APIAddr, caPEM, monitor, stopSelf)
	hb, err := startHeartbeat(ctx, s, st, m, cfg, info)
	if err != nil {
		lis.Close()
		return err
	}
	defer hb.stop()

	srv := apiserver.New(apiserver.Config{
		State: s, ControllerName: cfg.ControllerName, Cloud: "localhost", Region: "localhost", Context: ctx, LogSink: logs, Log: cfg.Log,
		TLS:      &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Members:  mgr,
		Degraded: monitor.Degraded,
		MemberID: m.id,
		Peers:    apiserver.LivePeers(s, m.id),
		CACert:   caPEM,
		Capacity: m.capacity.check,
	})
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()

	if err := bootstrap.WriteInfo(cfg.DataDir, info); err != nil {
		srv.Stop()
		return err
	}

	if cfg.AgentBinary == "" {
		exe, err := os.Executable()
		if err != nil {
			srv.Stop()
			return fmt.Errorf("finding the agent binary for hook tools: %w", err)
		}
		cfg.AgentBinary = toolsBinary(exe, cfg.Log)
	}
	workCtx, stopWork := context.WithCancel(ctx)
	conn, err := client.NewConn(client.Config{Endpoint: info.APIAddr, CACert: caPEM})
	if err != nil {
		stopWork()
		srv.Stop()
		return err
	}
	// Each member keeps the logs its agents sent; the model remover runs on one member only,
	// so every member drops the logs of models that are gone by itself.
	go pruneLogs(workCtx, s, logs, cfg.Log)
	// The singular workers run on one member at a time: the one elected through the store.
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		singular.Run(workCtx, singular.Config{Client: st.Client, MemberID: m.id, Log: cfg.Log}, func(ctx context.Context) {
			// The store's leader elsewhere: one member's death then costs one election, not
			// two in a row (the workers' lease outlives a store leader's death by an election).
			go keepStoreLeadElsewhere(ctx, st)
			runWorkers(ctx, cfg, m, s, mgr, conn, caPEM, logs)
		})
	}()
	cfg.Log.Info("controller ready", "api", info.APIAddr, "data-dir", cfg.DataDir, "member", m.id)
	if cfg.Ready != nil {
		cfg.Ready(info)
	}

	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	stopWork()
	<-workersDone
	conn.Close()
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		srv.Stop()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("serving API: %w", err)
	}
	if mgr.removedSelf.Load() {
		hb.stop()
		_ = closeStore()
		return removeMemberDir(cfg.DataDir, m.cloudDir)
	}
	return nil
}

// runWorkers runs the controller's singular workers until ctx ends (this member no longer
// owns them, or it stops): the local provider's agents, the provisioner (L-M3, L-M5), cleaner
// (L-R7), force-remover (L-F1), model remover (destroy-model), action pruner
// (max-action-results-age and -size) and firewaller (juju expose).
func runWorkers(ctx context.Context, cfg Config, m *member, s *state.State, mgr *members, conn *grpc.ClientConn, caPEM []byte, logs *logsink.Sink) {
	addrs := mgr.APIAddresses(ctx)
	launcher, stopAgents, err := startAgents(ctx, cfg, conn, m.cloudDir, addrs)
	if err != nil {
		cfg.Log.Error("starting the agents", "err", err)
		<-ctx.Done()
		return
	}
	defer stopAgents()
	if f, ok := launcher.(filesChecker); ok {
		m.capacity.set(f)
		defer m.capacity.set(nil)
	}
	prov, err := local.New(m.cloudDir, addrs[0], caPEM, launcher)
	if err != nil {
		cfg.Log.Error("starting the local provider", "err", err)
		<-ctx.Done()
		return
	}
	workers := []func(context.Context){
		provisioner.New(s, prov, cfg.Log).Run, cleaner.New(s, cfg.Log).Run, forcer.New(s, cfg.Log).Run,
		actionpruner.New(s, cfg.Log, 0).Run, firewaller.New(s, prov, cfg.Log).Run,
		modelremover.New(s, cfg.Log, func(uuid string) {
			if err := logs.Remove(uuid); err != nil {
				cfg.Log.Warn("model-remover: removing the model's log", "model", uuid, "err", err)
			}
		}).Run,
	}
	if hl, ok := launcher.(addressTaker); ok {
		// Members come and go (enable-ha): the agents learn the addresses without restarting.
		workers = append(workers, func(ctx context.Context) { mgr.followAddresses(ctx, hl) })
	}
	var wg sync.WaitGroup
	for _, run := range workers {
		wg.Go(func() { run(ctx) })
	}
	wg.Wait()
}

// keepStoreLeadElsewhere hands the store's leadership to another member whenever this member,
// which runs the workers, has it (at the start of its term, after a member joined, after an
// election): checked every few seconds, which costs nothing while another member leads.
func keepStoreLeadElsewhere(ctx context.Context, st *store.Store) {
	for {
		st.HandOverLeadership()
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

// pruneLogs removes, at start and then every minute, the logs of models no longer in the store.
func pruneLogs(ctx context.Context, s *state.State, logs *logsink.Sink, log *slog.Logger) {
	for {
		// The logs first: a model whose log exists before the store is read is in it, unless gone.
		uuids, _ := logs.Models()
		if models, err := s.ListModels(ctx); err == nil {
			live := map[string]bool{}
			for _, m := range models {
				live[m.Model.GetUuid()] = true
			}
			for _, uuid := range uuids {
				if !live[uuid] {
					if err := logs.Remove(uuid); err != nil {
						log.Warn("removing the log of a removed model", "model", uuid, "err", err)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Minute):
		}
	}
}

// addressTaker is an agent launcher that can be told the controller's addresses.
type addressTaker interface {
	SetAPIAddrs(addrs []string) error
}

// startAgents returns what starts the local provider's agents: the agent host process
// (cfg.AgentHostBinary) of the cloud directory, or a runner in this process. stop waits for
// in-process agents to end (ctx ended) and lets an agent host go on without the controller.
func startAgents(ctx context.Context, cfg Config, conn *grpc.ClientConn, cloudDir string, apiAddrs []string) (local.Launcher, func(), error) {
	rc := agent.RunnerConfig{ToolsBinary: cfg.AgentBinary, HookTimeout: cfg.HookTimeout, LeaseDuration: cfg.LeaseDuration}
	if cfg.AgentHostBinary == "" {
		runner := agent.NewRunner(ctx, conn, cfg.Log, rc)
		return runner, runner.Wait, nil
	}
	command := []string{cfg.AgentHostBinary, "agents", "--data-dir", cloudDir, "--api-addr", strings.Join(apiAddrs, ","),
		"--tools-binary", rc.ToolsBinary}
	if rc.HookTimeout > 0 {
		command = append(command, "--hook-timeout", rc.HookTimeout.String())
	}
	if rc.LeaseDuration > 0 {
		command = append(command, "--lease-duration", rc.LeaseDuration.String())
	}
	l, err := host.NewLauncher(ctx, host.LauncherConfig{DataDir: cloudDir, APIAddrs: apiAddrs, Command: command, Log: cfg.Log})
	if err != nil {
		return nil, nil, err
	}
	return l, l.Close, nil
}

// initialise bootstraps the store on first start and returns the bootstrap info to publish.
// It refuses a store that holds another controller than the member's.
func initialise(ctx context.Context, s *state.State, cfg Config, caPEM []byte, m *member) (bootstrap.Info, error) {
	ctrl, err := s.Controller(ctx)
	if err == nil {
		if err := m.checkController(ctrl.Uuid, cfg); err != nil {
			return bootstrap.Info{}, err
		}
		info, err := bootstrap.ReadInfo(cfg.DataDir)
		if errors.Is(err, os.ErrNotExist) && m.joining() {
			// A new member: no admin password here (bootstrap.json of the first member is
			// what juju bootstrap reads), only what this member publishes.
			return bootstrap.Info{ControllerUUID: ctrl.Uuid, CACert: string(caPEM), AdminTag: apiserver.AdminTag}, nil
		}
		if err != nil {
			// A restart: keep the published credential.
			return info, fmt.Errorf("controller already initialised but %s unreadable: %w", bootstrap.InfoFile, err)
		}
		return info, nil
	}
	if !errors.Is(err, apierr.NotFound) {
		return bootstrap.Info{}, err
	}
	if m.joining() || m.ident != nil {
		return bootstrap.Info{}, fmt.Errorf("the store holds no controller, but this member (%s) belongs to controller %s", cfg.DataDir, m.controllerUUID())
	}
	password, err := state.NewPassword()
	if err != nil {
		return bootstrap.Info{}, err
	}
	ctrl, err = s.Bootstrap(ctx, state.BootstrapArgs{
		ControllerName: cfg.ControllerName, AdminPasswordHash: state.HashPassword(password),
		Cloud: "localhost", Region: "localhost", Base: base.DefaultLTS.DisplayString(),
		ModelDefaults: cfg.ModelDefaults,
	})
	if err != nil {
		return bootstrap.Info{}, err
	}
	info := bootstrap.Info{
		ControllerUUID: ctrl.Uuid, CACert: string(caPEM), AdminTag: apiserver.AdminTag, AdminPassword: password,
	}
	for _, name := range []string{state.ControllerModelName, state.DefaultModelName} {
		m, err := s.Model(ctx, name)
		if err != nil {
			return info, err
		}
		info.Models = append(info.Models, bootstrap.ModelInfo{Name: m.Name, UUID: m.Uuid})
	}
	return info, nil
}

// toolsBinary is jujuc beside exe (jujud) when it is there, else exe.
func toolsBinary(exe string, log *slog.Logger) string {
	jujuc := filepath.Join(filepath.Dir(exe), "jujuc")
	if info, err := os.Stat(jujuc); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
		return jujuc
	}
	log.Warn("no jujuc beside jujud: hook tools run as jujud, which starts slower", "want", jujuc)
	return exe
}
