package machine

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// showAPI is the part of the client "juju show-machine" uses.
type showAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ showAPI = (*client.Client)(nil)

type showOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (showAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model    string
	Machines []string
	Format   output.Format
	Output   string
	UTC      bool
}

// NewCmdShow returns "juju show-machine [<machine> ...]": show machines as juju status does.
func NewCmdShow(f *cmdutil.Factory, runF func(*showOptions) error) *cobra.Command {
	opts := &showOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[showAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "show-machine [options] <machine> [...]",
		Short: "Show a machine's status",
		Long: `Show machines, with their containers, in the shape juju status uses; without an id,
every machine of the model. --format tabular prints the Machine table only.

A machine that is not alive shows its life (in juju-status), what its removal waits for
(removal-blocked-by) and, when a forced removal is scheduled, when it takes over
(forced-removal-at).`,
		Example:     "  juju show-machine 0\n  juju show-machine 1 0 --format json\n  juju show-machine 0 --format tabular",
		Annotations: map[string]string{cmdutil.SeeAlso: "machines, add-machine, remove-machine, status, show-unit"},
		Args: func(_ *cobra.Command, args []string) error {
			for _, id := range args {
				if !names.IsValidMachine(id) {
					return cmdutil.FlagErrorf("invalid machine id %q", id)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Machines = args
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Display times in UTC")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func showRun(ctx context.Context, opts *showOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	fs, err := c.FullStatus(ctx, model.UUID, opts.Machines)
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	streams := *opts.IO
	streams.Color = opts.IO.Color && opts.Output == ""
	// The view's timestamp is not shown, so no clock is needed.
	sv := status.NewView(fs, model.Controller, time.Time{}, opts.UTC).WithColor(&streams)
	for _, id := range opts.Machines {
		if sv.Machine(id) == nil {
			return apierr.Errorf(apierr.NotFound, "machine %s not found", id)
		}
	}
	return output.WriteFile(opts.Output, opts.Format, &showView{Model: model.Name, Machines: sv.Machines, status: sv}, &streams)
}

// showView is what "juju show-machine" prints: the model's name and the machines as status
// shows them (containers under their host).
type showView struct {
	Model    string                         `json:"model" yaml:"model"`
	Machines map[string]*status.MachineView `json:"machines" yaml:"machines"`

	status *status.View
}

// Table is the Machine section of juju status.
func (v *showView) Table() []output.Table {
	return []output.Table{v.status.MachineTable()}
}
