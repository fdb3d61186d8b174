package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type whoamiOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	Format output.Format
	Output string
}

// NewCmdWhoami returns "juju whoami": the current controller, model and user, from the client
// store alone.
func NewCmdWhoami(f *cmdutil.Factory, runF func(*whoamiOptions) error) *cobra.Command {
	opts := &whoamiOptions{IO: f.IO, Store: f.Store, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "whoami [options]",
		Short: "Print the current controller, model and user",
		Long: `Print the controller and model that commands act on by default, and the user they
act as. Only the client store is read ($JUJU_DATA, with $JUJU_CONTROLLER and $JUJU_MODEL
taking precedence, as for every command): nothing is sent to a controller, so this works
when the controller is down.

The model line is left out when the controller has no current model. When there is no
current controller, or no account for it, whoami says so on stderr, prints nothing on
stdout, and exits 0 (as Juju does): test for an empty stdout in scripts.

The json and yaml keys are controller, model (left out when there is none) and user.`,
		Example: `  juju whoami
  juju whoami --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "controllers, models, switch"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return whoamiRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// whoamiView is the documented shape of "juju whoami --format json|yaml".
type whoamiView struct {
	Controller string `json:"controller" yaml:"controller"`
	Model      string `json:"model,omitempty" yaml:"model,omitempty"`
	User       string `json:"user" yaml:"user"`
}

// Table lays the view out as Juju does: "Controller:  local", one field a line.
func (v *whoamiView) Table() []output.Table {
	t := output.Table{Rows: [][]string{{"Controller:", v.Controller}}}
	if v.Model != "" {
		t.Rows = append(t.Rows, []string{"Model:", v.Model})
	}
	t.Rows = append(t.Rows, []string{"User:", v.User})
	return []output.Table{t}
}

func whoamiRun(_ context.Context, opts *whoamiOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	if cfg.Controller == "" {
		fmt.Fprintln(opts.IO.ErrOut, "There is no current controller.\nRun juju controllers to see available controllers.")
		return nil
	}
	if _, err := opts.Store.ControllerByName(cfg.Controller); err != nil {
		return err
	}
	acct, err := opts.Store.AccountDetails(cfg.Controller)
	if errors.Is(err, apierr.NotFound) {
		fmt.Fprintf(opts.IO.ErrOut, "You are not logged in to controller %q: the client store has no account for it.\n", cfg.Controller)
		return nil
	}
	if err != nil {
		return err
	}
	view := &whoamiView{Controller: cfg.Controller, User: acct.User}
	if cfg.Model != "" {
		view.Model = acct.User + "/" + cfg.Model
	} else if opts.Format == output.Tabular {
		fmt.Fprintf(opts.IO.ErrOut, "There is no current model for controller %s.\nUse \"juju switch\" to select a model.\n", cfg.Controller)
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}
