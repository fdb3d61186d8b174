package output

import "github.com/jujuclone/juju/core/names"

// NaturalLess orders strings with embedded numbers by value: "pg/2" < "pg/10", "0/lxd/9" < "0/lxd/10".
// It is core/names' order, so tables sort as the controller does.
func NaturalLess(a, b string) bool { return names.NaturalLess(a, b) }
