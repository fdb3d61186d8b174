package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v2"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/output"
)

// exportBundleAPI is the part of the client "juju export-bundle" uses: the model as a bundle
// sees it, and (for --include-charm-defaults) the applications' charm options.
type exportBundleAPI interface {
	DescribeModel(ctx context.Context, model string) (*jujupb.ModelDescription, error)
	GetConfig(ctx context.Context, model, app string) (*jujupb.ApplicationConfig, error)
}

var _ exportBundleAPI = (*client.Client)(nil)

type exportBundleOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (exportBundleAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model                string
	Filename             string
	IncludeCharmDefaults bool
}

// NewCmdExportBundle returns "juju export-bundle [--filename f] [--include-charm-defaults]":
// the model written as a bundle that redeploys it.
func NewCmdExportBundle(f *cmdutil.Factory, runF func(*exportBundleOptions) error) *cobra.Command {
	opts := &exportBundleOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[exportBundleAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "export-bundle [options]",
		Short: "Exports the current model configuration as a reusable bundle",
		Long: `Exports the current model configuration as a reusable bundle.

If --filename is not used, the configuration is printed to stdout.
 --filename specifies an output file.

The bundle is Juju 3.6's: default-base, then applications (charm, base, num_units, to,
expose, options, annotations, constraints, trust), the machines their units are on
(constraints, annotations, base), and the relations; an application exposed on some
endpoints or to some networks only has its exposed-endpoints in a second document, an
overlay ("--- # overlay.yaml"), as Juju writes it. Options are the values set with deploy
--config or juju config (with --include-charm-defaults, the charm's defaults too). What is
dying or dead is left out, and so are peer relations, which deploy creates itself.

Charms here are local uploads, so each application's charm is written as the charm's name
(charm: mysql) where Juju writes local:mysql-3, which cannot be deployed from a file:
"juju deploy ./bundle.yaml" looks such a name up in $JUJU_REPOSITORY as "juju deploy mysql"
does, so a model exported with $JUJU_REPOSITORY set redeploys from the same charms, to
this model (nothing changes) or to a new one.

Resources uploaded to the controller (deploy --resource, attach-resource) are not written,
as Juju writes only charm store revisions: a bundle gives a resource as the path of a file,
which the controller does not keep. Add them to the exported bundle, or in an overlay:
  applications:
    mysql:
      resources:
        backup: ./backup.tar.gz`,
		Example: `  juju export-bundle
  juju export-bundle --filename mymodel.yaml
  juju export-bundle --include-charm-defaults`,
		Annotations: map[string]string{cmdutil.SeeAlso: "deploy, status"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return exportBundleRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	cmd.Flags().StringVar(&opts.Filename, "filename", "", "Bundle file")
	cmd.Flags().BoolVar(&opts.IncludeCharmDefaults, "include-charm-defaults", false, "Whether to include charm config default values in the exported bundle")
	return cmd
}

func exportBundleRun(ctx context.Context, opts *exportBundleOptions) error {
	m, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	d, err := c.DescribeModel(ctx, m.UUID)
	if err != nil {
		return fmt.Errorf("describing model %q: %w", m.Name, err)
	}
	var defaults map[string]map[string]string
	if opts.IncludeCharmDefaults {
		if defaults, err = charmDefaults(ctx, c, m.UUID, d); err != nil {
			return err
		}
	}
	data, err := exportBundle(d, defaults)
	if err != nil {
		return err
	}
	if opts.Filename == "" {
		_, err := opts.IO.Out.Write(data)
		return err
	}
	if err := os.WriteFile(opts.Filename, data, 0o644); err != nil {
		return fmt.Errorf("while creating local file: %w", err)
	}
	opts.IO.Infof("Bundle successfully exported to %s", opts.Filename)
	return nil
}

// charmDefaults reads the default values of the options of each exported application's charm,
// as JSON, by application; options without a default are left out.
func charmDefaults(ctx context.Context, c exportBundleAPI, model string, d *jujupb.ModelDescription) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, a := range d.GetApplications() {
		if a.GetLife() != "alive" {
			continue
		}
		cfg, err := c.GetConfig(ctx, model, a.GetName())
		if err != nil {
			return nil, fmt.Errorf("getting the charm options of %q: %w", a.GetName(), err)
		}
		if cfg.GetCharm() != a.GetCharmUrl() {
			return nil, fmt.Errorf("the charm of %q changed while exporting (%s, now %s); try again", a.GetName(), a.GetCharmUrl(), cfg.GetCharm())
		}
		defaults := map[string]string{}
		for _, o := range cfg.GetOptions() {
			if o.GetDefaultJson() != "" {
				defaults[o.GetName()] = o.GetDefaultJson()
			}
		}
		out[a.GetName()] = defaults
	}
	return out, nil
}

// exportedBundle is a bundle as export-bundle writes it: Juju's bundle keys, in the order
// Juju's export writes them.
type exportedBundle struct {
	DefaultBase  string                          `yaml:"default-base,omitempty"`
	Applications map[string]*exportedApplication `yaml:"applications,omitempty"`
	Machines     map[string]*exportedMachine     `yaml:"machines,omitempty"`
	Relations    [][]string                      `yaml:"relations,omitempty"`
}

type exportedApplication struct {
	Charm            string                      `yaml:"charm,omitempty"`
	Base             string                      `yaml:"base,omitempty"`
	NumUnits         int                         `yaml:"num_units,omitempty"`
	To               []string                    `yaml:"to,omitempty"`
	Expose           bool                        `yaml:"expose,omitempty"`
	ExposedEndpoints map[string]exposedEndpoints `yaml:"exposed-endpoints,omitempty"`
	Options          map[string]any              `yaml:"options,omitempty"`
	Annotations      map[string]string           `yaml:"annotations,omitempty"`
	Constraints      string                      `yaml:"constraints,omitempty"`
	Trust            bool                        `yaml:"trust,omitempty"`
}

type exposedEndpoints struct {
	ExposeToSpaces []string `yaml:"expose-to-spaces,omitempty"`
	ExposeToCIDRs  []string `yaml:"expose-to-cidrs,omitempty"`
}

type exportedMachine struct {
	Constraints string            `yaml:"constraints,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	Base        string            `yaml:"base,omitempty"`
}

// overlayBundle is the second document: what Juju's bundles allow in overlays only.
type overlayBundle struct {
	Applications map[string]*overlayApplication `yaml:"applications"`
}

type overlayApplication struct {
	ExposedEndpoints map[string]exposedEndpoints `yaml:"exposed-endpoints"`
}

// errNothingToExport is Juju's refusal of a model without applications.
var errNothingToExport = errors.New("nothing to export as there are no applications")

// exportBundle writes the model described as a bundle, as Juju's ExportBundle does; defaults
// (JSON, by application and option) are added to the options the user did not set.
func exportBundle(d *jujupb.ModelDescription, defaults map[string]map[string]string) ([]byte, error) {
	defaultBase := d.GetDefaultBase()
	if defaultBase == "" {
		defaultBase = base.DefaultLTS.DisplayString()
	}
	b := &exportedBundle{DefaultBase: defaultBase, Applications: map[string]*exportedApplication{}, Machines: map[string]*exportedMachine{}}
	overlay := &overlayBundle{Applications: map[string]*overlayApplication{}}
	used := map[string]bool{}
	machines := map[string]bool{}
	for _, a := range d.GetApplications() {
		if a.GetLife() != "alive" {
			continue
		}
		ea := &exportedApplication{
			Charm: a.GetCharmName(), Annotations: a.GetAnnotations(), Constraints: a.GetConstraints(), Trust: a.GetTrust(),
		}
		appBase := a.GetBase()
		used[appBase] = true
		if appBase != defaultBase {
			ea.Base = appBase
		}
		if !a.GetSubordinate() {
			for _, u := range a.GetUnits() {
				if u.GetLife() != "alive" {
					continue
				}
				ea.NumUnits++
				ea.To = append(ea.To, u.GetMachine())
				machines[u.GetMachine()] = true
			}
		}
		if a.GetExposed() {
			if ex := exposure(a.GetExposedEndpoints()); ex == nil {
				ea.Expose = true
			} else {
				overlay.Applications[a.GetName()] = &overlayApplication{ExposedEndpoints: ex}
			}
		}
		options, err := options(a.GetName(), a.GetConfigJson(), defaults[a.GetName()])
		if err != nil {
			return nil, err
		}
		ea.Options = options
		b.Applications[a.GetName()] = ea
	}
	if len(b.Applications) == 0 {
		return nil, errNothingToExport
	}
	for _, m := range d.GetMachines() {
		if !machines[m.GetId()] {
			continue
		}
		em := &exportedMachine{Constraints: m.GetConstraints(), Annotations: m.GetAnnotations()}
		machineBase := m.GetBase()
		used[machineBase] = true
		if machineBase != defaultBase {
			em.Base = machineBase
		}
		b.Machines[m.GetId()] = em
	}
	// One base for everything: it is the default, said once. Several, without the model's
	// default among them: no default, each says its own.
	switch {
	case len(used) == 1 && !used[defaultBase]:
		for only := range used {
			b.DefaultBase = only
		}
		for _, a := range b.Applications {
			a.Base = ""
		}
		for _, m := range b.Machines {
			m.Base = ""
		}
	case len(used) > 1 && !used[defaultBase]:
		b.DefaultBase = ""
	}
	for _, r := range d.GetRelations() {
		if r.GetLife() != "alive" || len(r.GetEndpoints()) < 2 {
			continue // a peer relation comes with its application
		}
		if b.Applications[appOf(r.GetEndpoints()[0])] == nil || b.Applications[appOf(r.GetEndpoints()[1])] == nil {
			continue
		}
		b.Relations = append(b.Relations, slices.Clone(r.GetEndpoints()))
	}
	slices.SortFunc(b.Relations, slices.Compare)

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("encoding the bundle: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding the bundle: %w", err)
	}
	if len(overlay.Applications) > 0 {
		// As Juju: the overlay is a second document, marked so that it can be cut out and used
		// on its own (deploy --overlay).
		var ov bytes.Buffer
		oenc := yaml.NewEncoder(&ov)
		if err := oenc.Encode(overlay); err != nil {
			return nil, fmt.Errorf("encoding the bundle: %w", err)
		}
		if err := oenc.Close(); err != nil {
			return nil, fmt.Errorf("encoding the bundle: %w", err)
		}
		buf.WriteString("--- # overlay.yaml\n")
		buf.Write(ov.Bytes())
	}
	return buf.Bytes(), nil
}

func appOf(endpoint string) string {
	app, _, _ := strings.Cut(endpoint, ":")
	return app
}

// exposure is an application's exposure in a bundle's exposed-endpoints, or nil when it is
// every endpoint to every network, which Juju writes as "expose: true" (and never both, so
// that a bundle read by an older Juju does not open more than was meant).
func exposure(eps []*jujupb.ExposedEndpoint) map[string]exposedEndpoints {
	if len(eps) == 0 {
		return nil
	}
	if len(eps) == 1 && eps[0].GetEndpoint() == "" && len(eps[0].GetToSpaces()) == 0 &&
		!slices.ContainsFunc(eps[0].GetToCidrs(), func(c string) bool { return c != "0.0.0.0/0" && c != "::/0" }) {
		return nil
	}
	out := make(map[string]exposedEndpoints, len(eps))
	for _, e := range eps {
		ex := exposedEndpoints{ExposeToSpaces: slices.Sorted(slices.Values(e.GetToSpaces())), ExposeToCIDRs: slices.Sorted(slices.Values(e.GetToCidrs()))}
		out[e.GetEndpoint()] = ex
	}
	return out
}

// options turns config values (JSON) into bundle option values: strings, booleans, integers
// and floats as YAML writes them.
func options(app string, set, defaults map[string]string) (map[string]any, error) {
	if len(set)+len(defaults) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(set)+len(defaults))
	for _, values := range []map[string]string{defaults, set} {
		for k, v := range values {
			val, err := jsonValue(v)
			if err != nil {
				return nil, fmt.Errorf("option %q of %q: %w", k, app, err)
			}
			out[k] = val
		}
	}
	return out, nil
}

func jsonValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("value %q is not JSON: %w", s, err)
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		return n.Float64()
	}
	return v, nil
}
