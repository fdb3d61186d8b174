// Package application holds the commands that deploy and scale applications and set their
// constraints.
package application

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/constraints"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/placement"
	"github.com/jujuclone/juju/output"
)

// deployAPI is the part of the client "juju deploy" uses.
type deployAPI interface {
	GetModel(ctx context.Context, ref string) (*jujupb.Model, error)
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
	UploadCharm(ctx context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error)
	Deploy(ctx context.Context, req *jujupb.DeployRequest) (*jujupb.DeployResponse, error)
	resourceUploader
}

var _ deployAPI = (*client.Client)(nil)

type deployOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (deployAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	// WaitClient is the client --wait watches the new units with.
	WaitClient func(ctx context.Context) (cmdutil.WaitAPI, error)
	// Repository returns $JUJU_REPOSITORY, where bare charm names are looked up.
	Repository func() string

	Model       string
	CharmArg    string
	AppName     string
	NumUnits    int
	To          string
	Base        string
	Series      string
	Constraints []string
	Config      []string
	Force       bool
	Trust       bool
	Channel     string
	Revision    int
	DryRun      bool
	Overlays    []string
	MapMachines string
	// Resources are --resource name=path (resources.go).
	Resources map[string]string
	cmdutil.WaitFlags

	// Set by validation.
	placement []placement.Directive
	base      base.Base
	cons      constraints.Value
	config    *configArgs
}

// NewCmdDeploy returns "juju deploy <charm> [<application name>]": deploy a local charm.
func NewCmdDeploy(f *cmdutil.Factory, runF func(*deployOptions) error) *cobra.Command {
	opts := &deployOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[deployAPI](f),
		WaitClient:   cmdutil.WaitClientFunc(f),
		Repository: func() string {
			cfg, err := f.Config()
			if err != nil {
				return ""
			}
			return cfg.Repository
		},
	}
	cmd := &cobra.Command{
		Use:   "deploy [options] <charm> [<application name>]",
		Short: "Deploy a local charm as a new application",
		Long: `Deploy a local charm as a new application, with -n units.

The charm is a directory (with metadata.yaml, or a charmcraft.yaml alone) or a .charm
archive as "charmcraft pack" makes it; a directory is zipped, an archive is uploaded as is.
A charm argument starting with "." or "/" is a path (a "local:" prefix is ignored). A bare name
is looked up in $JUJU_REPOSITORY as a directory <name>, then <name>.charm, then
<name>_*.charm. The charm's metadata, dispatch, hooks, the archive's safety (no entry outside
the charm, size limits), the base, the constraints and the placement are all checked before
anything is sent to the controller.

The base is, first match wins: --base, the model's default base, ` + base.DefaultLTS.DisplayString() + ` if the charm
supports it, the charm's first supported base. --force accepts a base the charm does not list.

What was deployed is reported on stderr ("Located local charm…", "Deploying…"; --quiet
hides it). The command returns once the controller has recorded the application and its
units. The controller records the application, its units and their machines at once, or
nothing: a refused deploy (a missing machine in --to, a base mismatch) leaves no application
behind. -n is at most ` + strconv.Itoa(limits.MaxUnitsPerCall) + ` per call; add-unit adds more.

A bundle (a .yaml file, or a directory holding bundle.yaml and its charms) deploys every
application, machine, unit and relation it describes, with --overlay files applied in order;
it is checked whole, against its charms, before anything is sent, and only what the model
lacks is changed: deploying it again changes nothing. --dry-run prints the changes instead
of making them; --map-machines existing (or 0=3,1=4) puts the bundle's machines on the
model's. See docs/bundles.md.

With --wait the command then waits until the agent of every new unit is idle, showing
progress on stderr (one line redrawn in place on a terminal, a line per change otherwise).
A unit in error, or whose machine fails to start, ends the wait at once with exit code 1,
naming the unit and the reason; so does --timeout (default 10m) passing. --timeout is
only valid with --wait.`,
		Example: `  juju deploy ./charms/wordpress -n 2 --constraints mem=2G
  juju deploy mysql db --base ubuntu@22.04
  juju deploy ./charms/wordpress --to 0 --config blog-title=News
  juju deploy ./testdb_amd64.charm
  juju deploy ./charms/mysql -n 3 --wait --timeout 5m
  juju deploy ./bundle.yaml --overlay ./prod.yaml --dry-run`,
		Annotations: map[string]string{cmdutil.SeeAlso: "add-unit, integrate, status, wait-for, remove-application, config, set-constraints"},
		Args:        cobra.ArbitraryArgs, // checked in validateDeploy, in Juju's order
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateDeploy(cmd, opts, args); err != nil {
				return err
			}
			if err := opts.WaitFlags.Validate(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return deployRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&opts.NumUnits, "num-units", "n", 1, "Number of units to add")
	fl.StringVar(&opts.To, "to", "", "Comma-separated placement directives: existing machine ids (the local provider has no containers)")
	fl.StringVar(&opts.Base, "base", "", "The base on which to deploy, e.g. ubuntu@22.04")
	fl.StringVar(&opts.Series, "series", "", "The series on which to deploy (deprecated, use --base)")
	fl.StringArrayVar(&opts.Constraints, "constraints", nil, "Constraints of the application's machines (repeatable)")
	fl.StringArrayVar(&opts.Config, "config", nil, "A YAML config file or <key>=<value> (@file reads the value from a file; repeatable)")
	fl.BoolVar(&opts.Force, "force", false, "Allow a base the charm does not declare")
	fl.BoolVar(&opts.Trust, "trust", false, "Allows charm to run hooks that require access credentials (sets application config trust; see juju trust)")
	fl.StringVar(&opts.Channel, "channel", "", "Channel to follow for upgrades (accepted for compatibility; local charms have none)")
	fl.IntVar(&opts.Revision, "revision", -1, "Charm revision (needs --channel)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "Only show what a bundle would change (ignored for local charms)")
	fl.StringArrayVar(&opts.Overlays, "overlay", nil, "Bundles to overlay on the primary bundle (bundles only)")
	fl.StringVar(&opts.MapMachines, "map-machines", "", "Use existing machines for a bundle (bundles only)")
	addResourceFlag(cmd, &opts.Resources)
	cmdutil.AddWaitFlags(cmd, &opts.WaitFlags, "every new unit's agent is idle")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// validateDeploy checks flags and arguments in Juju's order; every error is a usage error.
func validateDeploy(cmd *cobra.Command, opts *deployOptions, args []string) error {
	if opts.Series != "" && opts.Base != "" {
		return cmdutil.FlagErrorf("--series and --base cannot be specified together")
	}
	switch len(args) {
	case 0:
		return cmdutil.FlagErrorf("no charm or bundle specified")
	case 1:
		opts.CharmArg = args[0]
	case 2:
		opts.CharmArg, opts.AppName = args[0], args[1]
		if err := names.ValidateApplicationName(opts.AppName); err != nil {
			return cmdutil.FlagErrorWrap(err)
		}
	default:
		return cmdutil.UnrecognizedArgs(args[2:])
	}
	if err := checkNumUnits(opts.NumUnits); err != nil {
		return err
	}
	if opts.To != "" {
		p, err := placement.Parse(opts.To)
		if err != nil {
			return cmdutil.FlagErrorWrap(err)
		}
		opts.placement = p
	}
	if opts.Channel != "" {
		if err := checkChannel(opts.Channel); err != nil {
			return cmdutil.FlagErrorf("error in --channel: %v", err)
		}
	}
	b, err := cmdutil.ParseBaseFlags(opts.IO.ErrOut, opts.Series, opts.Base)
	if err != nil {
		return err
	}
	opts.base = b
	cons, err := cmdutil.ParseConstraints(opts.IO.ErrOut, opts.Constraints...)
	if err != nil {
		return err
	}
	opts.cons = cons
	cfg, err := parseConfigArgs(opts.Config)
	if err != nil {
		return cmdutil.FlagErrorWrap(err)
	}
	opts.config = cfg
	return nil
}

// checkNumUnits refuses -n below 1 or above the controller's bound per call: the controller
// adds the units of one call in one transaction, whole or not at all.
func checkNumUnits(n int) error {
	if n < 1 {
		return cmdutil.FlagErrorf("--num-units must be a positive integer")
	}
	if n > limits.MaxUnitsPerCall {
		return cmdutil.FlagErrorf("--num-units %d: at most %d units per call (add more with further add-unit calls)", n, limits.MaxUnitsPerCall)
	}
	return nil
}

// checkChannel accepts [<track>/]<risk>[/<branch>] and a bare track.
func checkChannel(ch string) error {
	risks := []string{base.Stable, base.Candidate, base.Beta, base.Edge}
	isRisk := func(s string) bool {
		for _, r := range risks {
			if s == r {
				return true
			}
		}
		return false
	}
	parts := strings.Split(ch, "/")
	for _, p := range parts {
		if p == "" {
			return fmt.Errorf("channel %q not valid", ch)
		}
	}
	switch len(parts) {
	case 1:
		return nil
	case 2:
		if isRisk(parts[0]) || isRisk(parts[1]) {
			return nil
		}
	case 3:
		if isRisk(parts[1]) {
			return nil
		}
	}
	return fmt.Errorf("risk in channel %q not valid, expected one of stable, candidate, beta, edge", ch)
}

func deployRun(ctx context.Context, opts *deployOptions) error {
	path, err := locateCharm(opts)
	if err != nil {
		return err
	}
	if isBundlePath(path) {
		return deployBundleRun(ctx, opts, path)
	}
	ch, archive, err := readLocalCharm(opts.IO, opts.CharmArg, path, "deploy")
	if err != nil {
		return err
	}
	meta, charmConfig := ch.Meta, ch.Config
	resources, err := readResources(meta, opts.Resources)
	if err != nil {
		return err
	}
	numUnits := opts.NumUnits
	if meta.Subordinate {
		if opts.cons.HasAny() {
			return cmdutil.FlagErrorf("cannot use --constraints with subordinate application")
		}
		if opts.NumUnits != 1 || len(opts.placement) > 0 {
			return cmdutil.FlagErrorf("cannot use --num-units or --to with subordinate application")
		}
		numUnits = 0
	}
	appName := opts.AppName
	if appName == "" {
		appName = meta.Name
		if err := names.ValidateApplicationName(appName); err != nil {
			return fmt.Errorf("charm name cannot be used as an application name: %w; give one as the second argument", err)
		}
	}
	config, err := opts.config.resolve(appName)
	if err != nil {
		return err
	}
	// Checked against config.yaml before anything is uploaded; the controller checks again.
	if _, err := charmConfig.ParseSettings(config); err != nil {
		return fmt.Errorf("invalid --config for %q: %w", appName, err)
	}
	if n := len(opts.placement); n > numUnits && numUnits > 0 {
		opts.IO.Warningf("%d unit(s) will be deployed, extra placement directives will be ignored", numUnits)
	}
	if opts.DryRun {
		opts.IO.Infof("ignoring dry-run flag for local charms")
	}
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	m, err := c.GetModel(ctx, model.UUID)
	if err != nil {
		return fmt.Errorf("getting model %q: %w", model.Name, err)
	}
	var modelBase base.Base
	if s := m.GetDefaultBase(); s != "" {
		if b, err := base.Parse(s); err == nil {
			modelBase = b
		}
	}
	chosen, err := base.Select(opts.base, modelBase, meta.Bases, opts.Force)
	if err != nil {
		return err
	}

	// Refuse an existing name before uploading, so a failed deploy leaves the model as it was.
	st, err := c.FullStatus(ctx, model.UUID, []string{appName})
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	for _, a := range st.GetApplications() {
		if a.GetName() == appName {
			return alreadyExists(apierr.Errorf(apierr.AlreadyExists, "cannot add application %q: application already exists", appName))
		}
	}

	opts.IO.Verbosef("Uploading charm %q from %s (%d bytes) to model %s", meta.Name, path, len(archive), model)
	up, err := c.UploadCharm(ctx, model.UUID, archive)
	if err != nil {
		return fmt.Errorf("uploading charm %q: %w", meta.Name, err)
	}
	opts.IO.Infof("Located local charm %q, revision %d", meta.Name, up.GetRevision())
	opts.IO.Infof("Deploying %q from local charm %q, revision %d on %s", appName, meta.Name, up.GetRevision(), chosen)
	pending, err := uploadPendingResources(ctx, c, model.UUID, appName, up.GetUrl(), resources)
	if err != nil {
		return err
	}

	var resp *jujupb.DeployResponse
	err = cmdutil.Bulk(ctx, opts.IO, numUnits, "units of "+appName, func(ctx context.Context) error {
		resp, err = c.Deploy(ctx, &jujupb.DeployRequest{
			Model:       model.UUID,
			Application: appName,
			CharmUrl:    up.GetUrl(),
			Base:        &jujupb.Base{Name: chosen.OS, Channel: chosen.Channel.String()},
			NumUnits:    int32(numUnits),
			Placement:   toPlacements(opts.placement),
			Constraints: opts.cons.String(),
			Config:      config,
			Trust:       opts.Trust,
			Resources:   pending,
		})
		return err
	})
	if errors.Is(err, apierr.AlreadyExists) {
		return alreadyExists(err)
	}
	if err != nil {
		// Like Juju, the controller's own message: it names the application and the reason.
		return err
	}
	units := cmdutil.UnitsOf(appName, resp.GetUnits())
	for _, u := range units {
		opts.IO.Verbosef("added unit %s", u)
	}
	if !opts.Wait {
		return nil
	}
	wc, err := opts.WaitClient(ctx)
	if err != nil {
		return err
	}
	return cmdutil.WaitForUnits(ctx, opts.IO, wc, model.UUID, appName, units, opts.Timeout)
}

// alreadyExists adds Juju's hint to an application-exists error.
func alreadyExists(err error) error {
	return fmt.Errorf("%w\ndeploy application using an alias name:\n    juju deploy <application> <alias>\nor use remove-application to remove the existing one and try again.", err)
}

var revisionSuffixRe = regexp.MustCompile(`^[a-z][a-z0-9-]*-[0-9]+$`)

// locateCharm finds the charm directory the argument names.
func locateCharm(opts *deployOptions) (string, error) {
	arg := strings.TrimPrefix(opts.CharmArg, "local:")
	if strings.HasPrefix(arg, ".") || filepath.IsAbs(arg) {
		return checkCharmPath(opts, arg)
	}
	if strings.HasPrefix(arg, "ch:") || strings.HasPrefix(arg, "cs:") {
		return "", fmt.Errorf("cannot deploy %q: only local charms are supported; set $JUJU_REPOSITORY or give a path like ./%s", arg, strings.SplitN(arg, ":", 2)[1])
	}
	if revisionSuffixRe.MatchString(arg) {
		return "", errors.New("cannot specify revision in a charm or bundle name. Please use --revision.")
	}
	if opts.Revision >= 0 && opts.Channel == "" {
		return "", errors.New("specifying a revision requires a channel for future upgrades. Please use --channel")
	}
	if err := checkCharmOnlyOptions(opts); err != nil {
		return "", err
	}
	repo := opts.Repository()
	if repo != "" {
		candidate, err := findInRepository(repo, arg)
		if err != nil {
			return "", err
		}
		if candidate != "" {
			return checkCharmPath(opts, candidate)
		}
	}
	if _, err := os.Stat(arg); err == nil {
		return "", fmt.Errorf("The charm or bundle %q is ambiguous.\n"+
			"To deploy a local charm or bundle, run `juju deploy ./%s`.\n"+
			"To deploy a charm or bundle from CharmHub, run `juju deploy ch:%s`.", arg, arg, arg)
	}
	if repo != "" {
		return "", fmt.Errorf("charm %q not found in $JUJU_REPOSITORY", arg)
	}
	return "", fmt.Errorf("cannot deploy %q: only local charms are supported; set $JUJU_REPOSITORY or give a path like ./%s", arg, arg)
}

// checkCharmPath refuses paths that are missing, bundles, or not charm directories.
func checkCharmPath(opts *deployOptions, path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("no charm was found at %q", opts.CharmArg)
	}
	if isBundlePath(path) {
		return path, nil // deployRun hands it to deployBundleRun (deploybundle.go)
	}
	if info.IsDir() && !hasFile(path, "metadata.yaml") && !hasFile(path, "charmcraft.yaml") {
		return "", fmt.Errorf("invalid charm or bundle provided at %q", opts.CharmArg)
	}
	// Any other file is taken as a .charm archive: reading it says what is wrong with it.
	if err := checkCharmOnlyOptions(opts); err != nil {
		return "", err
	}
	return path, nil
}

func hasFile(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// findInRepository looks a bare name up in the repository: the directory <name>, then the
// archive <name>.charm, then <name>_*.charm (charmcraft names its archives
// <name>_<base>-<arch>.charm); "" when none is there.
func findInRepository(repo, name string) (string, error) {
	dir := filepath.Join(repo, name)
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return dir, nil
	}
	file := filepath.Join(repo, name+".charm")
	if info, err := os.Stat(file); err == nil && info.Mode().IsRegular() {
		return file, nil
	}
	matches, err := filepath.Glob(filepath.Join(repo, globEscape(name)+"_*.charm"))
	if err != nil {
		return "", fmt.Errorf("looking up %q in $JUJU_REPOSITORY: %w", name, err)
	}
	switch len(matches) {
	case 0:
		return "", nil
	case 1:
		return matches[0], nil
	default:
		for i, m := range matches {
			matches[i] = filepath.Base(m)
		}
		return "", fmt.Errorf("charm %q is ambiguous in $JUJU_REPOSITORY: %s; give the path of one", name, strings.Join(matches, ", "))
	}
}

// globEscape keeps a charm name's characters literal in a glob pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkCharmOnlyOptions refuses the bundle-only options.
func checkCharmOnlyOptions(opts *deployOptions) error {
	var given []string
	if len(opts.Overlays) > 0 {
		given = append(given, "--overlay")
	}
	if opts.MapMachines != "" {
		given = append(given, "--map-machines")
	}
	if len(given) > 0 {
		return fmt.Errorf("options provided but not supported when deploying a charm: %s", strings.Join(given, ", "))
	}
	return nil
}

// toPlacements converts parsed --to directives for the API.
func toPlacements(ds []placement.Directive) []*jujupb.Placement {
	var out []*jujupb.Placement
	for _, d := range ds {
		p := &jujupb.Placement{Scope: d.Scope, Directive: d.Machine}
		if d.IsProvider() {
			p.Directive = d.Raw
		}
		out = append(out, p)
	}
	return out
}
