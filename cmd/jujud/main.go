// Command jujud is the controller daemon: store, API server, provisioner and local agents.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/core/fdlimit"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/internal/timerslack"
)

func main() {
	// Run under a hook tool's name (a symlink on a hook's PATH), jujud is that tool.
	if code, ran := hooktool.RunIfTool(); ran {
		os.Exit(code)
	}
	// The controller and the agent host sleep with a millisecond's slack (internal/timerslack);
	// this may execute the binary again, before anything else is done.
	if err := timerslack.Ensure(timerslack.Daemon); err != nil {
		fmt.Fprintf(os.Stderr, "WARNING %v\n", err)
	}
	tuneGC()
	stopProfile := startProfile()
	code := run(os.Args[1:])
	stopProfile()
	os.Exit(code)
}

// raiseFileLimit lifts the open-file limit to the hard one: etcd, the API's connections and the
// agents' hooks all take descriptors, and a process that runs out fails everywhere at once
// (issue 16). What the limit is goes in the log, for whoever reads why units were refused.
func raiseFileLimit(log *slog.Logger) {
	limit, err := fdlimit.Raise()
	if err != nil {
		log.Warn("cannot raise the open-file limit", "err", err)
		return
	}
	log.Info("open-file limit", "limit", limit)
}

func run(args []string) int {
	v := viper.New()
	v.SetEnvPrefix("JUJUD")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	cmd := &cobra.Command{
		Use:           "jujud",
		Short:         "The juju controller daemon",
		Version:       version.Current,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := daemon.Config{
				DataDir:        v.GetString("data-dir"),
				ControllerName: v.GetString("controller-name"),
				APIAddr:        v.GetString("api-addr"),
				NoFsync:        v.GetBool("unsafe-no-fsync"),
				HookTimeout:    v.GetDuration("hook-timeout"),
				Log:            slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo})),
			}
			defaults, err := cmd.Flags().GetStringArray("model-default")
			if err != nil {
				return err
			}
			for _, kv := range defaults {
				key, value, ok := strings.Cut(kv, "=")
				if !ok || key == "" {
					return fmt.Errorf("--model-default: expected key=value, got %q", kv)
				}
				if cfg.ModelDefaults == nil {
					cfg.ModelDefaults = map[string]string{}
				}
				cfg.ModelDefaults[key] = value
			}
			if eps := v.GetString("etcd-endpoints"); eps != "" {
				cfg.EtcdEndpoints = strings.Split(eps, ",")
			}
			cfg.EtcdCA, cfg.EtcdCert, cfg.EtcdKey = v.GetString("etcd-ca"), v.GetString("etcd-cert"), v.GetString("etcd-key")
			cfg.EtcdInsecure = v.GetBool("etcd-insecure")
			if len(cfg.EtcdEndpoints) == 0 && (cfg.EtcdCA != "" || cfg.EtcdCert != "" || cfg.EtcdKey != "" || cfg.EtcdInsecure) {
				return fmt.Errorf("--etcd-ca, --etcd-cert, --etcd-key and --etcd-insecure need --etcd-endpoints")
			}
			if cfg.DataDir == "" {
				return fmt.Errorf("--data-dir is required")
			}
			// The agents run apart, in `jujud agents`, so that they outlive this process;
			// --agents-in-process keeps the former layout (agents as goroutines of this
			// process), which the benchmarks measure against.
			if !v.GetBool("agents-in-process") {
				if cfg.AgentHostBinary, err = os.Executable(); err != nil {
					return fmt.Errorf("finding jujud for the agent host: %w", err)
				}
			}
			raiseFileLimit(cfg.Log)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return daemon.Run(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.String("data-dir", "", "directory for the store, certificates and instances (created 0700)")
	f.String("controller-name", "local", "name of the controller")
	f.String("api-addr", "127.0.0.1:17070", "address the API listens on (port 0: any free port)")
	f.String("etcd-endpoints", "", "comma-separated https:// endpoints of an existing etcd cluster instead of the embedded one")
	f.String("etcd-ca", "", "CA certificate (PEM) of the --etcd-endpoints servers (default: the system's roots)")
	f.String("etcd-cert", "", "client certificate (PEM) this controller presents to --etcd-endpoints")
	f.String("etcd-key", "", "key (PEM) of --etcd-cert")
	f.Bool("etcd-insecure", false, "allow plain http:// --etcd-endpoints: anyone who reaches them owns the controller")
	f.StringArray("model-default", nil, "key=value: model configuration every model inherits (read at the first start only; then juju model-defaults)")
	f.Duration("hook-timeout", 5*time.Minute, "how long a charm hook may run before it is killed and reported as failed")
	f.Bool("unsafe-no-fsync", false, "do not fsync the embedded store (tests and benchmarks only)")
	_ = f.MarkHidden("unsafe-no-fsync")
	f.Bool("agents-in-process", false, "run the agents in this process, as before the agent host (benchmarks only): they stop with it")
	_ = f.MarkHidden("agents-in-process")
	_ = v.BindPFlags(f)
	cmd.AddCommand(newAgentsCmd())
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "ERROR %v\n", err)
		return 1
	}
	return 0
}
