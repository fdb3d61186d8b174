package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// destroyAPI is what "juju destroy-model" needs of the controller: the destroy call (its dry
// run too) and a watch to see the model's contents and the model go.
type destroyAPI interface {
	DestroyModel(ctx context.Context, req *jujupb.DestroyModelRequest) (*jujupb.DestroyModelResponse, error)
	Watch(ctx context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error)
}

var _ destroyAPI = cmdutil.WatchClient{}

// DestroyAPI is what DestroyAndWait needs of the controller.
type DestroyAPI = destroyAPI

type destroyModelOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	// Client connects to the named controller.
	Client func(ctx context.Context, controller string) (destroyAPI, error)

	// Controller is from "<controller>:<model>", else empty (the current controller).
	Controller string
	Model      string
	NoPrompt   bool
	// DestroyStorage and ReleaseStorage are Juju's choice for the model's storage; this
	// controller has none, so either is accepted and changes nothing.
	DestroyStorage bool
	ReleaseStorage bool
	Force          bool
	NoWait         bool
	DryRun         bool
	Timeout        time.Duration
}

const defaultDestroyTimeout = 30 * time.Minute

// NewCmdDestroy returns "juju destroy-model [<controller>:]<model>": destroy a model and
// everything in it, and wait until it is gone.
func NewCmdDestroy(f *cmdutil.Factory, runF func(*destroyModelOptions) error) *cobra.Command {
	opts := &destroyModelOptions{
		IO:     f.IO,
		Store:  f.Store,
		Config: f.Config,
		Client: func(ctx context.Context, controller string) (destroyAPI, error) {
			c, err := f.Connect(ctx, controller)
			if err != nil {
				return nil, err
			}
			return cmdutil.WatchClient{Client: c}, nil
		},
	}
	cmd := &cobra.Command{
		Use:   "destroy-model [options] [<controller name>:]<model name>",
		Short: "Destroy a model and everything in it",
		Long: `Destroy a model: its applications, units and machines are removed, the machines'
instances released, and then the model itself. The command waits until the model is gone,
showing what is left, for at most --timeout. The controller model cannot be destroyed; use
kill-controller for that.

On a terminal the command shows what will be destroyed and asks for the model's name;
--no-prompt destroys without asking, and is required when stdin is not a terminal.
--dry-run only shows what would be destroyed.

Entities whose agents cannot finish their removal (a failed hook, a stopped agent) keep
the model waiting; --force makes the controller do the agents' work after a grace period
of one minute, or at once with --no-wait. Destroying a model that is already being
destroyed is not an error: it waits again, and --force applies to what is left.

--destroy-storage and --release-storage (one or the other) are Juju's choice for the
model's storage. This controller has no storage, so there is nothing to destroy or release:
either is accepted, so that scripts written for Juju (jubilant's temp_model) run unchanged.`,
		Example: `  juju destroy-model test
  juju destroy-model local:test --no-prompt
  juju destroy-model test --dry-run
  juju destroy-model test --no-prompt --force --no-wait --timeout 10m
  juju destroy-model test --no-prompt --destroy-storage`,
		Annotations: map[string]string{cmdutil.SeeAlso: "add-model, models, kill-controller, status"},
		Args:        cmdutil.ExactlyOneArg("no model specified"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ValidateNoWait(opts.Force, opts.NoWait); err != nil {
				return err
			}
			if opts.DestroyStorage && opts.ReleaseStorage {
				return cmdutil.FlagErrorf("--destroy-storage and --release-storage cannot both be specified")
			}
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			opts.Controller, opts.Model = cmdutil.SplitModel(args[0])
			if opts.Model == "" {
				return cmdutil.FlagErrorf("no model specified")
			}
			if !names.IsValidModel(opts.Model) {
				return cmdutil.FlagErrorf("%q is not a valid model name", opts.Model)
			}
			if runF != nil {
				return runF(opts)
			}
			return destroyModelRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoPrompt, "no-prompt", false, "Do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Remove what agents cannot remove, after a grace period")
	cmd.Flags().BoolVar(&opts.NoWait, "no-wait", false, "With --force, skip the grace period")
	cmd.Flags().BoolVar(&opts.DestroyStorage, "destroy-storage", false, "Destroy all storage instances in the model (there is none here)")
	cmd.Flags().BoolVar(&opts.ReleaseStorage, "release-storage", false, "Release all storage instances from the model (there is none here)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "Print what would be destroyed without destroying it")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultDestroyTimeout, "How long to wait for the model to be removed")
	return cmd
}

func destroyModelRun(ctx context.Context, opts *destroyModelOptions) error {
	// Without a terminal to ask on, fail before anything is sent: a script must say it
	// means it (--no-prompt).
	prompt := !opts.DryRun && !opts.NoPrompt
	if prompt {
		if err := cmdutil.RequireTerminal(opts.IO); err != nil {
			return fmt.Errorf("model destruction: %w", err)
		}
	}
	controller := opts.Controller
	if controller == "" {
		cfg, err := opts.Config()
		if err != nil {
			return err
		}
		controller = cfg.Controller
	}
	c, err := opts.Client(ctx, controller)
	if err != nil {
		return err
	}
	if opts.DryRun || prompt {
		// Validate first, then prompt: an unknown model or the controller model fails here.
		plan, err := c.DestroyModel(ctx, &jujupb.DestroyModelRequest{Model: opts.Model, Force: opts.Force, NoWait: opts.NoWait, DryRun: true})
		if err != nil {
			return err
		}
		opts.IO.Warningf("This command will destroy the %q model and affect the following resources. It cannot be stopped.", opts.Model)
		if opts.DryRun {
			writeDestroyPlan(opts.IO.Out, plan)
			return nil
		}
		fmt.Fprintln(opts.IO.ErrOut)
		writeDestroyPlan(opts.IO.ErrOut, plan)
		fmt.Fprint(opts.IO.ErrOut, "\nTo continue, enter the name of the model to be destroyed: ")
		answer, err := cmdutil.ReadLine(ctx, opts.IO.In)
		if err != nil {
			fmt.Fprintln(opts.IO.ErrOut)
			return fmt.Errorf("model destruction: %w", err)
		}
		if strings.TrimSpace(answer) != opts.Model {
			return fmt.Errorf("model destruction: %w", cmdutil.ErrAborted)
		}
	}
	uuid, err := destroyAndWait(ctx, opts, c)
	if err != nil {
		return err
	}
	return forgetModel(opts.Store, controller, opts.Model, uuid)
}

// writeDestroyPlan lists what a destroyed model takes with it, as Juju does.
func writeDestroyPlan(w io.Writer, plan *jujupb.DestroyModelResponse) {
	section := func(list []string, one, many, verb string, named bool) {
		n := len(list)
		what := many
		if n == 1 {
			what = one
		}
		fmt.Fprintf(w, " - %d %s will be %s\n", n, what, verb)
		if named && n > 0 {
			fmt.Fprintf(w, "  - %s list: %s\n", one, quotedList(list, 10))
		}
	}
	section(plan.GetMachines(), "machine", "machines", "destroyed", true)
	section(plan.GetApplications(), "application", "applications", "removed", true)
	section(plan.GetUnits(), "unit", "units", "removed", false)
}

// quotedList quotes the first max names and says how many more there are.
func quotedList(list []string, max int) string {
	var parts []string
	for i, s := range list {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(list)-max))
			break
		}
		parts = append(parts, fmt.Sprintf("%q", s))
	}
	return strings.Join(parts, " ")
}

// leftover is what the model still holds, as the watch reports it going.
type leftover struct {
	machines, applications map[string]bool
}

func newLeftover(resp *jujupb.DestroyModelResponse) *leftover {
	l := &leftover{machines: map[string]bool{}, applications: map[string]bool{}}
	for _, m := range resp.GetMachines() {
		l.machines[m] = true
	}
	for _, a := range resp.GetApplications() {
		l.applications[a] = true
	}
	return l
}

func (l *leftover) String() string {
	if len(l.machines)+len(l.applications) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d machine(s), %d application(s)", len(l.machines), len(l.applications))
}

// names describes what is left, for the timeout error.
func (l *leftover) names() string {
	var parts []string
	for _, s := range []struct {
		set       map[string]bool
		one, many string
	}{{l.machines, "machine", "machines"}, {l.applications, "application", "applications"}} {
		if len(s.set) == 0 {
			continue
		}
		list := slices.SortedFunc(maps.Keys(s.set), names.NaturalCompare)
		what := s.many
		if len(list) == 1 {
			what = s.one
		}
		parts = append(parts, fmt.Sprintf("%s %s", what, strings.Join(list, ", ")))
	}
	if len(parts) == 0 {
		return "the model itself"
	}
	return strings.Join(parts, "; ")
}

// destroyAndWait destroys the model and waits until it is gone, driven by the controller's
// watch (no polling). It returns the model's UUID.
func destroyAndWait(ctx context.Context, opts *destroyModelOptions, c destroyAPI) (string, error) {
	waitCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	// Watch first: every removal after the destroy call is reported.
	w, err := c.Watch(waitCtx, destroyWatch(opts.Model))
	if err != nil {
		return "", err
	}
	resp, err := c.DestroyModel(ctx, &jujupb.DestroyModelRequest{Model: opts.Model, Force: opts.Force, NoWait: opts.NoWait})
	if err != nil {
		w.Close()
		return "", err
	}
	uuid := resp.GetUuid()
	opts.IO.Infof("Destroying model")
	left := newLeftover(resp)
	p := cmdutil.NewProgress(opts.IO)
	defer p.Clear()
	timedOut := func() error {
		p.Clear()
		return fmt.Errorf("timed out after %s waiting for model %q to be removed; still there: %s (see juju status -m %s)",
			opts.Timeout, opts.Model, left.names(), opts.Model)
	}
	for {
		p.Show("Waiting for model to be removed" + left.String() + "...")
		ev, err := w.Next()
		if err == nil {
			switch {
			case ev.GetKind() == "model" && ev.GetRemoved():
				w.Close()
				p.Clear()
				opts.IO.Infof("Model destroyed.")
				return uuid, nil
			case ev.GetKind() == "machine" && ev.GetRemoved():
				delete(left.machines, ev.GetId())
			case ev.GetKind() == "application" && ev.GetRemoved():
				delete(left.applications, ev.GetId())
			}
			continue
		}
		w.Close()
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case waitCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			return "", timedOut()
		case !errors.Is(err, apierr.Unavailable):
			return "", fmt.Errorf("watching model %q: %w", opts.Model, err)
		}
		// The watch ended (the controller restarted, or we fell behind): watch again and read
		// what is left afresh. A model that is gone by then is destroyed.
		if w, err = c.Watch(waitCtx, destroyWatch(uuid)); err == nil {
			resp, err = c.DestroyModel(waitCtx, &jujupb.DestroyModelRequest{Model: uuid, DryRun: true})
			if err != nil {
				w.Close()
			}
		}
		switch {
		case errors.Is(err, apierr.NotFound):
			p.Clear()
			opts.IO.Infof("Model destroyed.")
			return uuid, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case waitCtx.Err() != nil:
			return "", timedOut()
		case err != nil:
			return "", fmt.Errorf("watching model %q: %w", opts.Model, err)
		}
		left = newLeftover(resp)
	}
}

// destroyWatch watches the model document and its applications and machines coming and going.
func destroyWatch(model string) *jujupb.WatchRequest {
	return &jujupb.WatchRequest{Model: model, Targets: []*jujupb.WatchTarget{
		{Kind: "model", Id: "model"},
		{Kind: "application", LifeOnly: true},
		{Kind: "machine", LifeOnly: true},
	}}
}

// forgetModel drops the destroyed model from the client store; it is no longer the current
// model if it was.
func forgetModel(store *cmdutil.Store, controller, name, uuid string) error {
	models, current, err := store.AllModels(controller)
	if err != nil {
		return err
	}
	if _, ok := models[current]; !ok && current == name {
		models[current] = cmdutil.ModelDetails{}
	}
	for n, d := range models {
		if n == name || (uuid != "" && d.UUID == uuid) {
			if err := store.RemoveModel(controller, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// DestroyAndWait destroys a model of the controller c is connected to and waits, for at most
// timeout, until it is gone, with destroy-model's progress on stderr (destroy-controller
// --destroy-all-models). force and noWait are destroy-model's --force and --no-wait.
func DestroyAndWait(ctx context.Context, io *output.Streams, c DestroyAPI, model string, force, noWait bool, timeout time.Duration) error {
	opts := &destroyModelOptions{IO: io, Model: model, Force: force, NoWait: noWait, Timeout: timeout}
	_, err := destroyAndWait(ctx, opts, c)
	return err
}
