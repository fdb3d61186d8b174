// Package hooktool serves the hook tools (relation-get, status-set, juju-log ...) that charm hooks
// call. jujuc (or jujud) is linked under each tool's name on the hook's PATH; run under such a name it
// sends its arguments over the unit agent's local socket, and the agent answers from the
// running hook's Context.
package hooktool

import "context"

// Context is what one running hook may see and do. The unit agent implements it; the server
// looks it up by the id in the hook's environment (JUJU_CONTEXT_ID), so only the running hook
// can use it.
type Context interface {
	UnitName() string
	HookName() string
	// PrivateAddress and PublicAddress answer unit-get.
	PrivateAddress() string
	PublicAddress() string

	// Relation is the hook's own relation ("db:3") and remote unit, "" outside relation hooks.
	Relation() (relationID, remoteUnit string)
	// RelationIDs lists "<endpoint>:<id>" for the relations of an endpoint.
	RelationIDs(ctx context.Context, endpoint string) ([]string, error)
	// RelationUnits lists the remote units the hook knows in a relation (joined, not departed).
	RelationUnits(ctx context.Context, relationID string) ([]string, error)
	// RelationGet reads a unit's settings in a relation (the unit itself when unit is "").
	RelationGet(ctx context.Context, relationID, unit string) (map[string]string, error)
	// RelationSet merges into the unit's own settings; an empty value deletes the key. It fails
	// in -departed and -broken hooks (L-R3).
	RelationSet(ctx context.Context, relationID string, values map[string]string) error

	// StatusSet sets the workload status (application: the application's, leader only).
	StatusSet(ctx context.Context, application bool, status, message string) error
	// StatusGet returns the workload status and its message.
	StatusGet(ctx context.Context, application bool) (status, message string, err error)
	ApplicationVersionSet(ctx context.Context, version string) error
	// Log writes to the unit's log (juju-log); level is DEBUG, INFO, WARNING, ERROR or TRACE.
	Log(ctx context.Context, level, message string) error

	// Config returns the application's config with the charm's defaults, typed as in YAML.
	Config(ctx context.Context) (map[string]any, error)

	// OpenPort and ClosePort take "80", "80/tcp", "8000-8005/udp" or "icmp".
	OpenPort(ctx context.Context, port string) error
	ClosePort(ctx context.Context, port string) error
	OpenedPorts(ctx context.Context) ([]string, error)

	IsLeader(ctx context.Context) (bool, error)
	LeaderGet(ctx context.Context) (map[string]string, error)
	// LeaderSet fails unless the unit leads.
	LeaderSet(ctx context.Context, values map[string]string) error
}
