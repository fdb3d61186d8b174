// Package selector reads the selectors of "juju status": application, unit and machine names
// with "*" wildcards, and status values. The CLI checks them before it dials; the controller
// matches them.
package selector

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// Selector is one selector: a name pattern, a status value, or both ("active" is also a valid
// application name).
type Selector struct {
	// Pattern is the selector as given.
	Pattern string
	// Name is set when Pattern can name applications, units or machines.
	Name bool
	// Status is set when Pattern is a status value.
	Status bool
}

// statuses are the values a status selector may take: those of unit agents, workloads,
// machine agents and instances (core/status).
var statuses = map[string]bool{}

func init() {
	for _, s := range []status.Status{
		status.Allocating, status.Idle, status.Executing, status.Rebooting, status.Failed, status.Lost, status.Error,
		status.Maintenance, status.Waiting, status.Blocked, status.Active, status.Unknown, status.Terminated,
		status.Pending, status.Started, status.Down, status.Stopped, status.Running, status.ProvisioningError,
	} {
		statuses[string(s)] = true
	}
}

// Wildcard patterns: the parts of names, with "*" for any run of characters.
var (
	appPatternRe    = regexp.MustCompile(`^[a-z0-9*-]+$`)
	numberPatternRe = regexp.MustCompile(`^[0-9*]+$`)
	ctypePatternRe  = regexp.MustCompile(`^[a-z*]+$`)
)

// Parse reads one selector. Without "*", a name must be a valid application, unit or machine
// name; with it, each part may only hold the characters of such a part.
func Parse(s string) (Selector, error) {
	sel := Selector{Pattern: s, Status: statuses[s]}
	sel.Name = validName(s)
	if !sel.Name && !sel.Status {
		return sel, fmt.Errorf("invalid selector %q: expected an application, unit or machine name (\"*\" wildcards allowed) or a status value", s)
	}
	return sel, nil
}

// ParseAll reads selectors, failing on the first invalid one.
func ParseAll(patterns []string) ([]Selector, error) {
	sels := make([]Selector, 0, len(patterns))
	for _, p := range patterns {
		sel, err := Parse(p)
		if err != nil {
			return nil, err
		}
		sels = append(sels, sel)
	}
	return sels, nil
}

func validName(s string) bool {
	if !strings.Contains(s, "*") {
		return names.IsValidApplication(s) || names.IsValidUnit(s) || names.IsValidMachine(s)
	}
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 1:
		return appPatternRe.MatchString(s)
	case len(parts) == 2:
		// A unit: <application>/<number>.
		return appPatternRe.MatchString(parts[0]) && numberPatternRe.MatchString(parts[1])
	case len(parts)%2 == 1:
		// A container: <machine>/<type>/<number>..., each part a pattern of its kind.
		for i, p := range parts {
			re := numberPatternRe
			if i%2 == 1 {
				re = ctypePatternRe
			}
			if !re.MatchString(p) {
				return false
			}
		}
		return true
	}
	return false
}

// MatchName reports whether the selector names name. "*" matches any run of characters but "/",
// as in path.Match: "mysql*" names mysql and mysql-router, "mysql/*" their units.
func (s Selector) MatchName(name string) bool {
	if !s.Name {
		return false
	}
	if !strings.Contains(s.Pattern, "*") {
		return s.Pattern == name
	}
	ok, _ := path.Match(s.Pattern, name)
	return ok
}

// MatchMachine reports whether the selector names machine id or, for a selector of machines
// (no "/"), the host of container id: "0" selects 0/lxd/1.
func (s Selector) MatchMachine(id string) bool {
	if s.MatchName(id) {
		return true
	}
	if strings.Contains(s.Pattern, "/") {
		return false
	}
	host, _, found := strings.Cut(id, "/")
	return found && s.MatchName(host)
}

// MatchStatus reports whether the selector is the status value st.
func (s Selector) MatchStatus(st string) bool {
	return s.Status && st != "" && s.Pattern == st
}
