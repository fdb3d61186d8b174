package model

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type switchOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	// LookupModel resolves a model of a controller, asking it when the store does not know it.
	LookupModel func(ctx context.Context, controller, name string) (*cmdutil.ModelRef, error)

	Target string
}

// NewCmdSwitch returns "juju switch [<controller>|<controller>:<model>|<model>]": select the
// current controller and model, or print them.
func NewCmdSwitch(f *cmdutil.Factory, runF func(*switchOptions) error) *cobra.Command {
	opts := &switchOptions{IO: f.IO, Store: f.Store, Config: f.Config, LookupModel: f.LookupModel}
	cmd := &cobra.Command{
		Use:   "switch [<controller>|<controller>:<model>|<controller>:|<model>]",
		Short: "Select or show the current controller and model",
		Long: `With no argument, print the current controller and model.

Otherwise make the named controller and/or model current. A bare name is a controller if one
is known by that name, else a model of the current controller.`,
		Example:     "  juju switch\n  juju switch other\n  juju switch local:default",
		Annotations: map[string]string{cmdutil.SeeAlso: "whoami, models, controllers, add-model"},
		Args:        cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = ""
			if len(args) == 1 {
				opts.Target = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return switchRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func switchRun(ctx context.Context, opts *switchOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	from := describe(opts.Store, cfg.Controller, cfg.Model)
	if opts.Target == "" {
		if cfg.Controller == "" {
			names, err := opts.Store.ControllerNames()
			if err != nil {
				return err
			}
			if len(names) == 0 {
				return cmdutil.ErrNoControllers
			}
			return cmdutil.ErrNoCurrentController
		}
		_, err := fmt.Fprintln(opts.IO.Out, from)
		return err
	}

	ctrl, model, err := resolveTarget(ctx, opts, cfg)
	if err != nil {
		return err
	}
	if err := opts.Store.SetCurrentController(ctrl); err != nil {
		return err
	}
	if model != "" {
		if err := opts.Store.SetCurrentModel(ctrl, model); err != nil {
			return err
		}
	} else if model, err = opts.Store.CurrentModel(ctrl); err != nil {
		return err
	}
	if from == "" {
		from = "<none>"
	}
	opts.IO.Infof("%s -> %s", from, describe(opts.Store, ctrl, model))
	return nil
}

// resolveTarget finds the controller and model (empty: keep the controller's current one) the
// user named.
func resolveTarget(ctx context.Context, opts *switchOptions, cfg *cmdutil.Config) (string, string, error) {
	target := opts.Target
	notFound := fmt.Errorf("%q is not the name of a model or controller", target)
	if ctrl, model, ok := strings.Cut(target, ":"); ok {
		if _, err := opts.Store.ControllerByName(ctrl); err != nil {
			if errors.Is(err, apierr.NotFound) {
				return "", "", notFound
			}
			return "", "", err
		}
		if model == "" {
			return ctrl, "", nil
		}
		m, err := opts.LookupModel(ctx, ctrl, stripOwner(model))
		if err != nil {
			return "", "", err
		}
		return ctrl, m.Name, nil
	}
	if _, err := opts.Store.ControllerByName(target); err == nil {
		return target, "", nil
	}
	if cfg.Controller == "" {
		return "", "", notFound
	}
	m, err := opts.LookupModel(ctx, cfg.Controller, stripOwner(target))
	if err != nil {
		if errors.Is(err, apierr.NotFound) {
			return "", "", notFound
		}
		return "", "", err
	}
	return cfg.Controller, m.Name, nil
}

func stripOwner(model string) string {
	if i := strings.LastIndex(model, "/"); i >= 0 {
		return model[i+1:]
	}
	return model
}

// describe prints controller:owner/model as Juju does ("" when there is no controller).
func describe(store *cmdutil.Store, ctrl, model string) string {
	if ctrl == "" {
		return ""
	}
	if model == "" {
		return ctrl
	}
	owner := "admin"
	if acct, err := store.AccountDetails(ctrl); err == nil {
		owner = acct.User
	}
	return ctrl + ":" + owner + "/" + model
}
