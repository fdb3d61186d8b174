package unit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// showAPI is the part of the client "juju show-unit" uses.
type showAPI interface {
	ShowUnit(ctx context.Context, model, unit string) (*jujupb.UnitDetail, error)
}

var _ showAPI = (*client.Client)(nil)

type showOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (showAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model  string
	Units  []string
	Format output.Format
	Output string
	UTC    bool
	// Endpoint and RelatedUnit narrow relation-info to one endpoint of the unit, and to what it
	// sees of one related unit.
	Endpoint    string
	RelatedUnit string
}

// NewCmdShow returns "juju show-unit <unit> [...]": show units with their relations and the
// relation data they see.
func NewCmdShow(f *cmdutil.Factory, runF func(*showOptions) error) *cobra.Command {
	opts := &showOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[showAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "show-unit [options] <unit name> [...]",
		Short: "Display information about units",
		Long: `Display information about units: where they run, whether they lead, and each relation
with the unit's own data and what it sees of the related units.

Each unit shows its life (alive, dying or dead); one that is not alive also shows what its
removal waits for (removal-blocked-by) and, when a forced removal is scheduled, when it
takes over (forced-removal-at).

--endpoint keeps only the relations of that endpoint of the unit; --related-unit keeps only
what the unit sees of that unit (and the relations it shares with it).`,
		Example:     "  juju show-unit mysql/0\n  juju show-unit mysql/0 wordpress/1 --format json\n  juju show-unit wordpress/0 --endpoint db --related-unit mysql/0",
		Annotations: map[string]string{cmdutil.SeeAlso: "show-application, status, resolved, debug-log"},
		Args:        cmdutil.AtLeastOneArg("an unit name must be supplied", names.IsValidUnit, "unit name %s not valid"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Units = args
			if opts.Endpoint != "" && !names.IsValidEndpoint(opts.Endpoint) {
				return cmdutil.FlagErrorf("endpoint name %q not valid", opts.Endpoint)
			}
			if opts.RelatedUnit != "" && !names.IsValidUnit(opts.RelatedUnit) {
				return cmdutil.FlagErrorf("unit name %s not valid", opts.RelatedUnit)
			}
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Display times in UTC")
	cmd.Flags().StringVar(&opts.Endpoint, "endpoint", "", "Only show relation data for the specified endpoint")
	cmd.Flags().StringVar(&opts.RelatedUnit, "related-unit", "", "Only show relation data for the specified unit")
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
	view := map[string]*unitDetailView{}
	for _, name := range opts.Units {
		d, err := c.ShowUnit(ctx, model.UUID, name)
		if errors.Is(err, apierr.NotFound) {
			return err // the server says which unit
		}
		if err != nil {
			return fmt.Errorf("getting unit %q: %w", name, err)
		}
		v := newUnitDetailView(d, opts.UTC)
		v.narrow(opts.Endpoint, opts.RelatedUnit)
		view[name] = v
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// unitDetailView is one unit of "juju show-unit", keyed by its name in the output.
type unitDetailView struct {
	WorkloadVersion string   `json:"workload-version,omitempty" yaml:"workload-version,omitempty"`
	Machine         string   `json:"machine,omitempty" yaml:"machine,omitempty"`
	OpenedPorts     []string `json:"opened-ports" yaml:"opened-ports"`
	PublicAddress   string   `json:"public-address,omitempty" yaml:"public-address,omitempty"`
	Charm           string   `json:"charm" yaml:"charm"`
	Leader          bool     `json:"leader" yaml:"leader"`
	// Life is always shown, "alive" included, as Juju does (jubilant's UnitInfo reads it).
	Life string `json:"life" yaml:"life"`

	status.Removal `yaml:",inline"`

	RelationInfo []relationInfoView `json:"relation-info,omitempty" yaml:"relation-info,omitempty"`
}

// relationInfoView is one relation of the unit: its endpoint, the other side's, and the data
// of the unit and of the related units.
type relationInfoView struct {
	RelationID      int64  `json:"relation-id" yaml:"relation-id"`
	Endpoint        string `json:"endpoint" yaml:"endpoint"`
	RelatedEndpoint string `json:"related-endpoint" yaml:"related-endpoint"`
	Life            string `json:"life,omitempty" yaml:"life,omitempty"`
	// ApplicationData: the other application's relation settings (relation-set --app).
	ApplicationData map[string]string          `json:"application-data" yaml:"application-data"`
	LocalUnit       relatedUnitView            `json:"local-unit" yaml:"local-unit"`
	RelatedUnits    map[string]relatedUnitView `json:"related-units,omitempty" yaml:"related-units,omitempty"`
}

// relatedUnitView is whether a unit is in a relation's scope, and its settings there.
type relatedUnitView struct {
	InScope bool              `json:"in-scope" yaml:"in-scope"`
	Data    map[string]string `json:"data" yaml:"data"`
}

func newUnitDetailView(d *jujupb.UnitDetail, utc bool) *unitDetailView {
	u := d.GetUnit()
	v := &unitDetailView{
		WorkloadVersion: d.GetWorkloadVersion(),
		Machine:         u.GetMachine(),
		OpenedPorts:     slices.SortedFunc(slices.Values(u.GetOpenPorts()), names.NaturalCompare),
		PublicAddress:   u.GetPublicAddress(),
		Charm:           d.GetCharmUrl(),
		Leader:          u.GetLeader(),
		Life:            cmp.Or(u.GetLife(), "alive"),
		Removal:         status.NewRemoval(u.GetBlockedBy(), u.GetForceAfter(), utc),
	}
	if v.OpenedPorts == nil {
		v.OpenedPorts = []string{} // Juju prints an empty list
	}
	for _, r := range d.GetRelations() {
		ri := relationInfoView{
			RelationID:      r.GetRelationId(),
			Endpoint:        r.GetEndpoint(),
			RelatedEndpoint: r.GetRelatedEndpoint(),
			Life:            status.NotAlive(r.GetLife()),
			ApplicationData: maps.Clone(r.GetApplicationData()),
			LocalUnit:       newRelatedUnitView(r.GetLocalUnit()),
		}
		if ri.ApplicationData == nil {
			ri.ApplicationData = map[string]string{} // Juju prints {} rather than leaving it out
		}
		for _, ru := range r.GetRelatedUnits() {
			if ri.RelatedUnits == nil {
				ri.RelatedUnits = map[string]relatedUnitView{}
			}
			ri.RelatedUnits[ru.GetUnit()] = newRelatedUnitView(ru)
		}
		v.RelationInfo = append(v.RelationInfo, ri)
	}
	slices.SortStableFunc(v.RelationInfo, func(a, b relationInfoView) int {
		return cmp.Or(cmp.Compare(a.RelationID, b.RelationID), cmp.Compare(a.Endpoint, b.Endpoint))
	})
	return v
}

// narrow keeps the relations of endpoint and, of each, only what the unit sees of relatedUnit
// ("" keeps all).
func (v *unitDetailView) narrow(endpoint, relatedUnit string) {
	v.RelationInfo = slices.DeleteFunc(v.RelationInfo, func(ri relationInfoView) bool {
		_, related := ri.RelatedUnits[relatedUnit]
		return (endpoint != "" && ri.Endpoint != endpoint) || (relatedUnit != "" && !related)
	})
	if relatedUnit == "" {
		return
	}
	for i, ri := range v.RelationInfo {
		v.RelationInfo[i].RelatedUnits = map[string]relatedUnitView{relatedUnit: ri.RelatedUnits[relatedUnit]}
	}
}

func newRelatedUnitView(ru *jujupb.RelatedUnit) relatedUnitView {
	// Juju prints an empty data map rather than leaving it out (jubilant reads it).
	v := relatedUnitView{InScope: ru.GetInScope(), Data: maps.Clone(ru.GetData())}
	if v.Data == nil {
		v.Data = map[string]string{}
	}
	return v
}
