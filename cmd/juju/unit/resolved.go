package unit

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/machine"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// resolvedAPI is the part of the client "juju resolved" uses.
type resolvedAPI interface {
	ResolveUnitErrors(ctx context.Context, req *jujupb.ResolveUnitErrorsRequest) ([]*jujupb.ResolveResult, error)
	machine.RetryProvisioningAPI
}

var _ resolvedAPI = (*client.Client)(nil)

type resolvedOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (resolvedAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model    string
	Units    []string
	Machines []string
	NoRetry  bool
	All      bool
	// Constraints replace the machines' constraints when ReplaceConstraints is set (seed 002);
	// canonical form, "" clears them.
	Constraints        string
	ReplaceConstraints bool
}

// NewCmdResolved returns "juju resolved [<unit>|<machine> ...]": let units in error go on (a
// failed hook suspends a unit, L-U2), and machines whose provisioning failed be provisioned
// again, optionally with new constraints (L-M5, seed 002).
func NewCmdResolved(f *cmdutil.Factory, runF func(*resolvedOptions) error) *cobra.Command {
	opts := &resolvedOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[resolvedAPI](f),
	}
	var cons []string
	cmd := &cobra.Command{
		Use:     "resolved [options] [<unit>|<machine> ...]",
		Aliases: []string{"resolve"},
		Short:   "Resolve units in error, or retry provisioning machines",
		Long: `A unit whose hook failed stays in error, and stops, until it is resolved: its agent then
re-runs the failed hook, or with --no-retry skips it and goes on as if it had succeeded.
--all resolves every unit in error. What each agent will do is printed on stderr.

A machine id instead of a unit retries provisioning a machine that failed to start (like
"juju retry-provisioning"); --constraints replaces its constraints first, for instance
when the ones it had cannot be met.`,
		Example: `  juju resolved mysql/0
  juju resolved mysql/0 wordpress/1 --no-retry
  juju resolved --all
  juju resolved 14 --constraints "mem=2G"`,
		Annotations: map[string]string{cmdutil.SeeAlso: "retry-provisioning, status, show-unit, debug-log"},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.All && len(args) > 0:
				return cmdutil.FlagErrorf("specifying unit names(s) with --all not supported")
			case !opts.All && len(args) == 0:
				return cmdutil.FlagErrorf("no unit specified")
			}
			opts.Units, opts.Machines = nil, nil
			for _, a := range args {
				switch {
				case names.IsValidUnit(a):
					opts.Units = append(opts.Units, a)
				case names.IsValidMachine(a):
					opts.Machines = append(opts.Machines, a)
				default:
					return cmdutil.FlagErrorf("unit name %q not valid", a)
				}
			}
			if cmd.Flags().Changed("constraints") {
				if len(opts.Units) > 0 || len(opts.Machines) == 0 {
					return cmdutil.FlagErrorf("--constraints can only be used with machines")
				}
				v, err := cmdutil.ParseConstraints(opts.IO.ErrOut, strings.Join(cons, " "))
				if err != nil {
					return err
				}
				opts.Constraints, opts.ReplaceConstraints = v.String(), true
			}
			if runF != nil {
				return runF(opts)
			}
			return resolvedRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoRetry, "no-retry", false, "Do not re-run the failed hook")
	cmd.Flags().BoolVar(&opts.All, "all", false, "Resolve every unit in error")
	cmd.Flags().StringArrayVar(&cons, "constraints", nil, "Replace the constraints of the machines given (repeatable)")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func resolvedRun(ctx context.Context, opts *resolvedOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	failed := false
	if len(opts.Units) > 0 || opts.All {
		results, err := c.ResolveUnitErrors(ctx, &jujupb.ResolveUnitErrorsRequest{
			Model: model.UUID, Units: opts.Units, All: opts.All, Retry: !opts.NoRetry,
		})
		if err != nil {
			return fmt.Errorf("resolving units: %w", err)
		}
		for _, r := range results {
			switch {
			case r.GetError() != "":
				machine.ReportFailure(opts.IO.ErrOut, r.GetName(), r.GetError())
				failed = true
			case r.GetNext() != "":
				opts.IO.Infof("%s: %s", r.GetName(), r.GetNext())
			}
		}
	}
	if len(opts.Machines) > 0 {
		machineFailed, err := machine.RetryMachines(ctx, c, opts.IO.ErrOut, &jujupb.RetryProvisioningRequest{
			Model: model.UUID, Machines: opts.Machines,
			Constraints: opts.Constraints, ReplaceConstraints: opts.ReplaceConstraints,
		})
		if err != nil {
			return err
		}
		failed = failed || machineFailed
	}
	if failed {
		return cmdutil.ErrSilent
	}
	return nil
}
