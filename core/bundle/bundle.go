// Package bundle reads, checks and plans Juju 3.6 bundles: a YAML file of applications,
// machines, placements, options and relations, with overlays that add, change and remove
// applications. Every value keeps the file and line it came from, so that every error names
// them: "bundle.yaml:12: applications.wordpress.to: machine "3" is not defined in the
// bundle's machines".
//
// The flow is Read (each YAML document of each file, unknown keys refused), Compose (the base
// bundle, then each overlay in order), Check (against the charms: endpoints, options,
// placements, resources) and Plan (the difference from the model as it is, in Juju's order
// and wording). Nothing here talks to a controller: the caller describes the model (Model)
// and runs the changes.
package bundle

import (
	"fmt"
	"path/filepath"
)

// Pos is where a value was written: the file as the user named it, and its line.
type Pos struct {
	File string
	Line int
	// Dir is the directory the file's relative paths (charms, resources) are resolved
	// against: the file's own.
	Dir string
	// doc orders documents across files (base first, then each overlay), so that errors are
	// reported in the order the user wrote them.
	doc int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Resolve makes a path written at p absolute: relative paths are the file's directory's.
func (p Pos) Resolve(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(p.Dir, path)
}

// Field is one value of a bundle with where it was written; Set says whether it was written
// at all (an overlay changes only what it sets), Null whether it was written as null (in an
// overlay's map, null removes the key).
type Field[T any] struct {
	Value T
	Pos   Pos
	Set   bool
	Null  bool
}

// Bundle is one YAML document of a bundle file, or the composition of a bundle and its
// overlays (Compose).
type Bundle struct {
	// Pos is where the document starts.
	Pos Pos

	// Type is the "bundle" key: "" (machines) or "kubernetes", which is refused.
	Type        Field[string]
	Name        Field[string]
	Description Field[string]
	Tags        Field[[]string]
	// DefaultBase is "default-base", or "series" converted to a base.
	DefaultBase Field[string]
	Series      Field[string]

	// ApplicationsPos is where "applications" (or its alias "services") is.
	ApplicationsPos Pos
	// Applications by name. In an overlay an application written as null is kept with
	// Removed set: composing removes it from the bundle.
	Applications map[string]*Application
	Machines     map[string]*Machine
	Relations    []*Relation

	// removed records, once composed, the applications an overlay removed, and where: a
	// relation that still names one is an error pointing at both.
	removed map[string]Pos
}

// Application is one entry of "applications".
type Application struct {
	Name string
	// Pos is where its name is written.
	Pos Pos
	// Removed is an overlay's "name: null".
	Removed bool

	Charm       Field[string]
	Channel     Field[string]
	Revision    Field[int]
	Base        Field[string]
	Series      Field[string]
	NumUnits    Field[int]
	To          Field[[]Field[string]]
	Constraints Field[string]
	Options     Field[map[string]Field[any]]
	Annotations Field[map[string]Field[string]]
	Resources   Field[map[string]Field[string]]
	Bindings    Field[map[string]Field[string]]
	Trust       Field[bool]
	Expose      Field[bool]
	// ExposedEndpoints is "exposed-endpoints" (overlays only, as in Juju): endpoint ("" for
	// all) to the spaces and CIDRs it is reachable from.
	ExposedEndpoints Field[map[string]Field[ExposeSpec]]
}

// ExposeSpec is where one endpoint of an exposed application may be reached from.
type ExposeSpec struct {
	Spaces []string
	CIDRs  []string
}

// Machine is one entry of "machines": a machine the bundle's placements name, created for
// the bundle or mapped onto one the model has.
type Machine struct {
	ID          string
	Pos         Pos
	Base        Field[string]
	Series      Field[string]
	Constraints Field[string]
	Annotations Field[map[string]Field[string]]
}

// Relation is one entry of "relations": two endpoints, each "application[:endpoint]".
type Relation struct {
	Pos       Pos
	Endpoints [2]Field[string]
}

func (r *Relation) String() string {
	return fmt.Sprintf("%s %s", r.Endpoints[0].Value, r.Endpoints[1].Value)
}
