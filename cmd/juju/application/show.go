package application

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/status"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// showAPI is the part of the client "juju show-application" uses.
type showAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ showAPI = (*client.Client)(nil)

type showOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (showAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model        string
	Applications []string
	Format       output.Format
	Output       string
	UTC          bool
}

// NewCmdShow returns "juju show-application <application> [...]": show applications with their
// charm, base, constraints and relations.
func NewCmdShow(f *cmdutil.Factory, runF func(*showOptions) error) *cobra.Command {
	opts := &showOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[showAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "show-application [options] <application name> [...]",
		Short: "Display information about applications",
		Long: `Display information about applications: charm, base, constraints, how many units and
relations they have, and each endpoint's relations.

An application that is not alive shows its life, what its removal waits for
(removal-blocked-by) and, when a forced removal is scheduled, when it takes over
(forced-removal-at).`,
		Example:     "  juju show-application mysql\n  juju show-application mysql wordpress --format json",
		Annotations: map[string]string{cmdutil.SeeAlso: "show-unit, status, config, constraints"},
		Args:        cmdutil.AtLeastOneArg("an application name must be supplied", names.IsValidApplication, "application name %s not valid"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Applications = args
			if runF != nil {
				return runF(opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Display times in UTC")
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
	fs, err := c.FullStatus(ctx, model.UUID, opts.Applications)
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	sv := status.NewView(fs, "", time.Time{}, opts.UTC)
	found := map[string]*jujupb.ApplicationStatus{}
	for _, pa := range fs.GetApplications() {
		found[pa.GetName()] = pa
	}
	view := map[string]*applicationDetailView{}
	for _, name := range opts.Applications {
		pa, ok := found[name]
		if !ok {
			return apierr.Errorf(apierr.NotFound, "application %q not found", name)
		}
		view[name] = newApplicationDetailView(pa, sv.Applications[name])
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// applicationDetailView is one application of "juju show-application", keyed by its name in the
// output.
type applicationDetailView struct {
	Charm string `json:"charm" yaml:"charm"`
	Base  string `json:"base,omitempty" yaml:"base,omitempty"`
	// Channel is the charm's channel; local charms, the only ones the status carries, have none.
	Channel     string `json:"channel,omitempty" yaml:"channel,omitempty"`
	Constraints string `json:"constraints,omitempty" yaml:"constraints,omitempty"`
	Principal   bool   `json:"principal" yaml:"principal"`
	Exposed     bool   `json:"exposed" yaml:"exposed"`
	Life        string `json:"life,omitempty" yaml:"life,omitempty"`
	// EndpointBindings binds the default ("") and every endpoint of the charm to a space; the
	// local provider has one, Juju's default "alpha".
	EndpointBindings map[string]string `json:"endpoint-bindings,omitempty" yaml:"endpoint-bindings,omitempty"`
	// ExposedEndpoints are its expose rules by endpoint, as status shows them.
	ExposedEndpoints map[string]*status.ExposedEndpointView `json:"exposed-endpoints,omitempty" yaml:"exposed-endpoints,omitempty"`

	status.Removal `yaml:",inline"`

	UnitCount     int                      `json:"unit-count" yaml:"unit-count"`
	RelationCount int                      `json:"relation-count" yaml:"relation-count"`
	Relations     status.EndpointRelations `json:"relations,omitempty" yaml:"relations,omitempty"`
}

// newApplicationDetailView shows pa, whose status view is av.
func newApplicationDetailView(pa *jujupb.ApplicationStatus, av *status.ApplicationView) *applicationDetailView {
	return &applicationDetailView{
		Charm:            pa.GetCharmName(),
		Base:             status.DisplayBase(av.Base),
		Constraints:      pa.GetConstraints(),
		Principal:        !pa.GetSubordinate(),
		Exposed:          av.Exposed,
		Life:             av.Life,
		EndpointBindings: endpointBindings(pa.GetEndpoints()),
		ExposedEndpoints: av.ExposedEndpoints,
		Removal:          av.Removal,
		UnitCount:        int(pa.GetUnitCount()),
		RelationCount:    int(pa.GetRelationCount()),
		Relations:        av.Relations,
	}
}

// defaultSpace is the one network space of the local provider, named as Juju names its default.
const defaultSpace = "alpha"

// endpointBindings is Juju's endpoint-bindings: the default binding ("") and each endpoint,
// all to the default space; nil when the controller sent no endpoints.
func endpointBindings(endpoints []string) map[string]string {
	if len(endpoints) == 0 {
		return nil
	}
	b := map[string]string{"": defaultSpace}
	for _, ep := range endpoints {
		b[ep] = defaultSpace
	}
	return b
}
