package application

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/placement"
	"github.com/jujuclone/juju/output"
)

// addUnitAPI is the part of the client "juju add-unit" uses.
type addUnitAPI interface {
	AddUnits(ctx context.Context, req *jujupb.AddUnitsRequest) (*jujupb.AddUnitsResponse, error)
}

var _ addUnitAPI = (*client.Client)(nil)

type addUnitOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (addUnitAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	// WaitClient is the client --wait watches the new units with.
	WaitClient func(ctx context.Context) (cmdutil.WaitAPI, error)

	Model       string
	Application string
	NumUnits    int
	To          string
	cmdutil.WaitFlags

	placement []placement.Directive
}

// NewCmdAddUnit returns "juju add-unit <application>": add units to an application.
func NewCmdAddUnit(f *cmdutil.Factory, runF func(*addUnitOptions) error) *cobra.Command {
	opts := &addUnitOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[addUnitAPI](f),
		WaitClient:   cmdutil.WaitClientFunc(f),
	}
	cmd := &cobra.Command{
		Use:   "add-unit [options] <application name>",
		Short: "Add units to an application",
		Long: `Add -n units to a principal application. --to places them, one directive per unit:
an existing machine (3). Units without a directive get new machines. Juju's container
directives (lxd:3, lxd) are refused: the local provider has no containers. The controller
adds all the units of a call, with their machines, or none (a missing machine in --to adds
nothing); -n is at most ` + strconv.Itoa(limits.MaxUnitsPerCall) + ` per call.

As in Juju, success prints nothing (--verbose names the new units). With --wait the
command waits until the agent of every new unit is idle, showing progress on stderr; a
unit in error, or whose machine fails to start, ends the wait at once with exit code 1,
naming the unit and the reason; so does --timeout (default 10m) passing. --timeout is
only valid with --wait.`,
		Example: `  juju add-unit mysql
  juju add-unit mysql -n 2 --to 3,4
  juju add-unit mysql -n 2 --wait`,
		Annotations: map[string]string{cmdutil.SeeAlso: "remove-unit, deploy, status, add-machine"},
		Args:        cmdutil.ExactlyOneArg("no application specified"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			if err := names.ValidateApplicationName(opts.Application); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if err := checkNumUnits(opts.NumUnits); err != nil {
				return err
			}
			if err := opts.WaitFlags.Validate(cmd); err != nil {
				return err
			}
			if opts.To != "" {
				p, err := placement.Parse(opts.To)
				if err != nil {
					return cmdutil.FlagErrorWrap(err)
				}
				opts.placement = p
			}
			if runF != nil {
				return runF(opts)
			}
			return addUnitRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.NumUnits, "num-units", "n", 1, "Number of units to add")
	cmd.Flags().StringVar(&opts.To, "to", "", "Comma-separated placement directives: existing machine ids (the local provider has no containers)")
	cmdutil.AddWaitFlags(cmd, &opts.WaitFlags, "every new unit's agent is idle")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func addUnitRun(ctx context.Context, opts *addUnitOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if n := len(opts.placement); n > opts.NumUnits {
		opts.IO.Warningf("%d unit(s) will be added, extra placement directives will be ignored", opts.NumUnits)
	}
	var resp *jujupb.AddUnitsResponse
	err = cmdutil.Bulk(ctx, opts.IO, opts.NumUnits, "units to "+opts.Application, func(ctx context.Context) error {
		resp, err = c.AddUnits(ctx, &jujupb.AddUnitsRequest{
			Model:       model.UUID,
			Application: opts.Application,
			NumUnits:    int32(opts.NumUnits),
			Placement:   toPlacements(opts.placement),
		})
		return err
	})
	if err != nil {
		// The controller's errors already name the application and the reason.
		return err
	}
	units := cmdutil.UnitsOf(opts.Application, resp.GetUnits())
	for _, u := range units {
		opts.IO.Verbosef("added unit %s", u)
	}
	if !opts.Wait {
		return nil
	}
	wc, err := opts.WaitClient(ctx)
	if err != nil {
		return err
	}
	return cmdutil.WaitForUnits(ctx, opts.IO, wc, model.UUID, opts.Application, units, opts.Timeout)
}
