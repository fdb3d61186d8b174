// Package machine holds the commands that manage machines.
package machine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/constraints"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/placement"
	"github.com/jujuclone/juju/output"
)

// addAPI is the part of the client "juju add-machine" uses.
type addAPI interface {
	AddMachines(ctx context.Context, req *jujupb.AddMachinesRequest) ([]*jujupb.AddMachineResult, error)
}

var _ addAPI = (*client.Client)(nil)

type addOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (addAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	NumMachines int
	Base        string
	Series      string
	Constraints []string
	Placement   string

	base  base.Base
	cons  constraints.Value
	place *jujupb.Placement
}

// NewCmdAdd returns "juju add-machine": add machines. Juju's container placements parse, for
// Juju's syntax, but the local provider refuses them.
func NewCmdAdd(f *cmdutil.Factory, runF func(*addOptions) error) *cobra.Command {
	opts := &addOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[addAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "add-machine [options] [<container type>[:<machine>]]",
		Short: "Add machines to the model",
		Long: `Add -n new machines, with --base and --constraints. The controller adds all the
machines of a call or none; -n is at most ` + strconv.Itoa(limits.MaxMachinesPerCall) + ` per call.

The local provider has no containers and no manual provisioning: Juju's container
placements are refused by the controller, and ssh:<user>@<host> by this command. To place
units on a machine, add it here, then use "juju add-unit <app> --to <machine>" or
"juju deploy <charm> --to <machine>".`,
		Example: `  juju add-machine
  juju add-machine -n 2 --base ubuntu@22.04 --constraints cores=1
  juju add-machine --base ubuntu@24.04`,
		Annotations: map[string]string{cmdutil.SeeAlso: "machines, remove-machine, show-machine, retry-provisioning, add-unit, status"},
		Args:        cmdutil.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Placement = args[0]
			}
			if err := validateAdd(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return addRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.NumMachines, "num-machines", "n", 1, "The number of machines to add")
	cmd.Flags().StringVar(&opts.Base, "base", "", "The base to install on the new machines, e.g. ubuntu@22.04")
	cmd.Flags().StringVar(&opts.Series, "series", "", "The series to install (deprecated, use --base)")
	cmd.Flags().StringArrayVar(&opts.Constraints, "constraints", nil, "Constraints of the new machines (repeatable)")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func validateAdd(opts *addOptions) error {
	if opts.Series != "" && opts.Base != "" {
		return cmdutil.FlagErrorf("--series and --base cannot be specified together")
	}
	if opts.NumMachines < 1 {
		return cmdutil.FlagErrorf("-n must be a positive integer")
	}
	// The controller adds the machines of one call in one transaction, whole or not at all.
	if opts.NumMachines > limits.MaxMachinesPerCall {
		return cmdutil.FlagErrorf("-n %d: at most %d machines per call", opts.NumMachines, limits.MaxMachinesPerCall)
	}
	if opts.Placement != "" {
		p, err := parsePlacement(opts.Placement)
		if err != nil {
			return cmdutil.FlagErrorWrap(err)
		}
		if opts.NumMachines > 1 {
			return cmdutil.FlagErrorf("cannot use -n when specifying a placement directive")
		}
		opts.place = p
	}
	b, err := cmdutil.ParseBaseFlags(opts.IO.ErrOut, opts.Series, opts.Base)
	if err != nil {
		return err
	}
	opts.base = b
	// The same rule as deploy's: the local provider runs every Ubuntu release.
	if !opts.base.IsZero() && !base.LocalProviderRuns(opts.base) {
		return cmdutil.FlagErrorf("base %q is not supported, %s", opts.base.DisplayString(), base.LocalProviderString())
	}
	cons, err := cmdutil.ParseConstraints(opts.IO.ErrOut, opts.Constraints...)
	if err != nil {
		return err
	}
	if cons.Container != nil && *cons.Container != "" && *cons.Container != "none" {
		return cmdutil.FlagErrorf("container constraint %q not allowed when adding a machine", *cons.Container)
	}
	opts.cons = cons
	return nil
}

// parsePlacement accepts Juju's container placements (a new container, on a new machine or an
// existing one); the controller refuses them, as the local provider has no containers.
func parsePlacement(arg string) (*jujupb.Placement, error) {
	if strings.HasPrefix(arg, "ssh:") {
		return nil, fmt.Errorf(`manual provisioning (%q) is not supported by the local provider: add a machine with "juju add-machine"`, arg)
	}
	ds, err := placement.Parse(arg)
	if err != nil || len(ds) != 1 {
		return nil, fmt.Errorf("invalid placement directive %q", arg)
	}
	d := ds[0]
	switch {
	case d.IsExisting():
		return nil, errors.New("machine-id cannot be specified when adding machines")
	case d.IsContainer():
		return &jujupb.Placement{Scope: d.Scope, Directive: d.Machine}, nil
	}
	return nil, fmt.Errorf("placement directive %q is not supported by the local provider", arg)
}

func addRun(ctx context.Context, opts *addOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	req := &jujupb.AddMachinesRequest{Model: model.UUID}
	for range opts.NumMachines {
		p := &jujupb.AddMachineParams{Constraints: opts.cons.String(), Placement: opts.place}
		if !opts.base.IsZero() {
			p.Base = &jujupb.Base{Name: opts.base.OS, Channel: opts.base.Channel.String()}
		}
		req.Params = append(req.Params, p)
	}
	var results []*jujupb.AddMachineResult
	err = cmdutil.Bulk(ctx, opts.IO, opts.NumMachines, "machines", func(ctx context.Context) error {
		results, err = c.AddMachines(ctx, req)
		return err
	})
	if err != nil {
		// The controller's errors say what could not be added, and why; nothing was.
		return err
	}
	var errs []string
	for _, r := range results {
		if r.GetError() != "" {
			errs = append(errs, r.GetError())
			continue
		}
		kind := "machine"
		if strings.Contains(r.GetMachineId(), "/") {
			kind = "container"
		}
		opts.IO.Infof("created %s %s", kind, r.GetMachineId())
	}
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		fmt.Fprintln(opts.IO.ErrOut, "failed to create 1 machine")
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "failed to create %d machines\n", len(errs))
	}
	return errors.New(strings.Join(errs, ", "))
}
