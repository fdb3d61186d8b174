package bundle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jujuclone/juju/core/base"
)

// Kind is what a change does; the names are Juju's change methods.
type Kind string

const (
	KindUploadCharm    Kind = "addCharm"
	KindUpgradeCharm   Kind = "upgradeCharm"
	KindDeploy         Kind = "deploy"
	KindAddMachine     Kind = "addMachines"
	KindAddRelation    Kind = "addRelation"
	KindAddUnit        Kind = "addUnit"
	KindExpose         Kind = "expose"
	KindSetAnnotations Kind = "setAnnotations"
	KindSetOptions     Kind = "setOptions"
	KindSetConstraints Kind = "setConstraints"
	// KindAttachResource uploads a new revision of a resource of an application whose charm
	// stays (Juju only sends resources with a deploy or an upgrade).
	KindAttachResource Kind = "attachResource"
)

// Target is where a unit goes, or what an annotation is set on: the machine an earlier change
// adds (Change, an addMachines change) or the machine of the unit an earlier change adds
// (Change, an addUnit change), or an existing machine (Machine). Neither: a new machine the
// controller adds with the unit.
type Target struct {
	Change  string
	Machine string
}

// Change is one step of a plan. The fields that matter depend on Kind.
type Change struct {
	// ID is Juju's change id: "<kind>-<index>".
	ID       string
	Kind     Kind
	Requires []string

	// Application is the application the change is about (all but addMachines).
	Application string
	// Charm is the charm to upload (addCharm), or that deploy and upgradeCharm use.
	Charm *Charm
	// CharmChange is the addCharm change whose charm deploy or upgradeCharm use; "" when the
	// model has the charm already: CharmURL.
	CharmChange string
	CharmURL    string
	// Base is the application's (addCharm, deploy, upgradeCharm) or the machine's
	// (addMachines; zero: the model's default).
	Base base.Base
	// Options are option values as the API takes them (deploy, setOptions).
	Options     map[string]string
	Constraints string
	Trust       bool
	// Resources are the files to upload: all the bundle gives (deploy), those whose content
	// changed (upgradeCharm, attachResource).
	Resources []*Resource
	// Exposed are the endpoints to expose, nil for all (expose).
	Exposed map[string]ExposeSpec
	// Annotations to set (setAnnotations) on Application, or on Machine.
	Annotations map[string]string
	Machine     Target
	// MachineID is the machine's predicted id (addMachines), BundleMachine the bundle's
	// machine it is for ("" for a machine a "new" placement adds).
	MachineID     string
	BundleMachine string
	// Unit is the unit's predicted name (addUnit), To where it goes.
	Unit string
	To   Target
	// Endpoints are the relation's resolved endpoints (addRelation).
	Endpoints [2]string

	description []string
}

// Description is the change in Juju's words, one line or more (expose may need several).
func (c *Change) Description() []string { return c.description }

// Plan is what deploying a bundle changes, in the order it must happen.
type Plan struct {
	Changes []*Change
}

// Lines are the plan's descriptions, "- " before each, as deploy prints them.
func (p *Plan) Lines() []string {
	var out []string
	for _, c := range p.Changes {
		for _, d := range c.description {
			out = append(out, "- "+d)
		}
	}
	return out
}

// changeset collects changes in the order they are found; sorted orders them so that each
// comes after what it requires, otherwise keeping that order (Juju's stable topological sort).
type changeset struct {
	changes []*Change
	byID    map[string]*Change
}

func (cs *changeset) add(c *Change) *Change {
	c.ID = fmt.Sprintf("%s-%d", c.Kind, len(cs.changes))
	cs.changes = append(cs.changes, c)
	if cs.byID == nil {
		cs.byID = map[string]*Change{}
	}
	cs.byID[c.ID] = c
	return c
}

// dependents says, for each change, how many others require it.
func (cs *changeset) dependents() map[string]int {
	out := map[string]int{}
	for _, c := range cs.changes {
		for _, r := range c.Requires {
			out[r]++
		}
	}
	return out
}

// sorted makes passes over the changes in the order they were added, taking every change
// whose requirements are all taken already (a change may become ready within the pass that
// took what it requires), until all are taken.
func (cs *changeset) sorted() []*Change {
	waiting := map[string]int{}
	followers := map[string][]string{}
	for _, c := range cs.changes {
		slices.Sort(c.Requires)
		c.Requires = slices.Compact(c.Requires)
		waiting[c.ID] = len(c.Requires)
		for _, r := range c.Requires {
			followers[r] = append(followers[r], c.ID)
		}
	}
	out := make([]*Change, 0, len(cs.changes))
	taken := map[string]bool{}
	for len(out) < len(cs.changes) {
		before := len(out)
		for _, c := range cs.changes {
			if taken[c.ID] || waiting[c.ID] > 0 {
				continue
			}
			taken[c.ID] = true
			out = append(out, c)
			for _, f := range followers[c.ID] {
				waiting[f]--
			}
		}
		if len(out) == before {
			// Cannot happen: requirements always point at earlier changes.
			panic("bundle: changes require each other")
		}
	}
	return out
}

// exposeLines describes an expose change as Juju does: endpoints with the same settings are
// grouped, "" (all endpoints) first.
func exposeLines(app string, eps map[string]ExposeSpec) []string {
	if len(eps) == 0 {
		return []string{fmt.Sprintf("expose all endpoints of %s and allow access from CIDRs 0.0.0.0/0 and ::/0", app)}
	}
	type group struct {
		names []string
		spec  ExposeSpec
	}
	var groups []*group
	same := func(a, b ExposeSpec) bool {
		return sameSet(a.Spaces, b.Spaces) && sameSet(a.CIDRs, b.CIDRs)
	}
	for _, name := range sortedKeys(eps) {
		if name == "" {
			continue
		}
		spec := eps[name]
		found := false
		for _, g := range groups {
			if same(g.spec, spec) {
				g.names = append(g.names, name)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, &group{names: []string{name}, spec: spec})
		}
	}
	if spec, ok := eps[""]; ok {
		groups = append([]*group{{names: []string{""}, spec: spec}}, groups...)
	}
	var out []string
	for _, g := range groups {
		var b strings.Builder
		if g.names[0] == "" {
			b.WriteString("expose all endpoints")
		} else {
			fmt.Fprintf(&b, "override expose settings for endpoint%s %s", plural(len(g.names)), strings.Join(g.names, ","))
		}
		fmt.Fprintf(&b, " of %s and allow access from ", app)
		spaces, cidrs := slices.Sorted(slices.Values(g.spec.Spaces)), slices.Sorted(slices.Values(g.spec.CIDRs))
		switch {
		case len(spaces)+len(cidrs) == 0:
			b.WriteString("CIDRs 0.0.0.0/0 and ::/0")
		default:
			if len(spaces) > 0 {
				fmt.Fprintf(&b, "space%s %s", plural(len(spaces)), strings.Join(spaces, ","))
			}
			if len(spaces) > 0 && len(cidrs) > 0 {
				b.WriteString(" and ")
			}
			if len(cidrs) > 0 {
				fmt.Fprintf(&b, "CIDR%s %s", plural(len(cidrs)), strings.Join(cidrs, ","))
			}
		}
		out = append(out, b.String())
	}
	return out
}

func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(x, y)
}
