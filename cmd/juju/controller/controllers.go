package controller

import (
	"context"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type controllersOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Format output.Format
	Output string
}

// NewCmdControllers returns "juju controllers": list the controllers the client knows.
func NewCmdControllers(f *cmdutil.Factory, runF func(*controllersOptions) error) *cobra.Command {
	opts := &controllersOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:     "controllers",
		Aliases: []string{"list-controllers"},
		Short:   "List the controllers this client knows",
		Long:    "List the controllers recorded in the client store; the current one is marked with *.",
		Example: `  juju controllers
  juju controllers --format yaml`,
		Annotations: map[string]string{cmdutil.SeeAlso: "bootstrap, kill-controller, switch, whoami, models"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return controllersRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func controllersRun(_ context.Context, opts *controllersOptions) error {
	all, current, err := opts.Store.AllControllers()
	if err != nil {
		return err
	}
	if len(all) == 0 && opts.Format == output.Tabular {
		return cmdutil.ErrNoControllers
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
		if acct, err := opts.Store.AccountDetails(name); err == nil {
			item.User = acct.User
			item.Access = "superuser"
		}
		if models, currentModel, err := opts.Store.AllModels(name); err == nil {
			item.CurrentModel = currentModel
			n := len(models)
			item.ModelCount = &n
		}
		view.Controllers[name] = item
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
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
}

// Table renders Juju's controllers table.
func (v *controllersView) Table() []output.Table {
	names := make([]string, 0, len(v.Controllers))
	for name := range v.Controllers {
		names = append(names, name)
	}
	sort.Strings(names)
	t := output.Table{
		Header:     []string{"Controller", "Model", "User", "Access", "Cloud/Region", "Models", "Machines", "HA", "Version"},
		RightAlign: []int{5, 6},
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
		t.Rows = append(t.Rows, []string{
			display, dash(c.CurrentModel), dash(c.User), dash(c.Access), cloud, models, "-", "none", dash(c.AgentVersion),
		})
	}
	return []output.Table{t}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
