package hooktool

import "errors"

// Errors a Context returns, by wrapping them (fmt.Errorf("...: %w", ErrRelationNotFound)) or
// returning them as they are. The tools print them as Juju does, and ops matches that text.
var (
	// ErrRelationNotFound: the unit is not in a relation of that id (or no longer). Juju
	// reports it as a bad -r value ("invalid value "9" for flag -r: relation not found", exit
	// 2) and ops turns any error containing "relation not found" into RelationNotFoundError.
	ErrRelationNotFound = errors.New("relation not found")
	// ErrNotLeader: the call needs the unit to lead its application (status-get and status-set
	// --application, relation-set --app, leader-set).
	ErrNotLeader = errors.New("this unit is not the leader")
	// ErrNotAction: an action tool (action-get, action-set, action-log, action-fail) ran in a
	// hook rather than an action; Juju's words.
	ErrNotAction = errors.New("not running an action")
)
