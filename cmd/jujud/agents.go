package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/agent/host"
	"github.com/jujuclone/juju/controller/bootstrap"
)

// newAgentsCmd is `jujud agents`: the process the controller starts to run the local
// provider's machine and unit agents (package controller/agent/host). It is started by
// jujud, not by hand.
func newAgentsCmd() *cobra.Command {
	var (
		dataDir, toolsBinary string
		apiAddrs             []string
		hookTimeout, lease   time.Duration
	)
	cmd := &cobra.Command{
		Use:    "agents",
		Short:  "Run the local provider's agents (started by jujud)",
		Args:   cobra.NoArgs,
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir == "" || len(apiAddrs) == 0 {
				return errors.New("--data-dir and --api-addr are required")
			}
			caPEM, err := os.ReadFile(filepath.Join(dataDir, bootstrap.CACertFile))
			if err != nil {
				return fmt.Errorf("reading the controller's CA certificate: %w", err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			// The agents' runner refuses new agents near the limit (fdlimit.DefaultReserve).
			raiseFileLimit(log)
			// SIGTERM stops the agents and their hooks; the controller's own signals never
			// reach this process (a session of its own).
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			err = host.Serve(ctx, host.Config{
				DataDir: dataDir, APIAddrs: apiAddrs, CACert: caPEM,
				Runner: agent.RunnerConfig{ToolsBinary: toolsBinary, HookTimeout: hookTimeout, LeaseDuration: lease},
				Log:    log,
			})
			if errors.Is(err, host.ErrRunning) {
				fmt.Fprintln(cmd.ErrOrStderr(), "agent host already running; leaving it be")
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "", "the controller's data directory")
	f.StringSliceVar(&apiAddrs, "api-addr", nil, "the controller's API addresses (the agents use whichever answers)")
	f.StringVar(&toolsBinary, "tools-binary", "", "the binary hook tools link to (jujuc)")
	f.DurationVar(&hookTimeout, "hook-timeout", 0, "how long a charm hook may run")
	f.DurationVar(&lease, "lease-duration", 0, "how long a leadership claim holds")
	return cmd
}
