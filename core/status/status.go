// Package status defines the status values shown to users and how an
// application's status is derived from its units.
package status

// Status is a status value of an agent, workload, machine, instance,
// relation or model.
type Status string

// Unit agent statuses.
const (
	Allocating Status = "allocating"
	Idle       Status = "idle"
	Executing  Status = "executing"
	Rebooting  Status = "rebooting"
	Failed     Status = "failed"
	Lost       Status = "lost"
	Error      Status = "error"
)

// Workload statuses. The charm sets maintenance, waiting, blocked and
// active; Juju sets unknown, error and terminated.
const (
	Maintenance Status = "maintenance"
	Waiting     Status = "waiting"
	Blocked     Status = "blocked"
	Active      Status = "active"
	Unknown     Status = "unknown"
	Terminated  Status = "terminated"
)

// Machine agent statuses.
const (
	Pending Status = "pending"
	Started Status = "started"
	Down    Status = "down"
	Stopped Status = "stopped"
)

// Instance statuses (besides pending, allocating, error and unknown).
const (
	Running           Status = "running"
	ProvisioningError Status = "provisioning error"
)

// Modification statuses (besides idle, error and unknown).
const (
	Applied Status = "applied"
)

// Relation statuses (besides error and suspended).
const (
	Joining    Status = "joining"
	Joined     Status = "joined"
	Broken     Status = "broken"
	Suspending Status = "suspending"
)

// Model statuses (besides error).
const (
	Available  Status = "available"
	Busy       Status = "busy"
	Destroying Status = "destroying"
	Suspended  Status = "suspended"
)

// String returns the status as text.
func (s Status) String() string {
	return string(s)
}

// IsCharmWorkload reports whether a charm may set s as its workload
// status (status-set).
func IsCharmWorkload(s Status) bool {
	switch s {
	case Maintenance, Waiting, Blocked, Active:
		return true
	}
	return false
}

// Severity ranks workload statuses for DeriveApplication: error > blocked >
// maintenance > waiting > active > terminated > unknown. Anything else
// ranks 0, below unknown, so it never wins.
func Severity(s Status) int {
	switch s {
	case Error:
		return 7
	case Blocked:
		return 6
	case Maintenance:
		return 5
	case Waiting:
		return 4
	case Active:
		return 3
	case Terminated:
		return 2
	case Unknown:
		return 1
	}
	return 0
}

// DeriveApplication returns the status of an application that set none:
// the most severe of its units' workload statuses, unknown without units.
func DeriveApplication(unitWorkloads []Status) Status {
	result := Unknown
	for _, s := range unitWorkloads {
		if Severity(s) > Severity(result) {
			result = s
		}
	}
	return result
}
