package machine

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/output"
)

// listAPI is the part of the client "juju machines" uses.
type listAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ listAPI = (*client.Client)(nil)

type listOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (listAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model   string
	Format  output.Format
	Output  string
	UTC     bool
	Color   bool
	NoColor bool
}

// NewCmdList returns "juju machines" (alias list-machines): the Machine table of juju status.
func NewCmdList(f *cmdutil.Factory, runF func(*listOptions) error) *cobra.Command {
	opts := &listOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[listAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "machines [options]",
		Aliases: []string{"list-machines"},
		Short:   "List the machines of a model",
		Long: `List the model's machines and containers as the Machine section of juju status shows them:
Machine, State (the machine agent's status), Address, Inst id, Base, AZ (availability zone) and
Message, naturally sorted (2 before 10), containers after their host.

--format json and yaml give the model's name and the machines in the shape juju status uses
(containers under their host); they are a stable interface for scripts.`,
		Example:     "  juju machines\n  juju machines --format json\n  juju list-machines -m other --no-color",
		Args:        cmdutil.NoArgs,
		Annotations: map[string]string{cmdutil.SeeAlso: "status, show-machine, add-machine, remove-machine"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Color && opts.NoColor {
				return cmdutil.FlagErrorf("cannot mix --no-color and --color")
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Display times in UTC")
	status.AddColorFlags(cmd, &opts.Color, &opts.NoColor)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func listRun(ctx context.Context, opts *listOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	fs, err := c.FullStatus(ctx, model.UUID, nil)
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	streams := status.ColorStreams(opts.IO, opts.Color, opts.NoColor, opts.Output)
	// The view's timestamp is not shown, so no clock is needed.
	sv := status.NewView(fs, model.Controller, time.Time{}, opts.UTC).WithColor(streams)
	if err := output.WriteFile(opts.Output, opts.Format, &listView{Model: model.Name, Machines: sv.Machines, status: sv}, streams); err != nil {
		return err
	}
	if len(sv.Machines) == 0 && opts.Format == output.Tabular {
		fmt.Fprintln(opts.IO.ErrOut, "No machines to display.")
	}
	return nil
}

// listView is what "juju machines" prints: the model's name and its machines as status shows
// them (containers under their host).
type listView struct {
	Model    string                         `json:"model" yaml:"model"`
	Machines map[string]*status.MachineView `json:"machines" yaml:"machines"`

	status *status.View
}

// Table is the Machine section of juju status.
func (v *listView) Table() []output.Table {
	return []output.Table{v.status.MachineTable()}
}
