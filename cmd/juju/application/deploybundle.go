package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/bundle"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/placement"
)

// Bundles (juju deploy ./bundle.yaml, or a directory holding bundle.yaml and its charms): the
// bundle and its overlays are read, composed and checked against their charms (core/bundle)
// before anything is sent; the model is described once (BundleService.DescribeModel) and the
// plan is the difference. --dry-run prints the plan; otherwise each change is printed as it is
// made, with the client calls deploy, add-machine, add-unit, integrate, config, expose and
// refresh make. The steps are Juju's and so are their words.

// bundleAPI is the part of the client a bundle deploy uses.
type bundleAPI interface {
	DescribeModel(ctx context.Context, model string) (*jujupb.ModelDescription, error)
	UploadCharm(ctx context.Context, model string, archive []byte) (*jujupb.UploadCharmResponse, error)
	Deploy(ctx context.Context, req *jujupb.DeployRequest) (*jujupb.DeployResponse, error)
	AddMachines(ctx context.Context, req *jujupb.AddMachinesRequest) ([]*jujupb.AddMachineResult, error)
	AddUnits(ctx context.Context, req *jujupb.AddUnitsRequest) (*jujupb.AddUnitsResponse, error)
	Integrate(ctx context.Context, model string, endpoints []string) (*jujupb.IntegrateResponse, error)
	SetConfig(ctx context.Context, req *jujupb.SetConfigRequest) error
	SetConstraints(ctx context.Context, model, app, cons string) error
	Expose(ctx context.Context, req *jujupb.ExposeRequest) error
	SetAnnotations(ctx context.Context, req *jujupb.SetAnnotationsRequest) error
	SetCharm(ctx context.Context, req *jujupb.SetCharmRequest) (*jujupb.SetCharmResponse, error)
	UploadResource(ctx context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error)
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ bundleAPI = (*client.Client)(nil)

// isBundlePath says whether a local path is a bundle: a .yaml file, or a directory holding
// bundle.yaml (even with charms inside: the bundle comes first, as in Juju).
func isBundlePath(path string) bool {
	info, err := os.Stat(path)
	if err != nil {
		return false
	}
	if info.IsDir() {
		return hasFile(path, "bundle.yaml")
	}
	return strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
}

// checkBundleOptions refuses what only a charm takes, in Juju's words: the bundle says it.
func checkBundleOptions(opts *deployOptions) error {
	var given []string
	if opts.Base != "" {
		given = append(given, "--base")
	}
	if len(opts.Config) > 0 {
		given = append(given, "--config")
	}
	if len(opts.Constraints) > 0 {
		given = append(given, "--constraints")
	}
	if opts.NumUnits != 1 {
		given = append(given, "-n")
	}
	if len(opts.Resources) > 0 {
		given = append(given, "--resource")
	}
	if opts.Series != "" {
		given = append(given, "--series")
	}
	if opts.To != "" {
		given = append(given, "--to")
	}
	if len(given) > 0 {
		return fmt.Errorf("options provided but not supported when deploying a bundle: %s", strings.Join(given, ", "))
	}
	if opts.AppName != "" {
		return fmt.Errorf("cannot give an application name (%q) when deploying a bundle: the bundle names its applications", opts.AppName)
	}
	return nil
}

// parseMachineMap parses --map-machines: "existing" and <bundle-id>=<machine-id> pairs,
// comma-separated.
func parseMachineMap(value string) (bool, map[string]string, error) {
	useExisting := false
	mapping := map[string]string{}
	for part := range strings.SplitSeq(value, ",") {
		part = strings.TrimSpace(part)
		switch part {
		case "":
		case "existing":
			useExisting = true
		default:
			b, m, ok := strings.Cut(part, "=")
			if !ok || strings.Contains(m, "=") {
				return false, nil, fmt.Errorf("expected \"existing\" or \"<bundle-id>=<machine-id>\", got %q", part)
			}
			b, m = strings.TrimSpace(b), strings.TrimSpace(m)
			if n, err := strconv.Atoi(b); err != nil || n < 0 {
				return false, nil, fmt.Errorf("bundle-id %q is not a top level machine id", b)
			}
			if n, err := strconv.Atoi(m); err != nil || n < 0 {
				return false, nil, fmt.Errorf("machine-id %q is not a top level machine id", m)
			}
			mapping[b] = m
		}
	}
	return useExisting, mapping, nil
}

// readBundleFiles reads the bundle (a file, or a directory's bundle.yaml) and the overlays,
// each named as the user gave it.
func readBundleFiles(path string, overlays []string) ([]bundle.File, error) {
	name := path
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		name = filepath.Join(path, "bundle.yaml")
	}
	var files []bundle.File
	for i, p := range append([]string{name}, overlays...) {
		data, err := readLimited(p)
		if err != nil {
			if i > 0 && errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("unable to process overlays: %q not found", p)
			}
			if i > 0 {
				return nil, fmt.Errorf("unable to process overlays: %w", err)
			}
			return nil, fmt.Errorf("cannot read bundle: %w", err)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		files = append(files, bundle.File{Name: filepath.Clean(p), Dir: filepath.Dir(abs), Data: data})
	}
	return files, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, bundle.MaxFileSize+1))
}

// bundleCharms loads the bundle's charms as deploy reads a charm, keeping each archive to
// upload. The plan compares each archive's sha256 with the model's to tell whether an
// application's charm changed (zipCharm packs a directory the same way every time).
type bundleCharms struct {
	opts     *deployOptions
	archives map[string][]byte // by path
}

func (b *bundleCharms) load(ref, path string) (*bundle.Charm, error) {
	ch, archive, err := readLocalCharm(b.opts.IO, ref, path, "deploy")
	if err != nil {
		return nil, err
	}
	b.archives[path] = archive
	sum := sha256.Sum256(archive)
	return &bundle.Charm{Charm: ch, SHA256: hex.EncodeToString(sum[:])}, nil
}

// deployBundleRun deploys the bundle at path (deploy hands it over once locateCharm found a
// bundle there).
func deployBundleRun(ctx context.Context, opts *deployOptions, path string) error {
	if err := checkBundleOptions(opts); err != nil {
		return err
	}
	useExisting, machineMap, err := parseMachineMap(opts.MapMachines)
	if err != nil {
		return cmdutil.FlagErrorf("error in --map-machines: %v", err)
	}
	files, err := readBundleFiles(path, opts.Overlays)
	if err != nil {
		return err
	}
	docs, err := bundle.ReadFiles(files...)
	if err != nil {
		return err
	}
	composed, err := bundle.Compose(docs)
	if err != nil {
		return err
	}
	charms := &bundleCharms{opts: opts, archives: map[string][]byte{}}
	resolveName := func(name string) (string, error) {
		repo := opts.Repository()
		if repo == "" {
			return "", fmt.Errorf("charm %q is not a path and $JUJU_REPOSITORY is not set: there is no charm store; give the charm's path, relative to the bundle (./%s)", name, name)
		}
		p, err := findInRepository(repo, name)
		if err != nil {
			return "", err
		}
		if p == "" {
			return "", fmt.Errorf("charm %q not found in $JUJU_REPOSITORY", name)
		}
		return p, nil
	}
	checked, err := bundle.Check(composed, charms.load, resolveName)
	if err != nil {
		return err
	}
	if err := checkTrust(opts, checked); err != nil {
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
	api, ok := c.(bundleAPI)
	if !ok {
		return errors.New("this client cannot deploy bundles")
	}
	desc, err := api.DescribeModel(ctx, model.UUID)
	if err != nil {
		return fmt.Errorf("getting model %q: %w", model.Name, err)
	}
	plan, err := checked.Plan(bundle.PlanOptions{
		Model: describedModel(desc), UseExisting: useExisting, MachineMap: machineMap, Force: opts.Force,
	})
	if err != nil {
		return err
	}
	if len(plan.Changes) == 0 {
		opts.IO.Infof("No changes to apply.")
		return waitForBundle(ctx, opts, model.UUID, checked)
	}
	if opts.DryRun {
		fmt.Fprintln(opts.IO.Out, "Changes to deploy bundle:")
		for _, l := range plan.Lines() {
			fmt.Fprintln(opts.IO.Out, l)
		}
		return nil
	}
	fmt.Fprintln(opts.IO.Out, "Executing changes:")
	x := &executor{opts: opts, api: api, model: model.UUID, archives: charms.archives, results: map[string]string{}, unitMachines: map[string]string{}}
	if err := x.run(ctx, plan.Changes); err != nil {
		return err
	}
	opts.IO.Infof("Deploy of bundle completed.")
	return waitForBundle(ctx, opts, model.UUID, checked)
}

// checkTrust refuses applications that ask for trust unless --trust consents, as Juju does.
func checkTrust(opts *deployOptions, c *bundle.Checked) error {
	if opts.Trust {
		return nil
	}
	var apps []string
	for _, name := range slices.Sorted(maps.Keys(c.Applications)) {
		if c.Applications[name].Trust.Value {
			apps = append(apps, name)
		}
	}
	if len(apps) == 0 || opts.Force {
		return nil
	}
	return fmt.Errorf("Bundle cannot be deployed without trusting applications with your cloud credentials.\n"+
		"Please repeat the deploy command with the --trust argument if you consent to trust the following application(s):\n  - %s",
		strings.Join(apps, "\n  - "))
}

// describedModel converts the controller's description of the model for the plan.
func describedModel(d *jujupb.ModelDescription) *bundle.Model {
	m := &bundle.Model{
		DefaultBase:  d.GetDefaultBase(),
		Applications: map[string]*bundle.ModelApplication{},
		Machines:     map[string]*bundle.ModelMachine{},
	}
	for _, a := range d.GetApplications() {
		ma := &bundle.ModelApplication{
			Name: a.GetName(), CharmURL: a.GetCharmUrl(), CharmName: a.GetCharmName(), CharmSHA256: a.GetCharmSha256(),
			Base: a.GetBase(), Subordinate: a.GetSubordinate(), Life: a.GetLife(), Constraints: a.GetConstraints(),
			Config: a.GetConfigJson(), Exposed: a.GetExposed(), Annotations: a.GetAnnotations(),
		}
		for _, ep := range a.GetExposedEndpoints() {
			if ma.ExposedEndpoints == nil {
				ma.ExposedEndpoints = map[string]bundle.ExposeSpec{}
			}
			ma.ExposedEndpoints[ep.GetEndpoint()] = bundle.ExposeSpec{Spaces: ep.GetToSpaces(), CIDRs: ep.GetToCidrs()}
		}
		for _, r := range a.GetResources() {
			if r.GetRevision() > 0 {
				if ma.Resources == nil {
					ma.Resources = map[string]string{}
				}
				ma.Resources[r.GetName()] = r.GetFingerprint()
			}
		}
		for _, u := range a.GetUnits() {
			ma.Units = append(ma.Units, bundle.ModelUnit{Name: u.GetName(), Machine: u.GetMachine(), Life: u.GetLife()})
		}
		m.Applications[ma.Name] = ma
	}
	for _, mm := range d.GetMachines() {
		m.Machines[mm.GetId()] = &bundle.ModelMachine{ID: mm.GetId(), Base: mm.GetBase(), Life: mm.GetLife(), Annotations: mm.GetAnnotations()}
	}
	for _, r := range d.GetRelations() {
		eps := r.GetEndpoints()
		if len(eps) != 2 {
			continue // a peer relation
		}
		k := [2]string{eps[0], eps[1]}
		if k[1] < k[0] {
			k[0], k[1] = k[1], k[0]
		}
		m.Relations = append(m.Relations, bundle.ModelRelation{Endpoints: k, Life: r.GetLife()})
	}
	return m
}

// executor makes a plan's changes, printing each as it goes. Consecutive units of one
// application go in one AddUnits call, consecutive machines in one AddMachines call.
type executor struct {
	opts     *deployOptions
	api      bundleAPI
	model    string
	archives map[string][]byte
	// results holds what each change made: a charm URL, an application, a machine id, a
	// unit's name.
	results      map[string]string
	unitMachines map[string]string
}

func (x *executor) print(cs ...*bundle.Change) {
	for _, c := range cs {
		for _, d := range c.Description() {
			fmt.Fprintln(x.opts.IO.Out, "- "+d)
		}
	}
}

func (x *executor) run(ctx context.Context, changes []*bundle.Change) error {
	for i := 0; i < len(changes); {
		c := changes[i]
		n := 1
		var err error
		switch c.Kind {
		case bundle.KindAddMachine:
			n = x.batch(changes[i:], func(o *bundle.Change) bool { return o.Kind == bundle.KindAddMachine })
			err = x.addMachines(ctx, changes[i:i+n])
		case bundle.KindAddUnit:
			n = x.batch(changes[i:], func(o *bundle.Change) bool {
				return o.Kind == bundle.KindAddUnit && o.Application == c.Application && (o.To == bundle.Target{}) == (c.To == bundle.Target{})
			})
			err = x.addUnits(ctx, changes[i:i+n])
		default:
			x.print(c)
			err = x.one(ctx, c)
		}
		if err != nil {
			return err
		}
		i += n
	}
	return nil
}

// batch counts the changes from the first that like takes, at most MaxUnitsPerCall.
func (x *executor) batch(changes []*bundle.Change, like func(*bundle.Change) bool) int {
	n := 1
	for n < len(changes) && n < limits.MaxUnitsPerCall && like(changes[n]) {
		n++
	}
	return n
}

// charmURL is the URL of the charm a change uses: uploaded by an earlier change, or the
// model's.
func (x *executor) charmURL(c *bundle.Change) string {
	if c.CharmChange != "" {
		return x.results[c.CharmChange]
	}
	return c.CharmURL
}

func apiBase(c *bundle.Change) *jujupb.Base {
	if c.Base.IsZero() {
		return nil
	}
	return &jujupb.Base{Name: c.Base.OS, Channel: c.Base.Channel.String()}
}

func (x *executor) one(ctx context.Context, c *bundle.Change) error {
	switch c.Kind {
	case bundle.KindUploadCharm:
		up, err := x.api.UploadCharm(ctx, x.model, x.archives[c.Charm.Path])
		if err != nil {
			return fmt.Errorf("cannot add charm %q: %w", c.Charm.Ref, err)
		}
		x.results[c.ID] = up.GetUrl()
		x.opts.IO.Verbosef("  added charm %s", up.GetUrl())
	case bundle.KindDeploy:
		url := x.charmURL(c)
		pending, err := x.uploadResources(ctx, c, url, true)
		if err != nil {
			return err
		}
		_, err = x.api.Deploy(ctx, &jujupb.DeployRequest{
			Model: x.model, Application: c.Application, CharmUrl: url, Base: apiBase(c),
			Constraints: c.Constraints, Config: c.Options, Trust: c.Trust, Resources: pending,
		})
		if err != nil {
			return fmt.Errorf("cannot deploy application %q: %w", c.Application, err)
		}
		for _, r := range c.Resources {
			x.opts.IO.Infof("  added resource %s", r.Name)
		}
	case bundle.KindUpgradeCharm:
		url := x.charmURL(c)
		pending, err := x.uploadResources(ctx, c, url, true)
		if err != nil {
			return err
		}
		if _, err := x.api.SetCharm(ctx, &jujupb.SetCharmRequest{Model: x.model, Application: c.Application, CharmUrl: url, Resources: pending}); err != nil {
			return fmt.Errorf("cannot upgrade application %q: %w", c.Application, err)
		}
		for _, r := range c.Resources {
			x.opts.IO.Infof("  added resource %s", r.Name)
		}
	case bundle.KindAttachResource:
		if _, err := x.uploadResources(ctx, c, "", false); err != nil {
			return err
		}
	case bundle.KindAddRelation:
		_, err := x.api.Integrate(ctx, x.model, c.Endpoints[:])
		if err != nil && !errors.Is(err, apierr.AlreadyExists) {
			return fmt.Errorf("cannot add relation between %q and %q: %w", c.Endpoints[0], c.Endpoints[1], err)
		}
	case bundle.KindExpose:
		req := &jujupb.ExposeRequest{Model: x.model, Application: c.Application}
		for _, ep := range slices.Sorted(maps.Keys(c.Exposed)) {
			spec := c.Exposed[ep]
			req.Endpoints = append(req.Endpoints, &jujupb.ExposedEndpoint{Endpoint: ep, ToSpaces: spec.Spaces, ToCidrs: spec.CIDRs})
		}
		if err := x.api.Expose(ctx, req); err != nil {
			return fmt.Errorf("cannot expose application %s: %w", c.Application, err)
		}
	case bundle.KindSetOptions:
		if err := x.api.SetConfig(ctx, &jujupb.SetConfigRequest{Model: x.model, Application: c.Application, Values: c.Options}); err != nil {
			return fmt.Errorf("cannot update options for application %q: %w", c.Application, err)
		}
	case bundle.KindSetConstraints:
		if err := x.api.SetConstraints(ctx, x.model, c.Application, c.Constraints); err != nil {
			return fmt.Errorf("cannot update constraints for application %q: %w", c.Application, err)
		}
	case bundle.KindSetAnnotations:
		req := &jujupb.SetAnnotationsRequest{Model: x.model, Application: c.Application, Annotations: c.Annotations}
		what := "application " + strconv.Quote(c.Application)
		if c.Application == "" {
			id, err := x.machine(ctx, c.Machine)
			if err != nil {
				return err
			}
			req.Machine, what = id, "machine "+strconv.Quote(id)
		}
		if err := x.api.SetAnnotations(ctx, req); err != nil {
			return fmt.Errorf("cannot set annotations for %s: %w", what, err)
		}
	default:
		return fmt.Errorf("unknown change %s", c.ID)
	}
	return nil
}

// uploadResources uploads a change's resource files: kept aside for the deploy or refresh that
// names them (pending), or as the application's next revision.
func (x *executor) uploadResources(ctx context.Context, c *bundle.Change, charmURL string, pending bool) (map[string]string, error) {
	var files []*ResourceFile
	for _, r := range c.Resources {
		f, err := ReadResourceFile(r.Name, r.Path)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if pending {
		return uploadPendingResources(ctx, x.api, x.model, c.Application, charmURL, files)
	}
	for _, f := range files {
		_, err := x.api.UploadResource(ctx, &jujupb.UploadResourceRequest{
			Model: x.model, Application: c.Application, Name: f.Name, Filename: f.Filename, Content: f.Content,
		})
		if err != nil {
			return nil, fmt.Errorf("resource %q: %w", f.Name, err)
		}
	}
	return nil, nil
}

func (x *executor) addMachines(ctx context.Context, cs []*bundle.Change) error {
	x.print(cs...)
	req := &jujupb.AddMachinesRequest{Model: x.model}
	for _, c := range cs {
		req.Params = append(req.Params, &jujupb.AddMachineParams{Base: apiBase(c), Constraints: c.Constraints})
	}
	results, err := x.api.AddMachines(ctx, req)
	if err != nil {
		return fmt.Errorf("cannot create machines: %w", err)
	}
	for i, c := range cs {
		if i >= len(results) || results[i].GetError() != "" {
			msg := "no result"
			if i < len(results) {
				msg = results[i].GetError()
			}
			return fmt.Errorf("cannot create machine for %s: %s", machineFor(c), msg)
		}
		x.results[c.ID] = results[i].GetMachineId()
	}
	return nil
}

func machineFor(c *bundle.Change) string {
	if c.BundleMachine != "" {
		return "bundle machine " + c.BundleMachine
	}
	return "a unit"
}

// machine resolves a target to a machine id: an added machine, the machine of an added unit
// (read from status: the controller picked it), an existing machine.
func (x *executor) machine(ctx context.Context, t bundle.Target) (string, error) {
	if t.Machine != "" {
		return t.Machine, nil
	}
	v, ok := x.results[t.Change]
	if !ok {
		return "", fmt.Errorf("attempting to apply %s without prerequisites", t.Change)
	}
	if !strings.HasPrefix(t.Change, string(bundle.KindAddUnit)+"-") {
		return v, nil
	}
	if m, ok := x.unitMachines[v]; ok {
		return m, nil
	}
	st, err := x.api.FullStatus(ctx, x.model, []string{v})
	if err != nil {
		return "", fmt.Errorf("cannot retrieve placement for unit %q: %w", v, err)
	}
	for _, a := range st.GetApplications() {
		for _, u := range a.GetUnits() {
			x.unitMachines[u.GetName()] = u.GetMachine()
		}
	}
	m := x.unitMachines[v]
	if m == "" {
		return "", fmt.Errorf("cannot retrieve placement for unit %q: it has no machine", v)
	}
	return m, nil
}

func (x *executor) addUnits(ctx context.Context, cs []*bundle.Change) error {
	x.print(cs...)
	app := cs[0].Application
	req := &jujupb.AddUnitsRequest{Model: x.model, Application: app, NumUnits: int32(len(cs))}
	for _, c := range cs {
		if c.To == (bundle.Target{}) {
			continue
		}
		m, err := x.machine(ctx, c.To)
		if err != nil {
			return err
		}
		req.Placement = append(req.Placement, toPlacements([]placement.Directive{{Scope: placement.MachineScope, Machine: m}})...)
	}
	resp, err := x.api.AddUnits(ctx, req)
	if err != nil {
		return fmt.Errorf("cannot add unit for application %q: %w", app, err)
	}
	units := resp.GetUnits()
	for i, c := range cs {
		if i < len(units) {
			x.results[c.ID] = units[i]
			if i < len(req.Placement) {
				x.unitMachines[units[i]] = req.Placement[i].GetDirective()
			}
		}
	}
	return nil
}

// waitForBundle is deploy --wait for a bundle: every unit of the bundle's applications idle,
// principals first, then the subordinates their agents added.
func waitForBundle(ctx context.Context, opts *deployOptions, model string, c *bundle.Checked) error {
	if !opts.Wait {
		return nil
	}
	wc, err := opts.WaitClient(ctx)
	if err != nil {
		return err
	}
	apps := slices.Sorted(maps.Keys(c.Applications))
	var principals, subordinates []string
	for _, name := range apps {
		if c.Charms[name].Meta.Subordinate {
			subordinates = append(subordinates, name)
		} else {
			principals = append(principals, name)
		}
	}
	for _, group := range [][]string{principals, subordinates} {
		if len(group) == 0 {
			continue
		}
		st, err := wc.FullStatus(ctx, model, group)
		if err != nil {
			return err
		}
		for _, a := range st.GetApplications() {
			if !slices.Contains(group, a.GetName()) {
				continue
			}
			var units []string
			for _, u := range a.GetUnits() {
				units = append(units, u.GetName())
			}
			if err := cmdutil.WaitForUnits(ctx, opts.IO, wc, model, a.GetName(), units, opts.Timeout); err != nil {
				return err
			}
		}
	}
	return nil
}
