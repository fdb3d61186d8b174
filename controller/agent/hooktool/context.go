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
	// ModelUUID answers relation-model-get (every relation is within the unit's model).
	ModelUUID() string
	// PrivateAddress and PublicAddress answer unit-get; PrivateAddress is also the address of
	// every binding in network-get.
	PrivateAddress() string
	PublicAddress() string

	// Relation is the hook's own relation ("db:3") and remote unit, "" outside relation hooks.
	Relation() (relationID, remoteUnit string)
	// RelationIDs lists "<endpoint>:<id>" for the relations of an endpoint.
	RelationIDs(ctx context.Context, endpoint string) ([]string, error)
	// RelationUnits lists the remote units the hook knows in a relation (joined, not departed).
	RelationUnits(ctx context.Context, relationID string) ([]string, error)
	// RelationRemoteApp names the application at the other end of a relation (relation-list
	// --app); for a peer relation, the unit's own.
	RelationRemoteApp(ctx context.Context, relationID string) (string, error)
	// RelationGet reads a unit's settings in a relation (the unit itself when unit is ""). With
	// app, it reads the settings of the application of unit (unit may be an application name or
	// a unit name; "" means the unit's own application, which only the leader may read).
	RelationGet(ctx context.Context, relationID, unit string, app bool) (map[string]string, error)
	// RelationSet merges into the unit's own settings (with app: its application's, leader
	// only); an empty value deletes the key. It fails in -departed and -broken hooks (L-R3).
	RelationSet(ctx context.Context, relationID string, app bool, values map[string]string) error
	// Endpoints lists the charm's endpoints (juju-info included) and extra bindings, the names
	// network-get accepts.
	Endpoints() []string

	// StatusSet sets the workload status (application: the application's, leader only).
	StatusSet(ctx context.Context, application bool, status, message string) error
	// StatusGet returns the unit's workload status.
	StatusGet(ctx context.Context) (Status, error)
	// ApplicationStatus returns the application's status and its units' (leader only).
	ApplicationStatus(ctx context.Context) (app Status, units map[string]Status, err error)
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

	// GoalState answers goal-state.
	GoalState(ctx context.Context) (*GoalState, error)

	// CloudSpec answers credential-get: the cloud of the unit's model, asked of the controller
	// at each call, which refuses it unless the application is trusted (juju trust).
	CloudSpec(ctx context.Context) (*CloudSpec, error)

	// ResourceGet answers resource-get: the path of the unit's copy of a resource of its
	// application, downloaded from the controller when it is not the current revision.
	ResourceGet(ctx context.Context, name string) (string, error)

	// CharmState reads the state the charm keeps in the controller (state-get); SetCharmState
	// merges into it, an empty value deleting the key (state-set, state-delete).
	CharmState(ctx context.Context) (map[string]string, error)
	SetCharmState(ctx context.Context, values map[string]string) error

	// The running action's (or juju exec command's) params and results. Outside an action
	// each returns ErrNotAction. ActionParams answers action-get. SetActionResult sets one
	// value at a key path (action-set's "a.b=c" is ["a", "b"], "c"), making maps on the way.
	// FailAction marks the action failed with a message (action-fail). LogAction appends a
	// progress message to the action's log (action-log).
	ActionParams() (map[string]any, error)
	SetActionResult(keys []string, value string) error
	FailAction(message string) error
	LogAction(ctx context.Context, message string) error
}

// Status is one status with its message, as status-get prints it.
type Status struct {
	Status  string
	Message string
	Data    map[string]any
}

// GoalState is what goal-state prints: the unit's application's units, and per endpoint the
// applications and units related through it.
type GoalState struct {
	Units     map[string]GoalStatus            `json:"units" yaml:"units"`
	Relations map[string]map[string]GoalStatus `json:"relations" yaml:"relations"`
}

// GoalStatus is one entity's goal status ("active", "waiting", "dying", "joined" ...) and when
// it was last set (RFC 3339, UTC).
type GoalStatus struct {
	Status string `json:"status" yaml:"status"`
	Since  string `json:"since,omitempty" yaml:"since,omitempty"`
}
