package application

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// refreshAPI is the part of the client "juju refresh" uses.
type refreshAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
	UploadCharm(ctx context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error)
	SetCharm(ctx context.Context, req *jujupb.SetCharmRequest) (*jujupb.SetCharmResponse, error)
	resourceUploader
}

var _ refreshAPI = (*client.Client)(nil)

type refreshOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (refreshAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Path        string
	// Resources are --resource name=path (resources.go).
	Resources map[string]string
	// ForceUnits: units in error upgrade at once too (Juju's uniter: they stay in error).
	ForceUnits bool
	// ForceBase accepts a charm that does not list the application's base (same OS only);
	// Force is Juju's LXD profile override, accepted and without effect here.
	ForceBase, Force bool
	// Base may only name the application's base: its units' machines keep theirs.
	Base string
	// Config is --config, as deploy's (a YAML file or key=value, repeatable).
	Config []string
	// Trust, when set (TrustSet), sets the application config option trust with the switch.
	Trust, TrustSet bool
	// Channel and Revision are accepted as Juju does for local charms: the channel has no
	// effect, a revision is refused with --path.
	Channel  string
	Revision int
	Storage  []string

	config *configArgs
	base   base.Base
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

The new charm must have the application's charm name and subordinacy, every endpoint an
existing relation of the application uses, with the same interface and role, and the
application's base among its bases (--force-base: any base of the same OS). Config values
of options the new charm still has are kept; the others are dropped, and new options take
their defaults. --config sets values with the switch, as deploy's --config does, checked
against the new charm's options before anything is sent; --trust (--trust=false) sets the
application config option trust. Anything else is refused and nothing changes.

Each unit's agent then, between hooks, puts the new charm in place and runs its
upgrade-charm hook, then config-changed. A unit in error upgrades once resolved; a
failing upgrade-charm hook puts the unit in error like any hook ("juju resolved" retries it).
With --force-units a unit in error upgrades at once, as Juju's does: it stays in error,
and "juju resolved" runs the failed hook again from the new charm; upgrade-charm does not
run for an upgrade made in error.

--base may only name the application's current base (its machines keep theirs);
--channel is accepted and has no effect on a local charm; --revision cannot be used with
--path (Juju: "mutually exclusive"); --storage is refused: the local provider has no
storage. --force (Juju's LXD profile override) is accepted and has no effect.`,
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
			if err := validateRefresh(cmd, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return refreshRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Path, "path", "", "Refresh to the local charm at this path (directory or .charm archive)")
	fl.BoolVar(&opts.ForceUnits, "force-units", false, "Refresh all units immediately, even if in error state")
	fl.BoolVar(&opts.ForceBase, "force-base", false, "Refresh even if the base of the deployed application is not supported by the new charm")
	fl.BoolVar(&opts.ForceBase, "force-series", false, "Refresh even if the series of the deployed application is not supported by the new charm (deprecated, use --force-base)")
	fl.BoolVar(&opts.Force, "force", false, "Allow a charm to be refreshed which bypasses LXD profile allow list (no effect: no LXD here)")
	fl.StringVar(&opts.Base, "base", "", "Select a different base than what is currently running (only the current one is accepted)")
	fl.StringArrayVar(&opts.Config, "config", nil, "Either a path to yaml-formatted application config file or a key=value pair (repeatable)")
	fl.BoolVar(&opts.Trust, "trust", false, "Allows charm to run hooks that require access credentials (--trust=false revokes it)")
	fl.StringVar(&opts.Channel, "channel", "", "Channel to use when getting the charm (no effect on a local charm)")
	fl.IntVar(&opts.Revision, "revision", -1, "Explicit revision of current charm (not with --path)")
	fl.StringArrayVar(&opts.Storage, "storage", nil, "Charm storage constraints (not supported: the local provider has no storage)")
	addResourceFlag(cmd, &opts.Resources)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// validateRefresh checks the flags in Juju's order; every error is a usage error.
func validateRefresh(cmd *cobra.Command, opts *refreshOptions) error {
	if opts.Revision != -1 {
		return cmdutil.FlagErrorf("--path and --revision are mutually exclusive")
	}
	if len(opts.Storage) > 0 {
		return cmdutil.FlagErrorf("--storage is not supported: the local provider has no storage")
	}
	if opts.Channel != "" {
		if err := checkChannel(opts.Channel); err != nil {
			return cmdutil.FlagErrorf("error in --channel: %v", err)
		}
	}
	if opts.Base != "" {
		b, err := base.Parse(opts.Base)
		if err != nil {
			return cmdutil.FlagErrorWrap(err)
		}
		opts.base = b
	}
	opts.TrustSet = cmd.Flags().Changed("trust")
	cfg, err := parseConfigArgs(opts.Config)
	if err != nil {
		return cmdutil.FlagErrorWrap(err)
	}
	opts.config = cfg
	return nil
}

func refreshRun(ctx context.Context, opts *refreshOptions) error {
	ch, archive, err := readLocalCharm(opts.IO, opts.Path, opts.Path, "refresh")
	if err != nil {
		return err
	}
	config, err := refreshConfig(opts, ch.Config)
	if err != nil {
		return err
	}
	if opts.Channel != "" {
		opts.IO.Verbosef("--channel %s has no effect on a local charm", opts.Channel)
	}
	resources, err := readResources(ch.Meta, opts.Resources)
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
	if err := checkRefreshBase(st, opts, ch.Meta); err != nil {
		return err
	}

	opts.IO.Verbosef("Uploading charm %q from %s (%d bytes) to model %s", ch.Meta.Name, opts.Path, len(archive), model)
	up, err := c.UploadCharm(ctx, model.UUID, archive)
	if err != nil {
		return fmt.Errorf("uploading charm %q: %w", ch.Meta.Name, err)
	}
	opts.IO.Infof("Added local charm %q, revision %d, to the model", ch.Meta.Name, up.GetRevision())
	pending, err := uploadPendingResources(ctx, c, model.UUID, opts.Application, up.GetUrl(), resources)
	if err != nil {
		return err
	}
	if _, err := c.SetCharm(ctx, &jujupb.SetCharmRequest{
		Model: model.UUID, Application: opts.Application, CharmUrl: up.GetUrl(),
		Resources: pending, ForceUnits: opts.ForceUnits, Config: config,
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

// refreshConfig is the config the switch sets: --config resolved for the application as
// deploy's is, checked against the new charm's options, and --trust as the application config
// option trust (which --config may set too, as in Juju).
func refreshConfig(opts *refreshOptions, cfg *charm.Config) (map[string]string, error) {
	values, err := opts.config.resolve(opts.Application)
	if err != nil {
		return nil, err
	}
	if opts.TrustSet {
		if values == nil {
			values = map[string]string{}
		}
		values["trust"] = strconv.FormatBool(opts.Trust)
	}
	charmValues := maps.Clone(values)
	if v, ok := charmValues["trust"]; ok {
		if _, err := strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("invalid --config for %q: option \"trust\": expected bool, got %q", opts.Application, v)
		}
		delete(charmValues, "trust")
	}
	if _, err := cfg.ParseSettings(charmValues); err != nil {
		return nil, fmt.Errorf("invalid --config for %q: %w", opts.Application, err)
	}
	return values, nil
}

// checkRefreshBase is the controller's base check as Juju makes it (before the upload here):
// the new charm lists the application's base, or with --force-base at least its OS; --base
// may only name the application's base.
func checkRefreshBase(st *jujupb.FullStatusResponse, opts *refreshOptions, meta *charm.Meta) error {
	var pbBase *jujupb.Base
	for _, a := range st.GetApplications() {
		if a.GetName() == opts.Application {
			pbBase = a.GetBase()
		}
	}
	if pbBase == nil {
		return nil // an application recorded without a base: nothing to check against
	}
	current, err := base.Parse(pbBase.GetName() + "@" + pbBase.GetChannel())
	if err != nil {
		return nil
	}
	what := fmt.Sprintf("cannot upgrade application %q", opts.Application)
	if !opts.base.IsZero() && !opts.base.IsCompatible(current) {
		return fmt.Errorf("%s: cannot change its base from %s to %s: its machines keep theirs; deploy a new application on %s instead",
			what, current.DisplayString(), opts.base.DisplayString(), opts.base.DisplayString())
	}
	if len(meta.Bases) == 0 || slices.ContainsFunc(meta.Bases, current.IsCompatible) {
		return nil
	}
	var names, oses []string
	for _, b := range meta.Bases {
		if s := b.DisplayString(); !slices.Contains(names, s) {
			names = append(names, s)
		}
		if !slices.Contains(oses, b.OS) {
			oses = append(oses, b.OS)
		}
	}
	if !opts.ForceBase {
		return fmt.Errorf("%s: base %q not supported by charm, the charm supported bases are: %s",
			what, current.DisplayString(), strings.Join(names, ", "))
	}
	if !slices.Contains(oses, current.OS) {
		slices.Sort(oses)
		return fmt.Errorf("%s: OS %q not supported by charm %q, supported OSes are: %s", what, current.OS, meta.Name, strings.Join(oses, ", "))
	}
	return nil
}
