package bundle

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/constraints"
)

// PlanOptions is what a plan is computed against.
type PlanOptions struct {
	// Model is the model as it is; nil is an empty model.
	Model *Model
	// UseExisting maps each bundle machine to the model's machine of the same id, when the
	// model has one (--map-machines existing); MachineMap maps bundle machines to model
	// machines (--map-machines 0=3).
	UseExisting bool
	MachineMap  map[string]string
	// Force accepts a base the charm does not declare (deploy --force).
	Force bool
}

// Plan computes what deploying the bundle changes in the model: only the difference, in
// Juju's order and words. An application the model has keeps its charm when the charm's
// archive is the same (sha256), else it is upgraded; its options are set only where they
// differ; its missing units are added, never removed; relations the model has are not added
// again; bundle machines are mapped onto the model's machines that already host the units
// placed on them (or as --map-machines says). Nothing in the model is removed or unexposed.
// A model that already matches gives an empty plan.
func (c *Checked) Plan(opts PlanOptions) (*Plan, error) {
	m := opts.Model
	if m == nil {
		m = &Model{}
	}
	p := &planner{
		c: c, m: m, opts: opts, seq: newSequences(m),
		bases: map[string]base.Base{}, machineMap: map[string]string{},
		charmChanges: map[string]string{}, deployChanges: map[string]string{},
		machineChanges: map[string]*Change{}, machineBases: map[string]base.Base{},
		unitChanges: map[string]*Change{}, appUnitChanges: map[string][]*Change{},
		unitInfo: map[*Change]*unitInfo{}, existingWithout: map[string][]string{}, newWithout: map[string][]*Change{},
	}
	if m.DefaultBase != "" {
		if b, err := base.Parse(m.DefaultBase); err == nil {
			p.modelBase = b
		}
	}
	if err := p.mapMachines(); err != nil {
		return nil, err
	}
	p.chooseBases()
	if err := p.err(); err != nil {
		return nil, err
	}
	p.inferMachineMap()
	p.machineBasesAndChecks()
	p.applications()
	p.machines()
	p.relations()
	p.units()
	if err := p.err(); err != nil {
		return nil, err
	}
	if err := p.allMachinesUsed(); err != nil {
		return nil, err
	}
	return &Plan{Changes: p.cs.sorted()}, nil
}

type planner struct {
	collector
	c         *Checked
	m         *Model
	opts      PlanOptions
	cs        changeset
	seq       *sequences
	modelBase base.Base

	bases      map[string]base.Base // each application's
	machineMap map[string]string    // bundle machine id → model machine id

	charmChanges   map[string]string    // charm path → its addCharm change
	deployChanges  map[string]string    // new application → its deploy change
	machineChanges map[string]*Change   // bundle machine → its addMachines change
	machineBases   map[string]base.Base // bundle machine → its base (zero: the model's default)

	unitChanges     map[string]*Change   // "app/<index>" → the addUnit change of the index-th unit
	appUnitChanges  map[string][]*Change // application → its addUnit changes
	unitInfo        map[*Change]*unitInfo
	existingWithout map[string][]string  // "app/target" → model machines with target's units and no app's
	newWithout      map[string][]*Change // "app/target" → target's new units not yet shared with app
}

// unitInfo is what placing other units next to a new unit needs to know about it.
type unitInfo struct {
	baseMachine string // the (predicted) machine it goes to
	where       string // the placement's words: "new machine 3", "existing machine 1"
	directive   string // the bundle's directive it satisfies, if it names a unit or application
	machineBase base.Base
}

func (p *planner) modelApp(name string) *ModelApplication {
	return p.m.Applications[name]
}

func isAlive(life string) bool { return life == "" || life == alive }

// mapMachines applies --map-machines: explicit entries must name the model's machines.
func (p *planner) mapMachines() error {
	if p.opts.UseExisting {
		for id, mm := range p.m.Machines {
			if !strings.Contains(id, "/") && isAlive(mm.Life) {
				p.machineMap[id] = id
			}
		}
	}
	for _, b := range sortedKeys(p.opts.MachineMap) {
		id := p.opts.MachineMap[b]
		mm, ok := p.m.Machines[id]
		if !ok {
			return fmt.Errorf("error in --map-machines: machine %q not found in the model", id)
		}
		if !isAlive(mm.Life) {
			return fmt.Errorf("error in --map-machines: machine %q is %s", id, mm.Life)
		}
		p.machineMap[b] = id
	}
	return nil
}

// chooseBases picks each application's base: the model's for one it has, else the first of
// the bundle's (application, then default-base), the model's default, the charm's.
func (p *planner) chooseBases() {
	for _, name := range sortedKeys(p.c.Applications) {
		app := p.c.Applications[name]
		if ma := p.modelApp(name); ma != nil {
			if b, err := base.Parse(ma.Base); err == nil {
				p.bases[name] = b
			}
			continue
		}
		ch := p.c.Charms[name]
		requested, pos, key := p.c.DefaultBase, p.c.Bundle.DefaultBase.Pos, "default-base"
		if app.Base.Set && !app.Base.Null {
			requested, _ = base.Parse(app.Base.Value)
			pos, key = app.Base.Pos, "applications."+name+".base"
		} else if requested.IsZero() {
			pos, key = app.Charm.Pos, "applications."+name+".charm"
		}
		b, err := base.Select(requested, p.modelBase, ch.Meta.Bases, p.opts.Force)
		if err != nil {
			p.add(pos, key, "application %q: %v", name, err)
			continue
		}
		p.bases[name] = b
	}
}

// inferMachineMap maps bundle machines onto the model's machines that already hold what the
// bundle places on them, so that deploying a bundle again finds its machines: first a machine
// with the same id hosting a unit of an application placed there, then, for each bundle
// machine still unmapped, the machine of the next unit of an application placed there.
func (p *planner) inferMachineMap() {
	claimed := map[string]bool{}
	for _, id := range p.machineMap {
		claimed[id] = true
	}
	// The units each application has on machines not claimed yet, in order.
	free := map[string][]ModelUnit{}
	for name, ma := range p.m.Applications {
		for _, u := range ma.Units {
			if u.Machine != "" && isAlive(u.Life) && !claimed[topLevel(u.Machine)] {
				free[name] = append(free[name], u)
			}
		}
		slices.SortFunc(free[name], func(a, b ModelUnit) int { return naturalCompare(a.Name, b.Name) })
	}
	take := func(app, unit string) {
		free[app] = slices.DeleteFunc(free[app], func(u ModelUnit) bool { return u.Name == unit })
	}
	unused := map[string][]string{}
	for _, name := range sortedKeys(p.c.Applications) {
		ma := p.modelApp(name)
		for _, pl := range p.c.Placements[name] {
			if pl.Machine == "" || pl.Machine == "new" {
				continue
			}
			if _, mapped := p.machineMap[pl.Machine]; !mapped {
				if mm, ok := p.m.Machines[pl.Machine]; ok && isAlive(mm.Life) {
					if u := ma.unitOn(pl.Machine); u != "" && !claimed[pl.Machine] {
						p.machineMap[pl.Machine] = pl.Machine
						claimed[pl.Machine] = true
						take(name, u)
						continue
					}
				}
			}
			unused[name] = append(unused[name], pl.Machine)
		}
	}
	for _, id := range sortedKeys(p.c.Machines) {
		if _, mapped := p.machineMap[id]; mapped {
			continue
		}
	search:
		for _, name := range sortedKeys(p.c.Applications) {
			for _, target := range unused[name] {
				if target != id {
					continue
				}
				for _, u := range free[name] {
					machine := topLevel(u.Machine)
					if claimed[machine] {
						continue
					}
					p.machineMap[id] = machine
					claimed[machine] = true
					take(name, u.Name)
					break search
				}
			}
		}
	}
}

// bundleMachine returns the model machine a bundle machine is mapped to, "" when it is new.
func (p *planner) bundleMachine(id string) string {
	mid, ok := p.machineMap[id]
	if !ok {
		return ""
	}
	if mm, ok := p.m.Machines[mid]; ok && isAlive(mm.Life) {
		return mid
	}
	return ""
}

// machineBasesAndChecks gives each new bundle machine its base (its own, the bundle's
// default, or that of the applications placed on it) and refuses applications placed on a
// machine of another base: a unit runs on its application's base (L-C1).
func (p *planner) machineBasesAndChecks() {
	for _, id := range sortedKeys(p.c.Machines) {
		bm := p.c.Machines[id]
		var mb base.Base
		what := ""
		if mid := p.bundleMachine(id); mid != "" {
			mb, _ = base.Parse(p.m.Machines[mid].Base)
			what = fmt.Sprintf("machine %s of the model", mid)
		} else if bm.Base.Set && !bm.Base.Null {
			mb, _ = base.Parse(bm.Base.Value)
			what = fmt.Sprintf("bundle machine %q", id)
		} else if !p.c.DefaultBase.IsZero() {
			mb = p.c.DefaultBase
			what = fmt.Sprintf("bundle machine %q (the bundle's default-base)", id)
		}
		for _, name := range sortedKeys(p.c.Applications) {
			ab, ok := p.bases[name]
			if !ok {
				continue
			}
			for _, pl := range p.c.Placements[name] {
				if pl.Machine != id {
					continue
				}
				if mb.IsZero() {
					mb = ab
					what = fmt.Sprintf("bundle machine %q (the base of %q, placed on it first)", id, name)
					continue
				}
				if !mb.IsCompatible(ab) {
					p.add(pl.Pos, "applications."+name+".to", "placement %q puts application %q (%s) on %s, which is %s: a unit runs on its application's base",
						pl.Raw, name, ab.DisplayString(), what, mb.DisplayString())
				}
			}
		}
		p.machineBases[id] = mb
	}
}

// applications adds, for each application, what it needs: its charm uploaded, deployed or
// upgraded, options, constraints, resources, exposure and annotations.
func (p *planner) applications() {
	for _, name := range sortedKeys(p.c.Applications) {
		app := p.c.Applications[name]
		ch := p.c.Charms[name]
		ma := p.modelApp(name)
		key := "applications." + name
		b := p.bases[name]

		charmChange, charmURL := "", ""
		// A model that does not say which archive it has is not upgraded blindly.
		needCharm := ma == nil || (ma.CharmSHA256 != "" && ma.CharmSHA256 != ch.SHA256)
		if needCharm {
			charmChange, charmURL = p.charm(ch, b)
		}
		if ma == nil {
			opts, _ := p.optionStrings(app, ch, nil)
			deploy := p.cs.add(&Change{
				Kind: KindDeploy, Application: name, Charm: ch, CharmChange: charmChange, CharmURL: charmURL,
				Base: b, Options: opts, Constraints: canonicalConstraints(app.Constraints.Value),
				Trust: app.Trust.Value, Resources: p.resourceList(name, nil),
				description: []string{fmt.Sprintf("deploy application %s on %s", name, b.DisplayString())},
			})
			if charmChange != "" {
				deploy.Requires = []string{charmChange}
			}
			p.deployChanges[name] = deploy.ID
			if exposed := p.exposed(app); exposed != nil {
				p.cs.add(&Change{Kind: KindExpose, Application: name, Exposed: exposed.eps, Requires: []string{deploy.ID},
					description: exposeLines(name, exposed.eps)})
			}
		} else {
			if !p.existing(app, ch, ma, key) {
				continue
			}
			if needCharm {
				up := p.cs.add(&Change{
					Kind: KindUpgradeCharm, Application: name, Charm: ch, CharmChange: charmChange, CharmURL: charmURL, Base: b,
					Resources:   p.resourceList(name, ma),
					description: []string{fmt.Sprintf("upgrade %s using charm %s for base %s", name, ch.Ref, b.DisplayString())},
				})
				if charmChange != "" {
					up.Requires = []string{charmChange}
				}
			} else {
				for _, r := range p.resourceList(name, ma) {
					p.cs.add(&Change{Kind: KindAttachResource, Application: name, Resources: []*Resource{r},
						description: []string{fmt.Sprintf("attach resource %s to %s from %s", r.Name, name, r.Ref)}})
				}
			}
			if opts, _ := p.optionStrings(app, ch, ma); len(opts) > 0 {
				p.cs.add(&Change{Kind: KindSetOptions, Application: name, Options: opts,
					description: []string{"set application options for " + name}})
			}
			if cons := canonicalConstraints(app.Constraints.Value); !ma.Subordinate && cons != canonicalConstraints(ma.Constraints) {
				p.cs.add(&Change{Kind: KindSetConstraints, Application: name, Constraints: cons,
					description: []string{fmt.Sprintf("set constraints for %s to %q", name, cons)}})
			}
			// As in Juju: expose when needed, never unexpose.
			if exposed := p.exposed(app); exposed != nil && !(ma.Exposed && sameExposure(exposed.eps, ma.ExposedEndpoints)) {
				p.cs.add(&Change{Kind: KindExpose, Application: name, Exposed: exposed.eps, description: exposeLines(name, exposed.eps)})
			}
		}
		var current map[string]string
		if ma != nil {
			current = ma.Annotations
		}
		if ann := changedAnnotations(current, app.Annotations.Value); len(ann) > 0 {
			c := p.cs.add(&Change{Kind: KindSetAnnotations, Application: name, Annotations: ann,
				description: []string{"set annotations for " + name}})
			if id := p.deployChanges[name]; id != "" {
				c.Requires = []string{id}
			}
		}
	}
}

// charm returns the change uploading ch, added once per charm; or, when an application of
// the model already has the same archive, that charm's URL.
func (p *planner) charm(ch *Charm, b base.Base) (change, url string) {
	if id, ok := p.charmChanges[ch.Path]; ok {
		return id, ""
	}
	for _, name := range sortedKeys(p.m.Applications) {
		if ma := p.m.Applications[name]; ma.CharmSHA256 != "" && ma.CharmSHA256 == ch.SHA256 {
			return "", ma.CharmURL
		}
	}
	c := p.cs.add(&Change{Kind: KindUploadCharm, Charm: ch, Base: b,
		description: []string{fmt.Sprintf("upload charm %s for base %s", ch.Ref, b.DisplayString())}})
	p.charmChanges[ch.Path] = c.ID
	return c.ID, ""
}

// existing refuses what cannot change in an application the model has: a dying one, another
// charm name, a principal turned subordinate.
func (p *planner) existing(app *Application, ch *Charm, ma *ModelApplication, key string) bool {
	switch {
	case !isAlive(ma.Life):
		p.add(app.Pos, key, "application %q is %s in the model: wait until it is removed, or give the bundle's application another name", app.Name, ma.Life)
	case ma.CharmName != "" && ma.CharmName != ch.Meta.Name:
		p.add(app.Charm.Pos, key+".charm", "application %q runs charm %q; the bundle's charm %s is %q, and an application cannot change its charm's name",
			app.Name, ma.CharmName, ch.Ref, ch.Meta.Name)
	case ma.Subordinate != ch.Meta.Subordinate:
		p.add(app.Charm.Pos, key+".charm", "application %q is a %s; the bundle's charm %s would make it a %s",
			app.Name, kind(ma.Subordinate), ch.Ref, kind(ch.Meta.Subordinate))
	default:
		return true
	}
	return false
}

func kind(subordinate bool) string {
	if subordinate {
		return "subordinate"
	}
	return "principal"
}

// optionStrings returns the bundle's options as the API takes them: all of them for a new
// application; for one the model has, only those whose value differs from the model's (a
// value the user never set counts as its default).
func (p *planner) optionStrings(app *Application, ch *Charm, ma *ModelApplication) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range sortedKeys(app.Options.Value) {
		v := app.Options.Value[name]
		opt, err := ch.Config.Option(name)
		if err != nil {
			return nil, err
		}
		s, err := OptionString(opt, v.Value)
		if err != nil {
			return nil, err
		}
		if ma != nil {
			typed, _ := charm.ParseValue(opt, s)
			want, _ := charm.EncodeValue(typed)
			current, set := ma.Config[name]
			if set && canonicalJSON(current) == want {
				continue
			}
			if !set && opt.Default != nil {
				if def, err := charm.EncodeValue(opt.Default); err == nil && def == want {
					continue
				}
			}
		}
		out[name] = s
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func canonicalJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	out, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(out)
}

func canonicalConstraints(s string) string {
	v, err := constraints.Parse(s)
	if err != nil {
		return s
	}
	return v.String()
}

// resourceList returns the bundle's resources of an application: all of them, or (ma given)
// those whose content differs from the application's current revision.
func (p *planner) resourceList(app string, ma *ModelApplication) []*Resource {
	var out []*Resource
	rs := p.c.Resources[app]
	for _, name := range sortedKeys(rs) {
		r := rs[name]
		if ma != nil && ma.Resources[name] == r.Fingerprint {
			continue
		}
		out = append(out, r)
	}
	return out
}

type exposure struct{ eps map[string]ExposeSpec }

// exposed returns what the bundle exposes of an application (nil eps: every endpoint from
// anywhere), or nil when it exposes nothing.
func (p *planner) exposed(app *Application) *exposure {
	if len(app.ExposedEndpoints.Value) > 0 {
		eps := map[string]ExposeSpec{}
		for name, f := range app.ExposedEndpoints.Value {
			eps[name] = f.Value
		}
		return &exposure{eps: eps}
	}
	if app.Expose.Value {
		return &exposure{}
	}
	return nil
}

var allCIDRs = []string{"0.0.0.0/0", "::/0"}

// sameExposure compares what the bundle exposes with what the model has, an empty CIDR and
// space list meaning everywhere, and "expose: true" every endpoint from everywhere.
func sameExposure(want, have map[string]ExposeSpec) bool {
	norm := func(m map[string]ExposeSpec) map[string]ExposeSpec {
		if len(m) == 0 {
			return map[string]ExposeSpec{"": {CIDRs: allCIDRs}}
		}
		out := map[string]ExposeSpec{}
		for k, v := range m {
			if len(v.CIDRs) == 0 && len(v.Spaces) == 0 {
				v.CIDRs = allCIDRs
			}
			out[k] = v
		}
		return out
	}
	w, h := norm(want), norm(have)
	if len(w) != len(h) {
		return false
	}
	for k, v := range w {
		o, ok := h[k]
		if !ok || !sameSet(v.CIDRs, o.CIDRs) || !sameSet(v.Spaces, o.Spaces) {
			return false
		}
	}
	return true
}

// changedAnnotations returns the annotations that differ from the current ones.
func changedAnnotations(current map[string]string, want map[string]Field[string]) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		if cur, ok := current[k]; !ok || cur != v.Value {
			out[k] = v.Value
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// machines adds the bundle's machines the model does not have, and their annotations.
func (p *planner) machines() {
	for _, id := range sortedKeys(p.c.Machines) {
		bm := p.c.Machines[id]
		var (
			target   Target
			where    string
			requires []string
			current  map[string]string
		)
		if mid := p.bundleMachine(id); mid != "" {
			target, where = Target{Machine: mid}, "existing machine "+mid
			current = p.m.Machines[mid].Annotations
		} else {
			machineID := p.seq.nextMachine()
			desc := "add new machine " + machineID
			if machineID != id {
				desc += " (bundle machine " + id + ")"
			}
			c := p.cs.add(&Change{Kind: KindAddMachine, MachineID: machineID, BundleMachine: id, Base: p.machineBases[id],
				Constraints: canonicalConstraints(bm.Constraints.Value), description: []string{desc}})
			p.machineChanges[id] = c
			target, where, requires = Target{Change: c.ID}, "new machine "+machineID, []string{c.ID}
		}
		if ann := changedAnnotations(current, bm.Annotations.Value); len(ann) > 0 {
			p.cs.add(&Change{Kind: KindSetAnnotations, Machine: target, Annotations: ann, Requires: requires,
				description: []string{"set annotations for " + where}})
		}
	}
}

// relations adds the bundle's relations the model does not have, in the bundle's order.
func (p *planner) relations() {
	have := map[[2]string]string{}
	for _, r := range p.m.Relations {
		have[r.Endpoints] = r.Life
	}
	for _, rel := range p.c.Relations {
		if life, ok := have[rel.Key()]; ok {
			if !isAlive(life) {
				p.add(rel.Pos, "relations", "relation %q is %s in the model: wait until it is removed", rel.String(), life)
			}
			continue
		}
		var requires []string
		for _, ep := range rel.Endpoints {
			if id := p.deployChanges[ep.App]; id != "" {
				requires = append(requires, id)
			}
		}
		// L-D6: the two sides of a container-scoped relation run on the same base.
		if rel.Endpoints[0].Scope == charm.ScopeContainer || rel.Endpoints[1].Scope == charm.ScopeContainer {
			b0, b1 := p.bases[rel.Endpoints[0].App], p.bases[rel.Endpoints[1].App]
			if !b0.IsZero() && !b1.IsZero() && !b0.IsCompatible(b1) {
				p.add(rel.Pos, "relations", "relation %q is container-scoped, but %q is on %s and %q on %s: they must share a base",
					rel.String(), rel.Endpoints[0].App, b0.DisplayString(), rel.Endpoints[1].App, b1.DisplayString())
				continue
			}
		}
		p.cs.add(&Change{Kind: KindAddRelation, Endpoints: [2]string{rel.Endpoints[0].String(), rel.Endpoints[1].String()}, Requires: requires,
			description: []string{fmt.Sprintf("add relation %s - %s", rel.Written[0], rel.Written[1])}})
	}
}

// units adds the missing units of each principal application, then places them: applications
// whose placements name other applications after those (Check refused cycles).
func (p *planner) units() {
	names := sortedKeys(p.c.Applications)
	for _, name := range names {
		app := p.c.Applications[name]
		ch := p.c.Charms[name]
		if ch.Meta.Subordinate {
			continue
		}
		ma := p.modelApp(name)
		if ma != nil && !isAlive(ma.Life) {
			continue
		}
		for i := ma.aliveUnits(); i < app.NumUnits.Value; i++ {
			c := &Change{Kind: KindAddUnit, Application: name, Unit: p.seq.nextUnit(name)}
			if id := p.deployChanges[name]; id != "" {
				c.Requires = []string{id}
			}
			p.cs.add(c)
			p.unitChanges[unitKey(name, i)] = c
			p.appUnitChanges[name] = append(p.appUnitChanges[name], c)
		}
	}
	done := map[string]bool{}
	for len(done) < len(names) {
		progress := false
		for _, name := range names {
			if done[name] {
				continue
			}
			ready := true
			for _, pl := range p.c.Placements[name] {
				if pl.App != "" && pl.App != name && !done[pl.App] {
					ready = false
				}
			}
			if !ready {
				continue
			}
			p.place(name)
			done[name] = true
			progress = true
		}
		if !progress {
			return // a cycle: Check reported it
		}
	}
}

func unitKey(app string, i int) string { return app + "/" + strconv.Itoa(i) }

// place sets where each new unit of an application goes: its placements in order, those the
// model already satisfies skipped; past the last, the last again if it is "new" or an
// application, else a new machine.
func (p *planner) place(name string) {
	app := p.c.Applications[name]
	ma := p.modelApp(name)
	pls := p.c.Placements[name]
	var last *Placement
	if n := len(pls); n > 0 {
		l := pls[n-1]
		if l.Machine == "new" || (l.App != "" && l.Unit < 0) {
			last = &l
		}
	}
	pending := p.unsatisfied(name, pls)
	prev := ""
	for i := ma.aliveUnits(); i < app.NumUnits.Value; i++ {
		var pl *Placement
		if len(pending) > 0 {
			pl, pending = &pending[0], pending[1:]
		} else {
			pl = last
		}
		info, target, requires := p.placement(name, pl)
		c := p.unitChanges[unitKey(name, i)]
		if c == nil {
			continue
		}
		c.To = target
		c.Requires = append(c.Requires, requires...)
		if prev != "" {
			c.Requires = append(c.Requires, prev)
		}
		prev = c.ID
		p.unitInfo[c] = info
		where := "new machine " + info.baseMachine
		if info.where != "" {
			where = info.where
		}
		if info.directive != "" {
			where += " to satisfy [" + info.directive + "]"
		}
		c.description = []string{fmt.Sprintf("add unit %s to %s", c.Unit, where)}
	}
}

// unsatisfied returns the placements the model does not satisfy yet, for an application the
// model has; all of them for a new one.
func (p *planner) unsatisfied(name string, pls []Placement) []Placement {
	ma := p.modelApp(name)
	if ma == nil {
		return slices.Clone(pls)
	}
	var out []Placement
	for _, pl := range pls {
		switch {
		case pl.Machine == "new", pl.App != "" && pl.Unit < 0:
			out = append(out, pl)
		case pl.Machine != "":
			if mid := p.bundleMachine(pl.Machine); mid == "" || ma.unitOn(mid) == "" {
				out = append(out, pl)
			}
		default:
			machine := p.modelApp(pl.App).unitMachine(fmt.Sprintf("%s/%d", pl.App, pl.Unit))
			if machine == "" || ma.unitOn(topLevel(machine)) == "" {
				out = append(out, pl)
			}
		}
	}
	return out
}

// placement says where a new unit of app goes for one directive (nil: none).
func (p *planner) placement(name string, pl *Placement) (*unitInfo, Target, []string) {
	ab := p.bases[name]
	if pl == nil {
		return &unitInfo{baseMachine: p.seq.nextMachine(), machineBase: ab}, Target{}, nil
	}
	switch {
	case pl.Machine == "new":
		return p.newMachine(name)
	case pl.Machine != "":
		if mid := p.bundleMachine(pl.Machine); mid != "" {
			return p.onExisting(name, pl, mid, "")
		}
		c := p.machineChanges[pl.Machine]
		return &unitInfo{baseMachine: c.MachineID, where: "new machine " + c.MachineID, machineBase: p.machineBases[pl.Machine]},
			Target{Change: c.ID}, []string{c.ID}
	case pl.Unit >= 0:
		unit := fmt.Sprintf("%s/%d", pl.App, pl.Unit)
		if machine := p.modelApp(pl.App).unitMachine(unit); machine != "" {
			return p.onExisting(name, pl, topLevel(machine), pl.Raw)
		}
		other := p.unitChanges[unitKey(pl.App, pl.Unit)]
		if other == nil || p.unitInfo[other] == nil {
			// The unit does not exist and is not added: as Juju, a new machine.
			return p.newMachine(name)
		}
		return p.nextTo(name, pl, other)
	default:
		if machine := p.nextExistingWithout(name, pl.App); machine != "" {
			return p.onExisting(name, pl, machine, pl.Raw)
		}
		if other := p.nextNewWithout(name, pl.App); other != nil {
			return p.nextTo(name, pl, other)
		}
		return &unitInfo{baseMachine: p.seq.nextMachine(), machineBase: ab}, Target{}, nil
	}
}

// newMachine adds a machine for one unit ("new"), with the application's base and
// constraints.
func (p *planner) newMachine(name string) (*unitInfo, Target, []string) {
	machineID := p.seq.nextMachine()
	c := p.cs.add(&Change{Kind: KindAddMachine, MachineID: machineID, Base: p.bases[name],
		Constraints: canonicalConstraints(p.c.Applications[name].Constraints.Value),
		description: []string{"add new machine " + machineID}})
	return &unitInfo{baseMachine: machineID, where: "new machine " + machineID, machineBase: p.bases[name]},
		Target{Change: c.ID}, []string{c.ID}
}

// onExisting places a unit on a machine of the model, which must run the application's base.
func (p *planner) onExisting(name string, pl *Placement, machine, directive string) (*unitInfo, Target, []string) {
	info := &unitInfo{baseMachine: machine, where: "existing machine " + machine, directive: directive}
	if mm, ok := p.m.Machines[machine]; ok {
		info.machineBase, _ = base.Parse(mm.Base)
	}
	if ab := p.bases[name]; !info.machineBase.IsZero() && !ab.IsZero() && !info.machineBase.IsCompatible(ab) {
		p.add(pl.Pos, "applications."+name+".to", "placement %q puts application %q (%s) on machine %s of the model, which is %s: a unit runs on its application's base",
			pl.Raw, name, ab.DisplayString(), machine, info.machineBase.DisplayString())
	}
	return info, Target{Machine: machine}, nil
}

// nextTo places a unit on the machine of another new unit.
func (p *planner) nextTo(name string, pl *Placement, other *Change) (*unitInfo, Target, []string) {
	o := p.unitInfo[other]
	info := &unitInfo{baseMachine: o.baseMachine, where: o.where, directive: pl.Raw, machineBase: o.machineBase}
	if ab := p.bases[name]; !o.machineBase.IsZero() && !ab.IsZero() && !o.machineBase.IsCompatible(ab) {
		p.add(pl.Pos, "applications."+name+".to", "placement %q puts application %q (%s) next to %s, on %s: a unit runs on its application's base",
			pl.Raw, name, ab.DisplayString(), other.Unit, o.machineBase.DisplayString())
	}
	return info, Target{Change: other.ID}, []string{other.ID}
}

// nextExistingWithout returns the next machine of the model with a unit of target and none
// of app.
func (p *planner) nextExistingWithout(app, target string) string {
	key := app + "/" + target
	machines, ok := p.existingWithout[key]
	if !ok {
		seen := map[string]bool{}
		if ta := p.modelApp(target); ta != nil {
			for _, u := range ta.Units {
				m := topLevel(u.Machine)
				if u.Machine == "" || !isAlive(u.Life) || seen[m] || p.modelApp(app).unitOn(m) != "" {
					continue
				}
				seen[m] = true
				machines = append(machines, m)
			}
		}
		slices.SortFunc(machines, naturalCompare)
	}
	if len(machines) == 0 {
		p.existingWithout[key] = machines
		return ""
	}
	p.existingWithout[key] = machines[1:]
	return machines[0]
}

// nextNewWithout returns the next new unit of target not yet shared with app.
func (p *planner) nextNewWithout(app, target string) *Change {
	key := app + "/" + target
	changes, ok := p.newWithout[key]
	if !ok {
		changes = slices.Clone(p.appUnitChanges[target])
	}
	if len(changes) == 0 {
		p.newWithout[key] = changes
		return nil
	}
	p.newWithout[key] = changes[1:]
	return changes[0]
}

// allMachinesUsed refuses a bundle machine added for nothing: the bundle and the mapping of
// its machines onto the model's disagree (Juju's InconsistentMachineMapError).
func (p *planner) allMachinesUsed() error {
	deps := p.cs.dependents()
	for _, id := range sortedKeys(p.machineChanges) {
		c := p.machineChanges[id]
		if deps[c.ID] > 0 {
			continue
		}
		targets := map[string]bool{}
		for mid := range p.m.Machines {
			if !strings.Contains(mid, "/") {
				targets[mid] = true
			}
		}
		for _, mid := range p.machineMap {
			delete(targets, mid)
		}
		var quoted []string
		for _, mid := range slices.SortedFunc(maps.Keys(targets), naturalCompare) {
			quoted = append(quoted, strconv.Quote(mid))
		}
		var apps []string
		for _, name := range sortedKeys(p.c.Applications) {
			for _, pl := range p.c.Placements[name] {
				if pl.Machine == id && !slices.Contains(apps, name) {
					apps = append(apps, name)
				}
			}
		}
		msg := fmt.Sprintf("bundle and machine mapping are inconsistent: need an explicit entry mapping bundle machine %q", id)
		switch len(quoted) {
		case 0:
		case 1:
			msg += ", perhaps to unreferenced model machine " + quoted[0]
		default:
			msg += ", perhaps to one of model machines [" + strings.Join(quoted, ", ") + "]"
		}
		if len(apps) > 0 {
			msg += " - the target should host [" + strings.Join(apps, ", ") + "]"
		}
		return Errors{Errorf(p.c.Machines[id].Pos, "machines."+id, "%s", msg)}
	}
	return nil
}
