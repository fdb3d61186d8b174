package controller

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type controllersOptions struct {
	IO    *output.Streams
	Store *cmdutil.Store
	// Connect returns a client of the named controller (--refresh).
	Connect func(ctx context.Context, controller string) (controllerInfoAPI, error)

	Refresh bool
	Format  output.Format
	Output  string
}

// NewCmdControllers returns "juju controllers": list the controllers the client knows.
func NewCmdControllers(f *cmdutil.Factory, runF func(*controllersOptions) error) *cobra.Command {
	opts := &controllersOptions{
		IO:    f.IO,
		Store: f.Store,
		Connect: func(ctx context.Context, controller string) (controllerInfoAPI, error) {
			return f.Connect(ctx, controller)
		},
	}
	cmd := &cobra.Command{
		Use:     "controllers",
		Aliases: []string{"list-controllers"},
		Short:   "List the controllers this client knows",
		Long: `List the controllers recorded in the client store; the current one is marked with *.

The counts (Models, Nodes: the machines of its models, HA: its members) are the last
known values, kept in the client store; --refresh connects to each controller and updates
them first. HA is "none" for a controller with one member, the number of members when all
of them take part, and active/total when some do not (down, or still joining).`,
		Example: `  juju controllers
  juju controllers --refresh
  juju controllers --format yaml`,
		Annotations: map[string]string{cmdutil.SeeAlso: "bootstrap, kill-controller, switch, whoami, models, show-controller, enable-ha"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return controllersRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Refresh, "refresh", false, "Connect to each controller to download the latest details")
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func controllersRun(ctx context.Context, opts *controllersOptions) error {
	all, current, err := opts.Store.AllControllers()
	if err != nil {
		return err
	}
	if len(all) == 0 && opts.Format == output.Tabular {
		return cmdutil.ErrNoControllers
	}
	if opts.Refresh {
		names := make([]string, 0, len(all))
		for name := range all {
			names = append(names, name)
		}
		sort.Strings(names)
		// One controller that cannot be reached does not hide the others (Juju's messages).
		for _, name := range names {
			c, err := opts.Connect(ctx, name)
			if err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "error connecting to api for %q: %v\n", name, err)
				continue
			}
			if err := refreshController(ctx, opts.Store, name, c); err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "error updating cached details for %q: %v\n", name, err)
			}
		}
		if all, current, err = opts.Store.AllControllers(); err != nil {
			return err
		}
	} else if opts.Format == output.Tabular && len(all) > 0 {
		opts.IO.Infof("Use --refresh option with this command to see the latest information.")
	}
	view := &controllersView{Controllers: map[string]controllerItem{}, CurrentController: current}
	for name, d := range all {
		item := controllerItem{
			UUID:         d.UUID,
			APIEndpoints: d.APIEndpoints,
			CACert:       d.CACert,
			Cloud:        d.Cloud,
			Region:       d.Region,
			AgentVersion: d.AgentVersion,
		}
		if d.MachineCount != nil && *d.MachineCount > 0 {
			item.MachineCount = d.MachineCount
		}
		if d.ControllerMachineCount > 0 {
			item.ControllerMachines = &controllerMachines{Active: d.ActiveControllerMachineCount, Total: d.ControllerMachineCount}
		}
		if acct, err := opts.Store.AccountDetails(name); err == nil {
			item.User = acct.User
			item.Access = "superuser"
		}
		if models, currentModel, err := opts.Store.AllModels(name); err == nil {
			item.CurrentModel = currentModel
			// As Juju: no count rather than a count of none.
			if n := len(models); n > 0 {
				item.ModelCount = &n
			}
		}
		view.Controllers[name] = item
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// refreshController caches what "juju controllers" shows of a controller: its models (and
// their machines), its members and its version.
func refreshController(ctx context.Context, store *cmdutil.Store, name string, c controllerInfoAPI) error {
	models, err := c.ListModels(ctx)
	if err != nil {
		return fmt.Errorf("listing models: %w", err)
	}
	members, _, err := c.ControllerMembers(ctx)
	if err != nil {
		return fmt.Errorf("listing controller members: %w", err)
	}
	cached := map[string]cmdutil.ModelDetails{}
	machines := 0
	for _, m := range models {
		cached[m.GetName()] = cmdutil.ModelDetails{UUID: m.GetUuid(), Type: modelType(m.GetType())}
		machines += int(m.GetMachineCount())
	}
	if err := store.SetModels(name, cached); err != nil {
		return err
	}
	active, total := memberCounts(members)
	return store.ModifyController(name, func(d *cmdutil.ControllerDetails) bool {
		if v := c.LoginVersion().GetVersion(); v != "" {
			d.AgentVersion = v
		}
		d.MachineCount = &machines
		d.ActiveControllerMachineCount, d.ControllerMachineCount = active, total
		return true
	})
}

// controllersView is the documented shape of "juju controllers --format json|yaml".
type controllersView struct {
	Controllers       map[string]controllerItem `json:"controllers" yaml:"controllers"`
	CurrentController string                    `json:"current-controller,omitempty" yaml:"current-controller,omitempty"`
}

type controllerItem struct {
	CurrentModel string   `json:"current-model,omitempty" yaml:"current-model,omitempty"`
	User         string   `json:"user,omitempty" yaml:"user,omitempty"`
	Access       string   `json:"access,omitempty" yaml:"access,omitempty"`
	UUID         string   `json:"uuid" yaml:"uuid"`
	APIEndpoints []string `json:"api-endpoints" yaml:"api-endpoints,flow"`
	CACert       string   `json:"ca-cert" yaml:"ca-cert"`
	Cloud        string   `json:"cloud" yaml:"cloud"`
	Region       string   `json:"region,omitempty" yaml:"region,omitempty"`
	AgentVersion string   `json:"agent-version,omitempty" yaml:"agent-version,omitempty"`
	ModelCount   *int     `json:"model-count,omitempty" yaml:"model-count,omitempty"`
	MachineCount *int     `json:"machine-count,omitempty" yaml:"machine-count,omitempty"`
	// ControllerMachines counts the controller's members, Juju's key.
	ControllerMachines *controllerMachines `json:"controller-machines,omitempty" yaml:"controller-machines,omitempty"`
}

// controllerMachines is Juju's count of controller machines (here, members): those taking part
// in HA and all of them. Juju's JSON says Active and Total (its struct has yaml tags only), its
// YAML active and total.
type controllerMachines struct {
	Active int `json:"Active" yaml:"active"`
	Total  int `json:"Total" yaml:"total"`
}

// Table renders Juju's controllers table.
func (v *controllersView) Table() []output.Table {
	names := make([]string, 0, len(v.Controllers))
	for name := range v.Controllers {
		names = append(names, name)
	}
	sort.Strings(names)
	t := output.Table{
		Header:     []string{"Controller", "Model", "User", "Access", "Cloud/Region", "Models", "Nodes", "HA", "Version"},
		RightAlign: []int{5, 6, 7},
	}
	for _, name := range names {
		c := v.Controllers[name]
		display := name
		if name == v.CurrentController {
			display += "*"
		}
		cloud := c.Cloud
		if c.Region != "" {
			cloud += "/" + c.Region
		}
		models := "-"
		if c.ModelCount != nil {
			models = strconv.Itoa(*c.ModelCount)
		}
		machines := "-"
		if c.MachineCount != nil {
			machines = strconv.Itoa(*c.MachineCount)
		}
		t.Rows = append(t.Rows, []string{
			display, dash(c.CurrentModel), dash(c.User), dash(c.Access), cloud, models, machines, haColumn(c.ControllerMachines), dash(c.AgentVersion),
		})
	}
	return []output.Table{t}
}

// haColumn is Juju's HA column: "-" when the members are not known, "none" for one, their
// number when all take part, else active/total.
func haColumn(m *controllerMachines) string {
	switch {
	case m == nil || m.Total == 0:
		return "-"
	case m.Total == 1:
		return "none"
	case m.Active < m.Total:
		return fmt.Sprintf("%d/%d", m.Active, m.Total)
	}
	return strconv.Itoa(m.Total)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
