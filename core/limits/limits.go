// Package limits holds the bounds of one call that the command line checks first and the
// controller checks again.
package limits

// MaxUnitsPerCall bounds the units one deploy or add-unit adds. The controller writes an
// application, its units and their new machines in one store transaction, so that a call
// happens whole or not at all; a unit with a new machine is three writes, and the embedded
// etcd takes tens of thousands in one transaction (controller/store). Juju has no such bound:
// add more units with further add-unit calls.
const MaxUnitsPerCall = 10_000

// MaxMachinesPerCall bounds the machines one add-machine adds, in one transaction likewise.
const MaxMachinesPerCall = 10_000
