package bundle

import (
	"maps"
	"slices"

	"github.com/jujuclone/juju/core/names"
)

// Compose merges the documents ReadFiles returned: the first is the base bundle, each other
// an overlay applied in order, with Juju's rules:
//   - default-base (or series), name and description: an overlay's value replaces the base's;
//   - applications: an application the base lacks is added; "name: null" removes one; for
//     one both have, every field the overlay sets replaces the base's, except maps (options,
//     annotations, resources, bindings, exposed-endpoints), where the overlay's keys are set
//     one by one, a null value removes a key, and an empty or null map clears the map;
//   - machines: an overlay's machine replaces the base's machine of the same id;
//   - relations: an overlay's are added to the base's.
//
// Unlike Juju, which drops the relations of an application an overlay removes, a relation
// left naming a removed application is an error: removing an application another one relates
// to would otherwise silently cut the other's relation. exposed-endpoints may only appear in
// overlays, as in Juju.
func Compose(docs []*Bundle) (*Bundle, error) {
	var c collector
	if len(docs) == 0 {
		return nil, Errors{{Msg: "bundle is empty"}}
	}
	for _, d := range docs {
		normalizeSeries(d, &c)
	}
	out := docs[0]
	out.removed = map[string]Pos{}
	if out.Applications == nil {
		out.Applications = map[string]*Application{}
	}
	if out.Machines == nil {
		out.Machines = map[string]*Machine{}
	}
	for _, name := range sortedKeys(out.Applications) {
		app := out.Applications[name]
		key := "applications." + name
		if app.Removed {
			c.add(app.Pos, key, "bundle application for key %q is undefined", name)
			delete(out.Applications, name)
			continue
		}
		if app.ExposedEndpoints.Set {
			c.add(app.ExposedEndpoints.Pos, key+".exposed-endpoints", "applications.%s.exposed-endpoints can only appear in an overlay section", name)
		}
	}
	for _, o := range docs[1:] {
		overlay(out, o, &c)
	}
	// A relation left naming an application an overlay removed.
	for _, rel := range out.Relations {
		for _, ep := range rel.Endpoints {
			app, _, _ := splitEndpoint(ep.Value)
			if pos, ok := out.removed[app]; ok {
				c.add(pos, "applications."+app, "cannot remove application %q: relation %q at %s still names it",
					app, rel.String(), rel.Pos)
			}
		}
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// normalizeSeries turns a document's series into bases: "series: jammy" is
// "default-base: ubuntu@22.04", and so for applications and machines.
func normalizeSeries(d *Bundle, c *collector) {
	convert := func(series Field[string], b *Field[string], key, both string) {
		if !series.Set || series.Null {
			return
		}
		if b.Set && !b.Null {
			c.add(series.Pos, key, "%s", both)
			return
		}
		s, err := seriesBase(series.Value)
		if err != nil {
			c.add(series.Pos, key, "%v", err)
			return
		}
		*b = Field[string]{Value: s, Pos: series.Pos, Set: true}
	}
	convert(d.Series, &d.DefaultBase, "series", "cannot specify both series and default-base")
	for _, name := range sortedKeys(d.Applications) {
		a := d.Applications[name]
		convert(a.Series, &a.Base, "applications."+name+".series", "cannot specify both series and base for application "+`"`+name+`"`)
	}
	for _, id := range sortedKeys(d.Machines) {
		m := d.Machines[id]
		convert(m.Series, &m.Base, "machines."+id+".series", "cannot specify both series and base for machine "+`"`+id+`"`)
	}
}

func overlay(out, o *Bundle, c *collector) {
	setScalar(&out.Type, o.Type)
	setScalar(&out.Name, o.Name)
	setScalar(&out.Description, o.Description)
	setScalar(&out.Tags, o.Tags)
	setScalar(&out.DefaultBase, o.DefaultBase)
	for _, name := range sortedKeys(o.Applications) {
		oa := o.Applications[name]
		base, ok := out.Applications[name]
		switch {
		case oa.Removed && !ok:
			c.add(oa.Pos, "applications."+name, "cannot remove application %q: the bundle has no such application", name)
		case oa.Removed:
			delete(out.Applications, name)
			out.removed[name] = oa.Pos
		case !ok:
			out.Applications[name] = oa
			delete(out.removed, name)
		default:
			mergeApplication(base, oa)
		}
	}
	for _, id := range sortedKeys(o.Machines) {
		out.Machines[id] = o.Machines[id]
	}
	out.Relations = append(out.Relations, o.Relations...)
}

func mergeApplication(a, o *Application) {
	setScalar(&a.Charm, o.Charm)
	setScalar(&a.Channel, o.Channel)
	setScalar(&a.Revision, o.Revision)
	setScalar(&a.Base, o.Base)
	setScalar(&a.NumUnits, o.NumUnits)
	setScalar(&a.To, o.To)
	setScalar(&a.Constraints, o.Constraints)
	setScalar(&a.Trust, o.Trust)
	setScalar(&a.Expose, o.Expose)
	mergeMap(&a.Options, o.Options)
	mergeMap(&a.Annotations, o.Annotations)
	mergeMap(&a.Resources, o.Resources)
	mergeMap(&a.Bindings, o.Bindings)
	mergeMap(&a.ExposedEndpoints, o.ExposedEndpoints)
}

// setScalar replaces a value the overlay sets; null resets it to its default.
func setScalar[T any](dst *Field[T], src Field[T]) {
	switch {
	case !src.Set:
	case src.Null:
		*dst = Field[T]{}
	default:
		*dst = src
	}
}

// mergeMap applies an overlay's map: keys one by one, null values removing keys, an empty or
// null map clearing it.
func mergeMap[V any](dst *Field[map[string]Field[V]], src Field[map[string]Field[V]]) {
	if !src.Set {
		return
	}
	if src.Null || len(src.Value) == 0 {
		*dst = Field[map[string]Field[V]]{}
		return
	}
	if !dst.Set || dst.Value == nil {
		*dst = Field[map[string]Field[V]]{Value: map[string]Field[V]{}, Pos: src.Pos, Set: true}
	}
	for k, v := range src.Value {
		if v.Null {
			delete(dst.Value, k)
			continue
		}
		dst.Value[k] = v
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), names.NaturalCompare)
}
