// Package names validates and orders the names users give to models,
// applications, units, machines and endpoints.
package names

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

const (
	appSnippet     = `[a-z][a-z0-9]*(?:-[a-z0-9]*[a-z][a-z0-9]*)*`
	numberSnippet  = `(?:0|[1-9][0-9]*)`
	ctypeSnippet   = `[a-z]+`
	maxModelLength = 63
)

// MaxApplicationLength bounds the name of a new application. Juju's names have no bound, but
// every name must become a directory: a unit's is unit-<application>-<number>, and a file name
// may have 255 bytes. With a unit number of up to 19 digits (an int64), 230 would just fit;
// 200 leaves room for a prefix or suffix a directory may take on its way (a temporary name).
const MaxApplicationLength = 200

var (
	applicationRe = regexp.MustCompile(`^` + appSnippet + `$`)
	unitRe        = regexp.MustCompile(`^(` + appSnippet + `)/(` + numberSnippet + `)$`)
	machineRe     = regexp.MustCompile(`^` + numberSnippet + `(?:/` + ctypeSnippet + `/` + numberSnippet + `)*$`)
	endpointRe    = regexp.MustCompile(`^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$`)
	modelRe       = regexp.MustCompile(`^[a-z0-9]+[a-z0-9-]*$`)
	controllerRe  = regexp.MustCompile(`^[a-z0-9]+[a-z0-9-]*$`)
)

// IsValidApplication reports whether name has the form of an application name (Juju's
// syntax). It does not bound the length, so that an application named before the bound
// existed can still be named, and removed.
func IsValidApplication(name string) bool {
	return applicationRe.MatchString(name)
}

// ValidateApplicationName explains why name is not a valid application
// name, with the more specific messages users get from Juju, and refuses a
// name longer than MaxApplicationLength.
func ValidateApplicationName(name string) error {
	if IsValidApplication(name) {
		if len(name) > MaxApplicationLength {
			return fmt.Errorf("invalid application name %s: %d characters, at most %d", quoteName(name), len(name), MaxApplicationLength)
		}
		return nil
	}
	if strings.ToLower(name) != name {
		return fmt.Errorf("invalid application name %s, unexpected uppercase character", quoteName(name))
	}
	if i := strings.LastIndex(name, "-"); i >= 0 && isDigits(name[i+1:]) {
		return fmt.Errorf("invalid application name %s, unexpected number(s) found after last hyphen", quoteName(name))
	}
	return fmt.Errorf("invalid application name %s", quoteName(name))
}

// quoteName quotes a name for an error message, cut short when long: an error is one line.
func quoteName(name string) string {
	const keep = 40
	if len(name) <= keep+10 {
		return strconv.Quote(name)
	}
	return strconv.Quote(name[:keep]) + "..."
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// IsValidUnit reports whether name has the form <application>/<number>.
func IsValidUnit(name string) bool {
	return unitRe.MatchString(name)
}

// UnitApplication returns the application part of a unit name.
func UnitApplication(unit string) (string, error) {
	m := unitRe.FindStringSubmatch(unit)
	if m == nil {
		return "", fmt.Errorf("invalid unit name %q", unit)
	}
	return m[1], nil
}

// UnitNumber returns the number part of a unit name.
func UnitNumber(unit string) (int, error) {
	m := unitRe.FindStringSubmatch(unit)
	if m == nil {
		return 0, fmt.Errorf("invalid unit name %q", unit)
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		// Only reachable for numbers that overflow int.
		return 0, fmt.Errorf("invalid unit name %q", unit)
	}
	return n, nil
}

// IsValidMachine reports whether id is a machine or container id such as
// "0" or "0/lxd/1".
func IsValidMachine(id string) bool {
	return machineRe.MatchString(id)
}

// IsValidEndpoint reports whether name is a valid relation endpoint name.
func IsValidEndpoint(name string) bool {
	return endpointRe.MatchString(name)
}

// IsValidModel reports whether name is a valid model name.
func IsValidModel(name string) bool {
	return len(name) <= maxModelLength && modelRe.MatchString(name)
}

// IsValidController reports whether name is a valid controller name: as in Juju, lowercase
// letters, digits and non-leading hyphens.
func IsValidController(name string) bool {
	return controllerRe.MatchString(name)
}

// NaturalCompare is NaturalLess as a three-way comparison, for slices.SortFunc.
func NaturalCompare(a, b string) int {
	switch {
	case NaturalLess(a, b):
		return -1
	case NaturalLess(b, a):
		return 1
	}
	return 0
}

// NaturalLess orders strings so that embedded numbers compare by value:
// "pg/2" < "pg/10" and "0/lxd/1" < "1".
func NaturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digitsEnd(a, i), digitsEnd(b, j)
			if c := compareNumbers(a[i:ei], b[j:ej]); c != 0 {
				return c < 0
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	if (len(a) - i) != (len(b) - j) {
		return len(a)-i < len(b)-j
	}
	// Naturally equal (e.g. "01" and "1"): fall back to a total order.
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// compareNumbers compares digit strings of any length by value.
func compareNumbers(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
