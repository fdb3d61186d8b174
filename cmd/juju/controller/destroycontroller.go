package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/model"
	"github.com/jujuclone/juju/output"
)

// destroyControllerAPI is what "juju destroy-controller" needs of the controller: its models
// with their contents, and destroy-model's calls to empty them.
type destroyControllerAPI interface {
	ListModels(ctx context.Context) ([]*jujupb.Model, error)
	model.DestroyAPI
}

type destroyControllerOptions struct {
	IO    *output.Streams
	Store *cmdutil.Store
	// Client connects to the named controller.
	Client func(ctx context.Context, controller string) (destroyControllerAPI, error)
	// Stop stops the controller's jujud, as kill-controller does.
	Stop func(ctx context.Context, d *cmdutil.ControllerDetails) error

	Name             string
	DestroyAllModels bool
	// DestroyStorage and ReleaseStorage are Juju's choice for the models' storage; this
	// controller has none, so either is accepted and changes nothing.
	DestroyStorage bool
	ReleaseStorage bool
	Force          bool
	NoWait         bool
	NoPrompt       bool
	// Timeout bounds the wait for each model being destroyed.
	Timeout time.Duration
}

// NewCmdDestroyController returns "juju destroy-controller <name>": destroy a controller
// cleanly, its models first.
func NewCmdDestroyController(f *cmdutil.Factory, runF func(*destroyControllerOptions) error) *cobra.Command {
	kill := &killControllerOptions{IO: f.IO, Signal: signalController, Alive: processAlive, Poll: 50 * time.Millisecond, Timeout: 10 * time.Second}
	opts := &destroyControllerOptions{
		IO:    f.IO,
		Store: f.Store,
		Client: func(ctx context.Context, controller string) (destroyControllerAPI, error) {
			c, err := f.Connect(ctx, controller)
			if err != nil {
				return nil, err
			}
			return cmdutil.WatchClient{Client: c}, nil
		},
		Stop: func(ctx context.Context, d *cmdutil.ControllerDetails) error { return stopController(ctx, kill, d) },
	}
	cmd := &cobra.Command{
		Use:   "destroy-controller [options] <controller name>",
		Short: "Destroys a controller",
		Long: `Destroy a controller cleanly: the models holding machines or applications are destroyed
first, as destroy-model destroys them (their units run their stop and remove hooks), then
the controller's jujud is stopped, its data deleted, and the client forgets it.

Without --destroy-all-models the command refuses while any model other than "controller"
holds machines or applications, and lists them; empty models go with the controller. Each
model has --timeout to go; --force and --no-wait are passed on to its destruction as
destroy-model takes them.

--destroy-storage and --release-storage (one or the other) are Juju's choice for the
models' storage. This controller has no storage, so there is nothing to destroy or release:
either is accepted.

Asks for confirmation on a terminal unless --no-prompt is given; without a terminal and
without --no-prompt it fails before anything is sent. kill-controller stops a controller
without destroying its models first.`,
		Example: `  juju destroy-controller local --no-prompt
  juju destroy-controller local --destroy-all-models --no-prompt
  juju destroy-controller local --destroy-all-models --destroy-storage --force --no-wait`,
		Annotations: map[string]string{cmdutil.SeeAlso: "kill-controller, bootstrap, controllers, destroy-model"},
		Args:        cmdutil.ExactlyOneArg("no controller specified"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.DestroyStorage && opts.ReleaseStorage {
				return cmdutil.FlagErrorf("--destroy-storage and --release-storage cannot both be specified")
			}
			if err := cmdutil.ValidateNoWait(opts.Force, opts.NoWait); err != nil {
				return err
			}
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			if runF != nil {
				return runF(opts)
			}
			return destroyControllerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DestroyAllModels, "destroy-all-models", false, "Destroy all hosted models in the controller")
	cmd.Flags().BoolVar(&opts.DestroyStorage, "destroy-storage", false, "Destroy all storage instances managed by the controller (there is none here)")
	cmd.Flags().BoolVar(&opts.ReleaseStorage, "release-storage", false, "Release all storage instances from management of the controller (there is none here)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Force destroy hosted models ignoring any errors")
	cmd.Flags().BoolVar(&opts.NoWait, "no-wait", false, "Rush through hosted model destruction without waiting for each individual step to complete")
	cmd.Flags().BoolVar(&opts.NoPrompt, "no-prompt", false, "Do not ask for confirmation")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 30*time.Minute, "How long to wait for each model to be removed")
	return cmd
}

func destroyControllerRun(ctx context.Context, opts *destroyControllerOptions) error {
	d, err := opts.Store.ControllerByName(opts.Name)
	if errors.Is(err, apierr.NotFound) {
		return fmt.Errorf("controller %q not found", opts.Name)
	}
	if err != nil {
		return err
	}
	if !opts.NoPrompt {
		if err := cmdutil.RequireTerminal(opts.IO); err != nil {
			return fmt.Errorf("controller destruction: %w", err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "WARNING! This command will destroy the %q controller.\nThis includes all machines, applications, data and other resources.\n\nContinue? (y/N): ", opts.Name)
		yes, err := cmdutil.ReadYesContext(ctx, opts.IO)
		if err != nil {
			return fmt.Errorf("controller destruction: %w", err)
		}
		if !yes {
			return errors.New("controller destruction aborted")
		}
	}
	c, err := opts.Client(ctx, opts.Name)
	if err != nil {
		return fmt.Errorf("cannot connect to API: %w", err)
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		return fmt.Errorf("listing models: %w", err)
	}
	var busy []*jujupb.Model
	for _, m := range models {
		if m.GetName() != "controller" && (m.GetMachineCount() > 0 || m.GetApplicationCount() > 0) {
			busy = append(busy, m)
		}
	}
	if len(busy) > 0 && !opts.DestroyAllModels {
		return liveModelsError(opts.Name, busy)
	}
	opts.IO.Infof("Destroying controller")
	if len(busy) > 0 {
		// All at once, so that they drain together; then wait for each.
		for _, m := range busy {
			if _, err := c.DestroyModel(ctx, &jujupb.DestroyModelRequest{Model: m.GetUuid(), Force: opts.Force, NoWait: opts.NoWait}); err != nil && !errors.Is(err, apierr.NotFound) {
				return fmt.Errorf("cannot destroy controller: destroying model %q: %w", m.GetName(), err)
			}
		}
		opts.IO.Infof("Waiting for hosted model resources to be reclaimed")
		for _, m := range busy {
			err := model.DestroyAndWait(ctx, opts.IO, c, m.GetUuid(), opts.Force, opts.NoWait, opts.Timeout)
			if err != nil && !errors.Is(err, apierr.NotFound) {
				return fmt.Errorf("cannot destroy controller: model %q: %w", m.GetName(), err)
			}
		}
		opts.IO.Infof("All hosted models reclaimed, cleaning up controller machines")
	}
	if err := opts.Stop(ctx, d); err != nil {
		return err
	}
	if err := opts.Store.RemoveController(opts.Name); err != nil {
		return err
	}
	opts.IO.Infof("Controller %q destroyed", opts.Name)
	return nil
}

// liveModelsError is Juju's refusal, listing the models that hold something.
func liveModelsError(controller string, models []*jujupb.Model) error {
	var b strings.Builder
	for _, m := range models {
		owner := m.GetOwner()
		if owner == "" {
			owner = "admin"
		}
		life := m.GetLife()
		if life == "" {
			life = "alive"
		}
		fmt.Fprintf(&b, "\n\t%s/%s (%s)", owner, m.GetName(), life)
		if n := m.GetMachineCount(); n > 0 {
			fmt.Fprintf(&b, ", %d machine%s", n, plural(int(n)))
		}
		if n := m.GetApplicationCount(); n > 0 {
			fmt.Fprintf(&b, ", %d application%s", n, plural(int(n)))
		}
	}
	return fmt.Errorf(`cannot destroy controller %q

The controller has live hosted models. If you want
to destroy all hosted models in the controller,
run this command again with the --destroy-all-models
option.

Models:%s`, controller, b.String())
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// memberPIDs are the pids of the jujud of every member enable-ha added to a local controller.
func memberPIDs(d *cmdutil.ControllerDetails) []int {
	if d.DataDir == "" {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(d.DataDir, "members", "*"))
	var pids []int
	for _, dir := range dirs {
		if pid := readPID(filepath.Join(dir, pidFile)); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopController stops a local controller's jujud (every member's), then its agent host (which jujud would
// start again), and deletes its data; a controller the store has no process or data
// directory for is only forgotten.
func stopController(ctx context.Context, kill *killControllerOptions, d *cmdutil.ControllerDetails) error {
	if pid := controllerPID(d); pid > 0 && kill.Alive(pid) {
		if err := stopProcess(ctx, kill, pid); err != nil {
			return err
		}
	}
	// The members enable-ha added live in members/<id> of the controller's directory.
	for _, pid := range memberPIDs(d) {
		if kill.Alive(pid) {
			if err := stopProcess(ctx, kill, pid); err != nil {
				return err
			}
		}
	}
	// SIGTERM: the host stops its agents, and they their hooks.
	if pid := agentHostPID(d); pid > 0 && kill.Alive(pid) {
		if err := stopProcess(ctx, kill, pid); err != nil {
			return err
		}
	}
	if d.DataDir != "" {
		if err := os.RemoveAll(d.DataDir); err != nil {
			return fmt.Errorf("removing controller data: %w", err)
		}
	}
	return nil
}
