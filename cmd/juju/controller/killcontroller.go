package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type killControllerOptions struct {
	IO       *output.Streams
	Store    *cmdutil.Store
	Name     string
	NoPrompt bool
	Timeout  time.Duration

	// Signal sends sig to pid; Alive reports whether pid is still a running jujud.
	Signal func(pid int, sig syscall.Signal) error
	Alive  func(pid int) bool
	Poll   time.Duration
}

// NewCmdKillController returns "juju kill-controller <name>": stop a local controller's jujud,
// delete its data and forget it (destroy-controller destroys its models first).
func NewCmdKillController(f *cmdutil.Factory, runF func(*killControllerOptions) error) *cobra.Command {
	opts := &killControllerOptions{
		IO:     f.IO,
		Store:  f.Store,
		Signal: signalController,
		Alive:  processAlive,
		Poll:   50 * time.Millisecond,
	}
	cmd := &cobra.Command{
		Use:   "kill-controller [options] <controller name>",
		Short: "Stop a local controller and delete all its models and data",
		Long: `Stop a local controller: its jujud gets SIGTERM, then SIGKILL if it has not exited
within --timeout. Its data directory is deleted and the client forgets it.

Asks for confirmation on a terminal unless --no-prompt is given.`,
		Example:     "  juju kill-controller local --no-prompt",
		Annotations: map[string]string{cmdutil.SeeAlso: "destroy-controller, bootstrap, controllers, destroy-model"},
		Args:        cmdutil.ExactlyOneArg("no controller specified"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			if runF != nil {
				return runF(opts)
			}
			return killControllerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoPrompt, "no-prompt", false, "Do not ask for confirmation")
	cmd.Flags().DurationVarP(&opts.Timeout, "timeout", "t", 10*time.Second, "How long to wait for jujud to stop before killing it")
	return cmd
}

func killControllerRun(ctx context.Context, opts *killControllerOptions) error {
	d, err := opts.Store.ControllerByName(opts.Name)
	if errors.Is(err, apierr.NotFound) {
		return fmt.Errorf("controller %q not found", opts.Name)
	}
	if err != nil {
		return err
	}
	if !opts.NoPrompt {
		if err := confirm(ctx, opts); err != nil {
			return err
		}
	}
	opts.IO.Infof("Destroying controller %q", opts.Name)
	if err := stopController(ctx, opts, d); err != nil {
		return err
	}
	if err := opts.Store.RemoveController(opts.Name); err != nil {
		return err
	}
	opts.IO.Infof("Controller %q destroyed", opts.Name)
	return nil
}

// confirm asks on the terminal; without one the user must pass --no-prompt.
func confirm(ctx context.Context, opts *killControllerOptions) error {
	if err := cmdutil.RequireTerminal(opts.IO); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "WARNING This command will destroy the %q controller and all its resources\n\nContinue? (y/N): ", opts.Name)
	yes, err := cmdutil.ReadYesContext(ctx, opts.IO)
	if err != nil {
		return fmt.Errorf("controller destruction: %w", err)
	}
	if !yes {
		return errors.New("controller destruction aborted")
	}
	return nil
}

// controllerPID finds the pid of a local controller's jujud: from bootstrap.json, which jujud
// wrote, else from the pid file bootstrap wrote.
func controllerPID(d *cmdutil.ControllerDetails) int {
	if d.DataDir != "" {
		if info, err := readBootstrapInfo(d.DataDir); err == nil && info.PID > 0 {
			return info.PID
		}
	}
	path := d.PIDFile
	if path == "" && d.DataDir != "" {
		path = filepath.Join(d.DataDir, pidFile)
	}
	return readPID(path)
}

// readPID reads a pid file; 0 when there is none or it holds no number.
func readPID(path string) int {
	if path == "" {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

// agentHostPIDFile is where jujud's agent host (jujud agents, which runs the machine and unit
// agents apart from jujud) writes its pid in the data directory.
const agentHostPIDFile = "agents.pid"

// agentHostPID is the pid of a local controller's agent host, or 0.
func agentHostPID(d *cmdutil.ControllerDetails) int {
	if d.DataDir == "" {
		return 0
	}
	return readPID(filepath.Join(d.DataDir, agentHostPIDFile))
}

// signalController sends SIGTERM to jujud alone, so it can stop its workers in order; SIGKILL
// goes to its whole process group when jujud leads one (bootstrap starts it in its own
// session), so that nothing it started outlives it.
func signalController(pid int, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			return syscall.Kill(-pid, sig)
		}
	}
	return syscall.Kill(pid, sig)
}

// stopProcess sends SIGTERM, waits up to the timeout, then SIGKILL.
func stopProcess(ctx context.Context, opts *killControllerOptions, pid int) error {
	if err := opts.Signal(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("stopping jujud (pid %d): %w", pid, err)
	}
	if waitExit(ctx, opts, pid, opts.Timeout) {
		return nil
	}
	opts.IO.Warningf("jujud (pid %d) did not stop within %s, killing it", pid, opts.Timeout)
	if err := opts.Signal(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing jujud (pid %d): %w", pid, err)
	}
	if !waitExit(ctx, opts, pid, 5*time.Second) {
		return fmt.Errorf("jujud (pid %d) is still running after SIGKILL", pid)
	}
	return nil
}

func waitExit(ctx context.Context, opts *killControllerOptions, pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for opts.Alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(opts.Poll):
		}
	}
	return true
}
