// Package model holds the commands that list, add, select and constrain models.
package model

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// modelsAPI is the part of the client "juju models" uses.
type modelsAPI interface {
	ListModels(ctx context.Context) ([]*jujupb.Model, error)
}

var _ modelsAPI = (*client.Client)(nil)

type modelsOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	Client func(ctx context.Context) (modelsAPI, error)
	// Now is the time status.since is told relative to.
	Now func() time.Time

	Controller string
	Format     output.Format
	Output     string
}

// NewCmdModels returns "juju models": list the models of the current controller.
func NewCmdModels(f *cmdutil.Factory, runF func(*modelsOptions) error) *cobra.Command {
	opts := &modelsOptions{
		IO:     f.IO,
		Store:  f.Store,
		Config: f.Config,
		Client: cmdutil.ClientFunc[modelsAPI](f),
		Now:    time.Now,
	}
	cmd := &cobra.Command{
		Use:     "models",
		Aliases: []string{"list-models"},
		Short:   "List the models of a controller",
		Long:    "List the models of the current controller (or -c); the current model is marked with *.",
		Example: `  juju models
  juju models -c local --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "add-model, switch, destroy-model, controllers, whoami"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return modelsRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddControllerFlag(cmd, &opts.Controller)
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func modelsRun(ctx context.Context, opts *modelsOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		return fmt.Errorf("listing models: %w", err)
	}
	cached := map[string]cmdutil.ModelDetails{}
	for _, m := range models {
		cached[m.GetName()] = cmdutil.ModelDetails{UUID: m.GetUuid(), Type: modelType(m.GetType())}
	}
	if err := opts.Store.SetModels(cfg.Controller, cached); err != nil {
		return err
	}
	user := "admin"
	if acct, err := opts.Store.AccountDetails(cfg.Controller); err == nil {
		user = acct.User
	}
	current, err := opts.Store.CurrentModel(cfg.Controller)
	if err != nil {
		return err
	}
	var controllerUUID string
	if d, err := opts.Store.ControllerByName(cfg.Controller); err == nil {
		controllerUUID = d.UUID
	}
	view := newModelsView(cfg.Controller, controllerUUID, user, current, models, opts.Now())
	if opts.Format != output.Tabular {
		return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Controller: %s\n\n", cfg.Controller)
	if err := output.Write(&buf, output.Tabular, view); err != nil {
		return err
	}
	if opts.Output != "" {
		if err := os.WriteFile(opts.Output, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing output file: %w", err)
		}
		return nil
	}
	_, err = opts.IO.Out.Write(buf.Bytes())
	return err
}

// modelsView is the documented shape of "juju models --format json|yaml".
type modelsView struct {
	Models       []modelItem `json:"models" yaml:"models"`
	CurrentModel string      `json:"current-model,omitempty" yaml:"current-model,omitempty"`
}

type modelItem struct {
	modelInfo    `yaml:",inline"`
	Access       string `json:"access" yaml:"access"`
	MachineCount int    `json:"machine-count" yaml:"machine-count"`
	UnitCount    int    `json:"unit-count" yaml:"unit-count"`
}

type statusItem struct {
	Current string `json:"current,omitempty" yaml:"current,omitempty"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	Since   string `json:"since,omitempty" yaml:"since,omitempty"`
}

func newModelsView(controller, controllerUUID, user, current string, models []*jujupb.Model, now time.Time) *modelsView {
	v := &modelsView{Models: []modelItem{}}
	for _, m := range models {
		v.Models = append(v.Models, modelItem{
			modelInfo:    *newModelInfo(controller, controllerUUID, user, m, now),
			Access:       "admin",
			MachineCount: int(m.GetMachineCount()),
			UnitCount:    int(m.GetUnitCount()),
		})
		if m.GetName() == current {
			v.CurrentModel = current
		}
	}
	sort.Slice(v.Models, func(i, j int) bool { return v.Models[i].Name < v.Models[j].Name })
	return v
}

// Table renders Juju's models table.
func (v *modelsView) Table() []output.Table {
	t := output.Table{
		Header:     []string{"Model", "Cloud/Region", "Type", "Status", "Machines", "Units", "Access", "Last connection"},
		RightAlign: []int{4, 5},
	}
	for _, m := range v.Models {
		name := m.ShortName
		if name == v.CurrentModel {
			name += "*"
		}
		cloud := m.Cloud
		if m.Region != "" {
			cloud += "/" + m.Region
		}
		status := "available"
		if m.Status != nil {
			status = m.Status.Current
		}
		units := "-"
		if m.UnitCount > 0 {
			units = strconv.Itoa(m.UnitCount)
		}
		t.Rows = append(t.Rows, []string{
			name, cloud, m.Type, status, strconv.Itoa(m.MachineCount), units, m.Access, "-",
		})
	}
	return []output.Table{t}
}

func modelType(t string) string {
	if t == "" {
		return "iaas"
	}
	return t
}
