package application

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// refreshAPI is the part of the client "juju refresh" uses.
type refreshAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
	UploadCharm(ctx context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error)
	SetCharm(ctx context.Context, req *jujupb.SetCharmRequest) (*jujupb.SetCharmResponse, error)
}

var _ refreshAPI = (*client.Client)(nil)

type refreshOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (refreshAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Path        string
}

// NewCmdRefresh returns "juju refresh <application> --path <charm>": switch an application
// to a new revision of its local charm.
func NewCmdRefresh(f *cmdutil.Factory, runF func(*refreshOptions) error) *cobra.Command {
	opts := &refreshOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[refreshAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "refresh [options] <application>",
		Short: "Refresh an application's charm",
		Long: `Refresh an application's charm with a new revision of the local charm at --path (a
charm directory or a .charm archive; there is no charm store, so --path is required).
The charm is checked and uploaded as deploy does, then the application switches to it;
the new revision is reported on stderr ("Added local charm ..."; --quiet hides it).

The new charm must have the application's charm name and subordinacy, and every endpoint
an existing relation of the application uses, with the same interface and role. Config
values of options the new charm still has are kept; the others are dropped. Anything else
is refused and nothing changes.

Each unit's agent then, between hooks, puts the new charm in place and runs its
upgrade-charm hook, then config-changed. A unit in error upgrades once resolved; a
failing upgrade-charm hook puts the unit in error like any hook ("juju resolved" retries it).`,
		Example: `  juju refresh mysql --path ./charms/mysql
  juju refresh wordpress --path ./wordpress_ubuntu-22.04-amd64.charm`,
		Annotations: map[string]string{cmdutil.SeeAlso: "deploy, config, status, resolved"},
		Args:        cmdutil.ExactlyOneArg("no application specified"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Application = args[0]
			if err := names.ValidateApplicationName(opts.Application); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if opts.Path == "" {
				return cmdutil.FlagErrorf("only local charms can be used: there is no charm store; give the charm with --path <charm directory or .charm file>")
			}
			if runF != nil {
				return runF(opts)
			}
			return refreshRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Path, "path", "", "Refresh to the local charm at this path (directory or .charm archive)")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func refreshRun(ctx context.Context, opts *refreshOptions) error {
	ch, archive, err := readLocalCharm(opts.IO, opts.Path, opts.Path, "refresh")
	if err != nil {
		return err
	}
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	// Refuse what the controller would refuse before uploading, so a refused refresh leaves
	// the model as it was; the controller checks again, in the transaction that switches.
	st, err := c.FullStatus(ctx, model.UUID, []string{opts.Application})
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	if err := checkRefresh(st, opts.Application, ch.Meta); err != nil {
		return err
	}

	opts.IO.Verbosef("Uploading charm %q from %s (%d bytes) to model %s", ch.Meta.Name, opts.Path, len(archive), model)
	up, err := c.UploadCharm(ctx, model.UUID, archive)
	if err != nil {
		return fmt.Errorf("uploading charm %q: %w", ch.Meta.Name, err)
	}
	opts.IO.Infof("Added local charm %q, revision %d, to the model", ch.Meta.Name, up.GetRevision())
	if _, err := c.SetCharm(ctx, &jujupb.SetCharmRequest{
		Model: model.UUID, Application: opts.Application, CharmUrl: up.GetUrl(),
	}); err != nil {
		// The controller's message names the application, the charm and the reason.
		return err
	}
	return nil
}

// checkRefresh is the controller's check (state.SetApplicationCharm) on what status shows:
// the application exists and is alive, the charm keeps its name (Juju: "cannot refresh"),
// its subordinacy, and every endpoint a relation of the application uses.
func checkRefresh(st *jujupb.FullStatusResponse, appName string, meta *charm.Meta) error {
	var app *jujupb.ApplicationStatus
	for _, a := range st.GetApplications() {
		if a.GetName() == appName {
			app = a
		}
	}
	if app == nil {
		return apierr.Errorf(apierr.NotFound, "application %q not found", appName)
	}
	if app.GetCharmName() != meta.Name {
		return fmt.Errorf("cannot refresh %q to %q", app.GetCharmName(), meta.Name)
	}
	what := fmt.Sprintf("cannot upgrade application %q", appName)
	if l := app.GetLife(); l != "" && l != "alive" {
		return apierr.Errorf(apierr.NotAlive, "%s: application is not alive", what)
	}
	if app.GetSubordinate() != meta.Subordinate {
		return fmt.Errorf("%s: cannot change an application's subordinacy", what)
	}
	endpoints := meta.Endpoints()
	for _, rel := range st.GetRelations() {
		for _, ep := range rel.GetEndpoints() {
			if ep.GetApplication() != appName {
				continue
			}
			if !hasEndpoint(endpoints, ep) {
				return fmt.Errorf("%s: would break relation %q", what, rel.GetKey())
			}
			break // a peer relation lists the application once
		}
	}
	return nil
}

// hasEndpoint: the charm has the endpoint with the same name, role and interface, and a
// global relation does not meet a container-scoped endpoint.
func hasEndpoint(eps []charm.Relation, ep *jujupb.RelationEndpoint) bool {
	for _, e := range eps {
		if e.Name == ep.GetName() && string(e.Role) == ep.GetRole() && e.Interface == ep.GetInterface() {
			return ep.GetScope() == string(charm.ScopeContainer) || e.Scope != charm.ScopeContainer
		}
	}
	return false
}
