// Package placement parses --to placement directives.
package placement

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jujuclone/juju/core/names"
)

// MachineScope marks a directive naming an existing machine or container.
const MachineScope = "#"

// ContainerTypes are the container scopes a directive may name.
var ContainerTypes = []string{"lxd", "kvm"}

// providerRe matches what we pass on to the provider: key=value pairs
// such as zone=us-east-1a, or a bare host name such as node1.maas.
var providerRe = regexp.MustCompile(`^[A-Za-z][^\s,:]*$`)

// Directive is one element of a --to list.
type Directive struct {
	// Scope is "#" for an existing machine, a container type ("lxd",
	// "kvm") for a new container, or "" for a provider directive.
	Scope string
	// Machine is the existing machine id, or "" for a new machine.
	Machine string
	// Raw is the element as the user wrote it.
	Raw string
}

// Parse parses a comma-separated --to value. Any bad element fails the
// whole value, reporting it entire, as Juju does.
func Parse(spec string) ([]Directive, error) {
	var out []Directive
	for raw := range strings.SplitSeq(spec, ",") {
		d, ok := parseOne(raw)
		if !ok {
			return nil, fmt.Errorf("invalid --to parameter %q", spec)
		}
		out = append(out, d)
	}
	return out, nil
}

func parseOne(raw string) (Directive, bool) {
	d := Directive{Raw: raw}
	switch {
	case raw == "":
		return d, false
	case names.IsValidMachine(raw):
		d.Scope, d.Machine = MachineScope, raw
		return d, true
	case slices.Contains(ContainerTypes, raw):
		d.Scope = raw
		return d, true
	}
	if scope, machine, ok := strings.Cut(raw, ":"); ok {
		if (scope == MachineScope || slices.Contains(ContainerTypes, scope)) && names.IsValidMachine(machine) {
			d.Scope, d.Machine = scope, machine
			return d, true
		}
		return d, false
	}
	// providerRe wants a leading letter: anything starting with a digit
	// was meant as a machine id and is refused.
	return d, providerRe.MatchString(raw)
}

// IsExisting reports whether d names an existing machine or container.
func (d Directive) IsExisting() bool { return d.Scope == MachineScope }

// IsContainer reports whether d asks for a new container, on machine
// d.Machine or on a new machine when that is empty.
func (d Directive) IsContainer() bool { return slices.Contains(ContainerTypes, d.Scope) }

// IsProvider reports whether d is passed on to the provider.
func (d Directive) IsProvider() bool { return d.Scope == "" }

// String prints the directive in the form Parse accepts.
func (d Directive) String() string {
	switch {
	case d.IsExisting():
		return d.Machine
	case d.IsContainer() && d.Machine != "":
		return d.Scope + ":" + d.Machine
	case d.IsContainer():
		return d.Scope
	}
	return d.Raw
}
