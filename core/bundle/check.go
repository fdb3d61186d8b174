package bundle

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/constraints"
	"github.com/jujuclone/juju/core/names"
)

// Charm is an application's charm as the checks and the plan need it.
type Charm struct {
	// Ref is the charm as the bundle names it ("./mysql"), for messages and plan lines.
	Ref string
	// Path is where it is on disk.
	Path string
	// Charm is its metadata and config.
	*charm.Charm
	// SHA256 is the hex sha256 of the archive that would be uploaded: the same as the
	// model's charm means the charm is already there.
	SHA256 string
}

// CharmLoader reads the charm at path (a directory or a .charm archive) that the bundle names
// ref.
type CharmLoader func(ref, path string) (*Charm, error)

// NameResolver finds a charm given by bare name ("mysql"), as deploy does in
// $JUJU_REPOSITORY; it returns an error saying why when it cannot.
type NameResolver func(name string) (string, error)

// Resource is a file the bundle gives an application's charm as a resource.
type Resource struct {
	Name string
	// Ref is the path as written, Path where it is.
	Ref, Path   string
	Fingerprint string // sha384, hex, as Juju identifies resource content
	Size        int64
	Pos         Pos
}

// Placement is one "to" directive: a bundle machine ("0"), "new", a unit ("mysql/1") or an
// application ("mysql": next to its next unit).
type Placement struct {
	Raw     string
	Pos     Pos
	Machine string // a bundle machine id or "new"
	App     string
	Unit    int // -1: any unit of App
}

// Endpoint is one side of a relation, resolved against the charm.
type Endpoint struct {
	App string
	charm.Relation
}

func (e Endpoint) String() string { return e.App + ":" + e.Name }

// CheckedRelation is a bundle relation with both endpoints resolved.
type CheckedRelation struct {
	*Relation
	// Written is the relation as the bundle writes it ("wordpress:db", "mysql"), for the
	// plan's lines.
	Written [2]string
	// Endpoints are resolved, inferred when the bundle leaves them out.
	Endpoints [2]Endpoint
}

// Key is the relation as the model describes it: both "application:endpoint", sorted.
func (r *CheckedRelation) Key() [2]string {
	k := [2]string{r.Endpoints[0].String(), r.Endpoints[1].String()}
	if k[1] < k[0] {
		k[0], k[1] = k[1], k[0]
	}
	return k
}

// Checked is a bundle that passed Check, with what the plan needs resolved.
type Checked struct {
	*Bundle
	// Charms by application name.
	Charms map[string]*Charm
	// Resources by application, then resource name.
	Resources map[string]map[string]*Resource
	// Placements by application.
	Placements map[string][]Placement
	Relations  []*CheckedRelation
	// DefaultBase is the bundle's default-base, parsed (zero when none).
	DefaultBase base.Base
}

// Check verifies a composed bundle against its charms before anything is sent: every charm is
// local and readable, placements name machines and applications the bundle defines without a
// cycle, relations name endpoints the charms have with matching interfaces, options are the
// charms' with the right types, resources are files the charms declare. Every error names its
// file, line and key; all are reported together.
func Check(b *Bundle, load CharmLoader, resolveName NameResolver) (*Checked, error) {
	k := &checker{
		c: &Checked{
			Bundle: b, Charms: map[string]*Charm{}, Resources: map[string]map[string]*Resource{},
			Placements: map[string][]Placement{},
		},
		load: load, resolveName: resolveName, byPath: map[string]*Charm{}, failed: map[string]bool{},
		machineRefs: map[string]int{},
	}
	k.bundle()
	if err := k.err(); err != nil {
		return nil, err
	}
	return k.c, nil
}

type checker struct {
	collector
	c           *Checked
	load        CharmLoader
	resolveName NameResolver
	byPath      map[string]*Charm
	failed      map[string]bool // charm paths that did not load (reported once)
	machineRefs map[string]int
}

func (k *checker) bundle() {
	b := k.c.Bundle
	if b.Type.Set && b.Type.Value != "" {
		if b.Type.Value == "kubernetes" {
			k.add(b.Type.Pos, "bundle", "kubernetes bundles are not supported: the local provider deploys machines")
		} else {
			k.add(b.Type.Pos, "bundle", "bundle has an invalid type %q", b.Type.Value)
		}
	}
	if f := b.DefaultBase; f.Set && !f.Null {
		if bs, err := k.base(f, "default-base", "bundle declares an invalid base %q", f.Value); err == nil {
			k.c.DefaultBase = bs
		}
	}
	for _, id := range sortedKeys(b.Machines) {
		k.machine(b.Machines[id])
	}
	if len(b.Applications) == 0 {
		pos := b.ApplicationsPos
		if pos.File == "" {
			pos = b.Pos
		}
		k.add(pos, "applications", "at least one application must be specified")
		return
	}
	for _, name := range sortedKeys(b.Applications) {
		k.application(b.Applications[name])
	}
	// Placements need every application's charm (subordinates have no units to go next to).
	for _, name := range sortedKeys(b.Applications) {
		k.placements(b.Applications[name])
	}
	k.placementCycles()
	k.relations()
	for _, id := range sortedKeys(b.Machines) {
		if k.machineRefs[id] == 0 {
			k.add(b.Machines[id].Pos, "machines."+id, "machine %q is not referred to by a placement directive", id)
		}
	}
}

// base parses a base and checks the local provider runs it.
func (k *checker) base(f Field[string], key, invalid string, args ...any) (base.Base, error) {
	bs, err := base.Parse(f.Value)
	if err != nil {
		k.add(f.Pos, key, invalid, args...)
		return base.Base{}, err
	}
	if !base.LocalProviderRuns(bs) {
		err := fmt.Errorf("base %s not supported: %s", bs.DisplayString(), base.LocalProviderString())
		k.add(f.Pos, key, "%v", err)
		return base.Base{}, err
	}
	return bs, nil
}

var machineIDRe = regexp.MustCompile(`^(?:0|[1-9][0-9]*)$`)

func (k *checker) machine(m *Machine) {
	key := "machines." + m.ID
	if !machineIDRe.MatchString(m.ID) {
		k.add(m.Pos, key, "invalid machine id %q found in machines", m.ID)
	}
	if f := m.Constraints; f.Set && f.Value != "" {
		if _, err := constraints.Parse(f.Value); err != nil {
			k.add(f.Pos, key+".constraints", "invalid constraints %q in machine %q: %v", f.Value, m.ID, err)
		}
	}
	if f := m.Base; f.Set && !f.Null {
		_, _ = k.base(f, key+".base", "invalid base %q for machine %q", f.Value, m.ID)
	}
	k.annotations(m.Annotations, key+".annotations")
}

func (k *checker) annotations(f Field[map[string]Field[string]], key string) {
	for _, name := range sortedKeys(f.Value) {
		v := f.Value[name]
		if name == "" || strings.Contains(name, ".") {
			k.add(v.Pos, key, "invalid annotation key %q: keys may not be empty or contain \".\"", name)
		}
	}
}

// charmOf resolves and loads an application's charm, once per path.
func (k *checker) charmOf(app *Application) *Charm {
	key := "applications." + app.Name + ".charm"
	f := app.Charm
	if !f.Set || f.Null || f.Value == "" {
		pos := f.Pos
		if !f.Set {
			pos = app.Pos
		}
		k.add(pos, key, "empty charm path")
		return nil
	}
	ref := f.Value
	var path string
	switch {
	case strings.HasPrefix(ref, ".") || filepath.IsAbs(ref):
		path = f.Pos.Resolve(ref)
	case strings.HasPrefix(ref, "local:") && (strings.HasPrefix(ref[6:], ".") || filepath.IsAbs(ref[6:])):
		path = f.Pos.Resolve(ref[6:])
	case strings.Contains(ref, ":"):
		k.add(f.Pos, key, "charm %q is not a local charm: there is no charm store; give the charm's path, relative to the bundle (./name)", ref)
		return nil
	default:
		if k.resolveName == nil {
			k.add(f.Pos, key, "charm %q is not a path: there is no charm store; give the charm's path, relative to the bundle (./%s)", ref, ref)
			return nil
		}
		p, err := k.resolveName(ref)
		if err != nil {
			k.add(f.Pos, key, "%v", err)
			return nil
		}
		path = p
	}
	if ch, ok := k.byPath[path]; ok {
		if ch == nil {
			return nil
		}
		// Another application uses the same charm: share it, keeping this one's name for it.
		cp := *ch
		cp.Ref = ref
		return &cp
	}
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			k.add(f.Pos, key, "charm path in application %q does not exist: %s", app.Name, ref)
		} else {
			k.add(f.Pos, key, "invalid charm path in application %q: %v", app.Name, err)
		}
		k.byPath[path] = nil
		return nil
	}
	ch, err := k.load(ref, path)
	if err != nil {
		k.add(f.Pos, key, "%v", err)
		k.byPath[path] = nil
		return nil
	}
	ch.Ref, ch.Path = ref, path
	k.byPath[path] = ch
	return ch
}

func (k *checker) application(app *Application) {
	key := "applications." + app.Name
	if err := names.ValidateApplicationName(app.Name); err != nil {
		k.add(app.Pos, key, "%v", err)
	}
	ch := k.charmOf(app)
	if ch != nil {
		k.c.Charms[app.Name] = ch
	}
	if f := app.Base; f.Set && !f.Null {
		_, _ = k.base(f, key+".base", "application %q declares an invalid base %q", app.Name, f.Value)
	}
	if f := app.Constraints; f.Set && f.Value != "" {
		if _, err := constraints.Parse(f.Value); err != nil {
			k.add(f.Pos, key+".constraints", "invalid constraints %q in application %q: %v", f.Value, app.Name, err)
		}
	}
	if app.NumUnits.Value < 0 {
		k.add(app.NumUnits.Pos, key+".num_units", "negative number of units specified on application %q", app.Name)
	}
	k.annotations(app.Annotations, key+".annotations")
	if ch == nil {
		return
	}
	meta := ch.Meta
	if meta.Subordinate {
		if app.NumUnits.Value > 0 {
			k.add(app.NumUnits.Pos, key+".num_units", "application %q is subordinate but has non-zero num_units", app.Name)
		}
		if len(app.To.Value) > 0 {
			k.add(app.To.Pos, key+".to", "application %q is subordinate but specifies unit placement", app.Name)
		}
		if app.Constraints.Value != "" {
			k.add(app.Constraints.Pos, key+".constraints", "application %q is subordinate: subordinates have no constraints", app.Name)
		}
	}
	k.options(app, ch, key+".options")
	k.resources(app, ch, key+".resources")
	endpoints := map[string]bool{"": true}
	for _, ep := range meta.Endpoints() {
		endpoints[ep.Name] = true
	}
	for _, ep := range sortedKeys(app.Bindings.Value) {
		v := app.Bindings.Value[ep]
		if !endpoints[ep] {
			k.add(v.Pos, key+".bindings", "application %q wants to bind endpoint %q to space %q, but the endpoint is not defined by the charm", app.Name, ep, v.Value)
		}
		if v.Value != "" && v.Value != "alpha" {
			k.add(v.Pos, key+".bindings", "space %q not found: the local provider has one space, alpha", v.Value)
		}
	}
	if app.ExposedEndpoints.Set && len(app.ExposedEndpoints.Value) > 0 {
		if app.Expose.Value {
			k.add(app.ExposedEndpoints.Pos, key+".exposed-endpoints",
				"exposed-endpoints cannot be specified together with \"exposed:true\" in application %q as this poses a security risk when deploying bundles to older controllers", app.Name)
		}
		for _, ep := range sortedKeys(app.ExposedEndpoints.Value) {
			spec := app.ExposedEndpoints.Value[ep]
			if !endpoints[ep] {
				k.add(spec.Pos, key+".exposed-endpoints", "application %q has no endpoint %q to expose", app.Name, ep)
			}
			for _, cidr := range spec.Value.CIDRs {
				if _, _, err := net.ParseCIDR(cidr); err != nil {
					k.add(spec.Pos, key+".exposed-endpoints", "invalid CIDR %q for expose to CIDRs field for endpoint %q in application %q", cidr, ep, app.Name)
				}
			}
			for _, space := range spec.Value.Spaces {
				if space != "alpha" {
					k.add(spec.Pos, key+".exposed-endpoints", "space %q not found: the local provider has one space, alpha", space)
				}
			}
		}
	}
}

// OptionString is an option's value as the API takes it (as typed on the command line), from
// the value the YAML gives: numbers for int and float options (or strings that are numbers),
// strings for string options, true or false for boolean ones.
func OptionString(opt charm.Option, v any) (string, error) {
	bad := fmt.Errorf("option %q expected %s, got %s", opt.Name, optType(opt), describeValue(v))
	var s string
	switch opt.Type {
	case charm.TypeString, "":
		x, ok := v.(string)
		if !ok {
			return "", bad
		}
		s = x
	case charm.TypeInt:
		switch x := v.(type) {
		case int64:
			s = strconv.FormatInt(x, 10)
		case float64:
			if x != math.Trunc(x) {
				return "", bad
			}
			s = strconv.FormatFloat(x, 'f', -1, 64)
		case string:
			s = x
		default:
			return "", bad
		}
	case charm.TypeFloat:
		switch x := v.(type) {
		case int64:
			s = strconv.FormatInt(x, 10)
		case float64:
			s = strconv.FormatFloat(x, 'g', -1, 64)
		case string:
			s = x
		default:
			return "", bad
		}
	case charm.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return "", bad
		}
		s = strconv.FormatBool(x)
	}
	if _, err := charm.ParseValue(opt, s); err != nil {
		return "", bad
	}
	return s, nil
}

func optType(opt charm.Option) string {
	if opt.Type == "" {
		return charm.TypeString
	}
	return opt.Type
}

func describeValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func (k *checker) options(app *Application, ch *Charm, key string) {
	for _, name := range sortedKeys(app.Options.Value) {
		v := app.Options.Value[name]
		if v.Null {
			k.add(v.Pos, key+"."+name, "option %q has no value (null removes an option only in an overlay)", name)
			continue
		}
		opt, err := ch.Config.Option(name)
		if err != nil {
			k.add(v.Pos, key+"."+name, "configuration option %q not found in charm %q", name, ch.Ref)
			continue
		}
		if _, err := OptionString(opt, v.Value); err != nil {
			k.add(v.Pos, key+"."+name, "%v", err)
		}
	}
}

func (k *checker) resources(app *Application, ch *Charm, key string) {
	for _, name := range sortedKeys(app.Resources.Value) {
		v := app.Resources.Value[name]
		rkey := key + "." + name
		meta, ok := ch.Meta.Resources[name]
		if !ok {
			k.add(v.Pos, rkey, "charm %q has no resource %q", ch.Ref, name)
			continue
		}
		if meta.Type != charm.ResourceFile {
			k.add(v.Pos, rkey, "resource %q is of type %s, which only Kubernetes models use", name, meta.Type)
			continue
		}
		if v.Null || v.Value == "" {
			k.add(v.Pos, rkey, "resource %q needs the path of a file", name)
			continue
		}
		path := v.Pos.Resolve(v.Value)
		f, err := os.Open(path)
		if err != nil {
			k.add(v.Pos, rkey, "resource %q: %v", name, err)
			continue
		}
		info, err := f.Stat()
		if err == nil && !info.Mode().IsRegular() {
			err = fmt.Errorf("%s is not a regular file", path)
		} else if err == nil && info.Size() > charm.MaxResourceSize {
			err = fmt.Errorf("%s is %d bytes, more than the limit of %d", path, info.Size(), charm.MaxResourceSize)
		}
		var fp string
		var size int64
		if err == nil {
			fp, size, err = charm.ReaderFingerprint(f)
		}
		f.Close()
		if err != nil {
			k.add(v.Pos, rkey, "resource %q: %v", name, err)
			continue
		}
		if k.c.Resources[app.Name] == nil {
			k.c.Resources[app.Name] = map[string]*Resource{}
		}
		k.c.Resources[app.Name][name] = &Resource{Name: name, Ref: v.Value, Path: path, Fingerprint: fp, Size: size, Pos: v.Pos}
	}
}

var placementRe = regexp.MustCompile(`^(?:([a-z]+):)?(?:(` + `[a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*` + `)(?:/(0|[1-9][0-9]*))?|(0|[1-9][0-9]*))$`)

// ParsePlacement parses one "to" directive: (container:)?(application(/unit)?|machine|new).
func ParsePlacement(raw string) (Placement, error) {
	m := placementRe.FindStringSubmatch(raw)
	if m == nil {
		return Placement{}, fmt.Errorf("invalid placement syntax %q", raw)
	}
	p := Placement{Raw: raw, App: m[2], Machine: m[4], Unit: -1}
	if m[3] != "" {
		p.Unit, _ = strconv.Atoi(m[3])
	}
	if p.App == "new" {
		if p.Unit != -1 {
			return Placement{}, fmt.Errorf("invalid placement syntax %q", raw)
		}
		p.App, p.Machine = "", "new"
	}
	if m[1] != "" {
		return Placement{}, fmt.Errorf("placement %q puts the unit in a %s container: containers are not supported, the local provider deploys units to machines", raw, m[1])
	}
	return p, nil
}

func (k *checker) placements(app *Application) {
	key := "applications." + app.Name + ".to"
	to := app.To.Value
	if len(to) > 0 && len(to) > app.NumUnits.Value && app.NumUnits.Value >= 0 {
		k.add(app.To.Pos, key, "too many units specified in unit placement for application %q", app.Name)
	}
	for _, f := range to {
		p, err := ParsePlacement(f.Value)
		if err != nil {
			k.add(f.Pos, key, "%v", err)
			continue
		}
		p.Pos = f.Pos
		switch {
		case p.App != "":
			target, ok := k.c.Bundle.Applications[p.App]
			if !ok {
				k.add(f.Pos, key, "placement %q refers to an application not defined in this bundle", f.Value)
				continue
			}
			if ch := k.c.Charms[p.App]; ch != nil && ch.Meta.Subordinate {
				k.add(f.Pos, key, "placement %q refers to subordinate application %q, which has no units of its own", f.Value, p.App)
				continue
			}
			if p.Unit >= 0 && p.Unit >= target.NumUnits.Value {
				k.add(f.Pos, key, "placement %q specifies a unit greater than the %d unit(s) started by the target application", f.Value, target.NumUnits.Value)
			}
		case p.Machine == "new":
		default:
			if _, ok := k.c.Bundle.Machines[p.Machine]; !ok {
				k.add(f.Pos, key, "placement %q refers to a machine not defined in this bundle", f.Value)
				continue
			}
			k.machineRefs[p.Machine]++
		}
		k.c.Placements[app.Name] = append(k.c.Placements[app.Name], p)
	}
}

// placementCycles refuses applications placed next to each other's units in a circle: none
// of them could be placed first. Juju finds this only while planning.
func (k *checker) placementCycles() {
	deps := map[string][]string{}
	for app, ps := range k.c.Placements {
		for _, p := range ps {
			if p.App != "" && !slices.Contains(deps[app], p.App) {
				deps[app] = append(deps[app], p.App)
			}
		}
	}
	done := map[string]bool{}
	todo := sortedKeys(k.c.Bundle.Applications)
	for len(todo) > 0 {
		var left []string
		for _, app := range todo {
			ready := true
			for _, d := range deps[app] {
				if !done[d] {
					ready = false
				}
			}
			if ready {
				done[app] = true
			} else {
				left = append(left, app)
			}
		}
		if len(left) == len(todo) {
			// Report at the first application's "to": the rest of the cycle is named.
			app := k.c.Bundle.Applications[left[0]]
			k.add(app.To.Pos, "applications."+app.Name+".to", "cycle in placement directives for: %s", strings.Join(left, ", "))
			return
		}
		todo = left
	}
}

var endpointSpecRe = regexp.MustCompile(`^([a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*)(?::([a-z][a-z0-9]*(?:[_-][a-z0-9]+)*))?$`)

// splitEndpoint splits "application[:endpoint]".
func splitEndpoint(s string) (app, endpoint string, ok bool) {
	m := endpointSpecRe.FindStringSubmatch(s)
	if m == nil {
		return s, "", false
	}
	return m[1], m[2], true
}

func (k *checker) relations() {
	seen := map[[2]string]*CheckedRelation{}
	for i, rel := range k.c.Bundle.Relations {
		key := fmt.Sprintf("relations[%d]", i)
		var apps, eps [2]string
		ok := true
		for j, ep := range rel.Endpoints {
			app, name, valid := splitEndpoint(ep.Value)
			if !valid {
				k.add(ep.Pos, key, "invalid relation syntax %q", ep.Value)
				ok = false
				continue
			}
			if _, defined := k.c.Bundle.Applications[app]; !defined {
				k.add(ep.Pos, key, "relation %q refers to application %q not defined in this bundle", rel.String(), app)
				ok = false
				continue
			}
			apps[j], eps[j] = app, name
		}
		if !ok {
			continue
		}
		if apps[0] == apps[1] {
			k.add(rel.Pos, key, "relation %q relates an application to itself", rel.String())
			continue
		}
		ch0, ch1 := k.c.Charms[apps[0]], k.c.Charms[apps[1]]
		if ch0 == nil || ch1 == nil {
			continue // the charm's own error is reported
		}
		resolved, err := resolveRelation(apps, eps, [2]*Charm{ch0, ch1}, rel)
		if err != nil {
			k.add(rel.Pos, key, "%v", err)
			continue
		}
		cr := &CheckedRelation{Relation: rel, Written: [2]string{rel.Endpoints[0].Value, rel.Endpoints[1].Value}, Endpoints: resolved}
		if _, dup := seen[cr.Key()]; dup {
			k.add(rel.Pos, key, "relation %q is defined more than once", rel.String())
			continue
		}
		seen[cr.Key()] = cr
		if resolved[0].Scope == charm.ScopeContainer || resolved[1].Scope == charm.ScopeContainer {
			if !ch0.Meta.Subordinate && !ch1.Meta.Subordinate {
				k.add(rel.Pos, key, "relation %q is container-scoped, so one of %q and %q must be a subordinate", rel.String(), apps[0], apps[1])
				continue
			}
		}
		k.c.Relations = append(k.c.Relations, cr)
	}
}

// resolveRelation finds the endpoints a relation means, with Juju's messages: an endpoint
// the charm lacks, two providers or two requirers, mismatched interfaces; a missing endpoint
// name is inferred (the implicit juju-info gives way to explicit endpoints).
func resolveRelation(apps, eps [2]string, charms [2]*Charm, rel *Relation) ([2]Endpoint, error) {
	var out [2]Endpoint
	candidates := func(i int) []charm.Relation {
		var rs []charm.Relation
		for _, r := range charms[i].Meta.Endpoints() {
			if r.Role == charm.RolePeer {
				continue
			}
			if eps[i] == "" || r.Name == eps[i] {
				rs = append(rs, r)
			}
		}
		return rs
	}
	c0, c1 := candidates(0), candidates(1)
	if eps[0] != "" && eps[1] != "" {
		for i, c := range [][]charm.Relation{c0, c1} {
			if len(c) == 0 {
				return out, fmt.Errorf("charm %q used by application %q does not define relation %q", charms[i].Ref, apps[i], eps[i])
			}
		}
		// A subordinate's requires juju-info sits beside the implicit provider of the same
		// name: take the pair that can relate, and report on the first only when none can.
		r0, r1 := c0[0], c1[0]
	pick:
		for _, x := range c0 {
			for _, y := range c1 {
				if x.Role != y.Role && x.Interface == y.Interface {
					r0, r1 = x, y
					break pick
				}
			}
		}
		out = [2]Endpoint{{App: apps[0], Relation: r0}, {App: apps[1], Relation: r1}}
		switch {
		case r0.Role == r1.Role && r0.Role == charm.RoleProvider:
			return out, fmt.Errorf("relation %q to %q relates provider to provider", rel.Endpoints[0].Value, rel.Endpoints[1].Value)
		case r0.Role == r1.Role:
			return out, fmt.Errorf("relation %q to %q relates requirer to requirer", rel.Endpoints[0].Value, rel.Endpoints[1].Value)
		case r0.Interface != r1.Interface:
			prov, req := out[0], out[1]
			if r0.Role == charm.RoleRequirer {
				prov, req = req, prov
			}
			return out, fmt.Errorf("mismatched interface between %q and %q (%q vs %q)", prov.String(), req.String(), prov.Interface, req.Interface)
		}
		return out, nil
	}
	var pairs [][2]charm.Relation
	for _, x := range c0 {
		for _, y := range c1 {
			if x.Interface == y.Interface && x.Role != y.Role {
				pairs = append(pairs, [2]charm.Relation{x, y})
			}
		}
	}
	if len(pairs) > 1 {
		explicit := slices.DeleteFunc(slices.Clone(pairs), func(p [2]charm.Relation) bool {
			return p[0].Name == charm.JujuInfo || p[1].Name == charm.JujuInfo
		})
		if len(explicit) > 0 {
			pairs = explicit
		}
	}
	switch len(pairs) {
	case 0:
		return out, fmt.Errorf("cannot infer endpoint between %s and %s: no relations found", rel.Endpoints[0].Value, rel.Endpoints[1].Value)
	case 1:
		return [2]Endpoint{{App: apps[0], Relation: pairs[0][0]}, {App: apps[1], Relation: pairs[0][1]}}, nil
	}
	var keys []string
	for _, p := range pairs {
		keys = append(keys, fmt.Sprintf("%q", apps[0]+":"+p[0].Name+" "+apps[1]+":"+p[1].Name))
	}
	slices.Sort(keys)
	return out, fmt.Errorf("cannot infer endpoint between %s and %s: ambiguous relation: %s %s could refer to %s",
		rel.Endpoints[0].Value, rel.Endpoints[1].Value, rel.Endpoints[0].Value, rel.Endpoints[1].Value, strings.Join(keys, "; "))
}
