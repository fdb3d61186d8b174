package application

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// exposeAPI is the part of the client "juju expose" and "juju unexpose" use.
type exposeAPI interface {
	Expose(ctx context.Context, req *jujupb.ExposeRequest) error
	Unexpose(ctx context.Context, req *jujupb.UnexposeRequest) error
}

var _ exposeAPI = (*client.Client)(nil)

type exposeOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (exposeAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Endpoints   []string
	ToSpaces    []string
	ToCIDRs     []string
}

// allNetworks are the CIDRs "juju expose" without options opens to.
var allNetworks = []string{"0.0.0.0/0", "::/0"}

// NewCmdExpose returns "juju expose <application> [--endpoints ...] [--to-spaces ...]
// [--to-cidrs ...]": make the ports an application's units open reachable from outside.
func NewCmdExpose(f *cmdutil.Factory, runF func(*exposeOptions) error) *cobra.Command {
	opts := &exposeOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[exposeAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "expose [options] <application name>",
		Short: "Makes an application publicly available over the network",
		Long: `Allow access from outside to the ports the application's units have opened (open-port).
Without options every port is reachable from 0.0.0.0/0 and ::/0.

--endpoints restricts an expose rule to the ports opened for those endpoints (the local
provider's units open their ports for every endpoint, so the rule applies to all of them);
--to-cidrs and --to-spaces say who may connect (the local provider has one space, "alpha").
Each "juju expose" replaces the rule of the endpoints it names (no --endpoints: the rule for
every endpoint) and keeps the others; "juju unexpose" removes rules. Status shows the rules
under exposed-endpoints.

There is no firewall on the local provider: the controller records, for each machine,
the ports it would open and from where in firewall.json in the machine's instance
directory (once the machine has had a rule), and opens nothing.`,
		Example: `  juju expose apache2
  juju expose apache2 --endpoints logs --to-cidrs 10.0.0.0/24
  juju expose apache2 --to-spaces alpha`,
		Annotations: map[string]string{cmdutil.SeeAlso: "unexpose, status"},
		Args:        appNameArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			opts.Endpoints, opts.ToSpaces, opts.ToCIDRs = splitComma(opts.Endpoints), splitComma(opts.ToSpaces), splitComma(opts.ToCIDRs)
			if runF != nil {
				return runF(opts)
			}
			return exposeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Endpoints, "endpoints", nil, "Expose only the ports that charms have opened for this comma-delimited list of endpoints")
	cmd.Flags().StringArrayVar(&opts.ToSpaces, "to-spaces", nil, "A comma-delimited list of spaces that should be able to access the application ports once exposed")
	cmd.Flags().StringArrayVar(&opts.ToCIDRs, "to-cidrs", nil, "A comma-delimited list of CIDRs that should be able to access the application ports once exposed")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func exposeRun(ctx context.Context, opts *exposeOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	// As Juju, the controller's message as it is: it names the application, endpoint, space
	// or CIDR at fault.
	return c.Expose(ctx, &jujupb.ExposeRequest{Model: model.UUID, Application: opts.Application, Endpoints: exposeRules(opts)})
}

// exposeRules is what Juju's client sends: nothing (every endpoint from every network) when
// no option narrows the rule, else one rule per endpoint named ("" without --endpoints) with
// the spaces and CIDRs given.
func exposeRules(opts *exposeOptions) []*jujupb.ExposedEndpoint {
	allNetworksOnly := !slices.ContainsFunc(opts.ToCIDRs, func(c string) bool { return !slices.Contains(allNetworks, c) })
	if len(opts.Endpoints) == 0 && len(opts.ToSpaces) == 0 && allNetworksOnly {
		return nil
	}
	endpoints := opts.Endpoints
	if len(endpoints) == 0 {
		endpoints = []string{""}
	}
	rules := make([]*jujupb.ExposedEndpoint, 0, len(endpoints))
	for _, ep := range endpoints {
		rules = append(rules, &jujupb.ExposedEndpoint{Endpoint: ep, ToSpaces: opts.ToSpaces, ToCidrs: opts.ToCIDRs})
	}
	return rules
}
