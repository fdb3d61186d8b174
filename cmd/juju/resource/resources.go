// Package resource holds the commands of charm resources: juju resources and juju
// attach-resource (deploy and refresh take --resource, in cmd/juju/application).
package resource

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// resourcesAPI is the part of the client "juju resources" uses.
type resourcesAPI interface {
	ListResources(ctx context.Context, req *jujupb.ListResourcesRequest) (*jujupb.ListResourcesResponse, error)
}

var _ resourcesAPI = (*client.Client)(nil)

type resourcesOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (resourcesAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model   string
	Target  string
	Details bool
	Format  output.Format
	Output  string
}

// NewCmdResources returns "juju resources <application or unit>" (alias list-resources).
func NewCmdResources(f *cmdutil.Factory, runF func(*resourcesOptions) error) *cobra.Command {
	opts := &resourcesOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[resourcesAPI](f),
	}
	cmd := &cobra.Command{
		Use:     "resources [options] <application or unit>",
		Aliases: []string{"list-resources"},
		Short:   "Show the resources for an application or unit.",
		Long: `This command shows the resources required by and those in use by an existing
application or unit in your model.

For an application: every file resource its charm declares, who supplied the revision in use
("Supplied by": the uploading user, or "upload" while none was uploaded) and the revision,
shown as Juju shows an uploaded one: its upload time, UTC, in Juju's layout
(year-day-month, "2025-14-03T09:30"); "-" when there is none. For a unit: the revision it
fetched with resource-get ("-" until it does). --details shows, per unit, what it has and
what the application expects.

--format json and yaml carry each resource's name, type, path (the file's name on the
unit), revision (the number, growing with every upload), fingerprint (sha384, hex), size,
origin, whether one was uploaded (used), when and by whom; they are a stable interface for
scripts (see docs/scripting.md). With no resources, "No resources to display." goes to
stderr and nothing to stdout.`,
		Example: `  juju resources mysql
  juju resources mysql/0
  juju resources mysql --details --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "attach-resource, deploy, refresh"},
		Args:        cmdutil.ExactlyOneArg("missing application or unit name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if runF != nil {
				return runF(opts)
			}
			return resourcesRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Details, "details", false, "Show detailed information about resources used by each unit.")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

const noResources = "No resources to display."

func resourcesRun(ctx context.Context, opts *resourcesOptions) error {
	req := &jujupb.ListResourcesRequest{}
	switch {
	case names.IsValidApplication(opts.Target):
		req.Application = opts.Target
	case names.IsValidUnit(opts.Target):
		req.Unit = opts.Target
	default:
		return fmt.Errorf("%q is neither an application nor a unit", opts.Target)
	}
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	req.Model = model.UUID
	resp, err := c.ListResources(ctx, req)
	if err != nil {
		return fmt.Errorf("listing resources of %q: %w", opts.Target, err)
	}
	var view any
	empty := len(resp.GetResources()) == 0
	switch {
	case req.Unit == "" && opts.Details:
		view = newAppDetailsView(resp)
	case req.Unit == "":
		view = newAppView(resp)
	case opts.Details:
		view = newUnitDetailsView(resp, req.Unit)
	default:
		view = newUnitView(resp, req.Unit)
		empty = empty && len(unitOf(resp, req.Unit)) == 0
	}
	if empty {
		opts.IO.Infof("%s", noResources)
		return nil
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// resourceView is one resource as Juju's --format json|yaml gives it (FormattedAppResource).
type resourceView struct {
	ID            string `json:"resourceid,omitempty" yaml:"resourceid,omitempty"`
	ApplicationID string `json:"applicationId,omitempty" yaml:"applicationId,omitempty"`
	Name          string `json:"name" yaml:"name"`
	Type          string `json:"type" yaml:"type"`
	Path          string `json:"path" yaml:"path"`
	Description   string `json:"description,omitempty" yaml:"description,omitempty"`
	// Revision is the number, "-" for none.
	Revision    string `json:"revision,omitempty" yaml:"revision,omitempty"`
	Fingerprint string `json:"fingerprint" yaml:"fingerprint"`
	Size        int64  `json:"size" yaml:"size"`
	Origin      string `json:"origin" yaml:"origin"`
	// Used: a revision was uploaded.
	Used      bool   `json:"used" yaml:"used"`
	Timestamp string `json:"timestamp,omitempty" yaml:"timestamp,omitempty"`
	Username  string `json:"username,omitempty" yaml:"username,omitempty"`

	// What the table shows.
	combinedRevision string
	combinedOrigin   string
}

// uploadTime is how Juju's table shows an uploaded revision: its upload time as year, day,
// month (Juju's layout is "2006-02-01T15:04"), hours and minutes.
func uploadTime(at time.Time) string {
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d", at.Year(), at.Day(), int(at.Month()), at.Hour(), at.Minute())
}

// newResourceView formats one resource; revision says which it is (0: none, the charm's
// declaration only).
func newResourceView(r *jujupb.Resource) resourceView {
	v := resourceView{
		ID: r.GetApplication() + "/" + r.GetName(), ApplicationID: r.GetApplication(),
		Name: r.GetName(), Type: r.GetType(), Path: r.GetPath(), Description: r.GetDescription(),
		Revision: "-", Fingerprint: r.GetFingerprint(), Size: r.GetSize(), Origin: r.GetOrigin(),
		Used: r.GetRevision() > 0, Username: r.GetUsername(),
		combinedRevision: "-", combinedOrigin: r.GetOrigin(),
	}
	if v.Origin == "" {
		v.Origin, v.combinedOrigin = "upload", "upload"
	}
	if v.Used {
		v.Revision = strconv.FormatInt(r.GetRevision(), 10)
		at := time.Unix(0, r.GetTimestamp()).UTC()
		v.Timestamp = at.Format(time.RFC3339Nano)
		v.combinedRevision = uploadTime(at)
		if v.Username != "" {
			v.combinedOrigin = v.Username
		}
	}
	return v
}

// notFetched is what a unit shows for an application resource it has not fetched: the
// application's resource with no revision.
func notFetched(r *jujupb.Resource) resourceView {
	v := newResourceView(r)
	v.Revision, v.combinedRevision = "-", "-"
	return v
}

// appView is "juju resources <application>".
type appView struct {
	Resources []resourceView `json:"resources,omitempty" yaml:"resources,omitempty"`
}

func newAppView(resp *jujupb.ListResourcesResponse) *appView {
	v := &appView{}
	for _, r := range resp.GetResources() {
		v.Resources = append(v.Resources, newResourceView(r))
	}
	return v
}

func (v *appView) Table() []output.Table {
	t := output.Table{Header: []string{"Resource", "Supplied by", "Revision"}}
	for _, r := range v.Resources {
		t.Rows = append(t.Rows, []string{r.Name, r.combinedOrigin, r.combinedRevision})
	}
	return []output.Table{t}
}

// unitOf is what the unit fetched, by name.
func unitOf(resp *jujupb.ListResourcesResponse, unit string) map[string]*jujupb.Resource {
	out := map[string]*jujupb.Resource{}
	for _, u := range resp.GetUnits() {
		if u.GetUnit() != unit {
			continue
		}
		for _, r := range u.GetResources() {
			out[r.GetName()] = r
		}
	}
	return out
}

// unitView is "juju resources <unit>": the application's resources as the unit has them, then
// any the unit has that the charm no longer declares.
type unitView []resourceView

func newUnitView(resp *jujupb.ListResourcesResponse, unit string) unitView {
	fetched := unitOf(resp, unit)
	v := unitView{}
	for _, r := range resp.GetResources() {
		if got, ok := fetched[r.GetName()]; ok {
			v = append(v, newResourceView(got))
			delete(fetched, r.GetName())
		} else {
			v = append(v, notFetched(r))
		}
	}
	for _, u := range resp.GetUnits() {
		if u.GetUnit() != unit {
			continue
		}
		for _, r := range u.GetResources() { // by name, as the controller sorts them
			if _, left := fetched[r.GetName()]; left {
				v = append(v, newResourceView(r))
			}
		}
	}
	return v
}

func (v unitView) Table() []output.Table {
	t := output.Table{Header: []string{"Resource", "Revision"}}
	for _, r := range v {
		t.Rows = append(t.Rows, []string{r.Name, r.combinedRevision})
	}
	return []output.Table{t}
}

// detailView is one unit's view of one application resource (Juju's FormattedDetailResource).
type detailView struct {
	UnitID   string       `json:"unitID" yaml:"unitID"`
	Unit     resourceView `json:"unit" yaml:"unit"`
	Expected resourceView `json:"expected" yaml:"expected"`
}

// details lists, for each unit (all, or the one named), each application resource: what the
// unit has and what the application expects.
func details(resp *jujupb.ListResourcesResponse, only string) []detailView {
	var out []detailView
	for _, u := range resp.GetUnits() {
		if only != "" && u.GetUnit() != only {
			continue
		}
		fetched := unitOf(resp, u.GetUnit())
		for _, r := range resp.GetResources() {
			d := detailView{UnitID: u.GetUnit(), Expected: newResourceView(r), Unit: notFetched(r)}
			if got, ok := fetched[r.GetName()]; ok {
				d.Unit = newResourceView(got)
			}
			out = append(out, d)
		}
	}
	return out
}

// appDetailsView is "juju resources <application> --details".
type appDetailsView struct {
	Resources []detailView `json:"resources,omitempty" yaml:"resources,omitempty"`
}

func newAppDetailsView(resp *jujupb.ListResourcesResponse) *appDetailsView {
	return &appDetailsView{Resources: details(resp, "")}
}

func (v *appDetailsView) Table() []output.Table {
	t := output.Table{Header: []string{"Unit", "Resource", "Revision", "Expected"}}
	for _, d := range v.Resources {
		t.Rows = append(t.Rows, []string{d.UnitID, d.Expected.Name, d.Unit.combinedRevision, d.Expected.combinedRevision})
	}
	return []output.Table{t}
}

// unitDetailsView is "juju resources <unit> --details".
type unitDetailsView []detailView

func newUnitDetailsView(resp *jujupb.ListResourcesResponse, unit string) unitDetailsView {
	return unitDetailsView(details(resp, unit))
}

func (v unitDetailsView) Table() []output.Table {
	t := output.Table{Header: []string{"Resource", "Revision", "Expected"}}
	for _, d := range v {
		t.Rows = append(t.Rows, []string{d.Expected.Name, d.Unit.combinedRevision, d.Expected.combinedRevision})
	}
	return []output.Table{t}
}
