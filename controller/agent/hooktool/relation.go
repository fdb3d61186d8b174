package hooktool

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// relationFlag defines -r/--relation.
func (t *invocation) relationFlag() *string {
	return t.fs.StringP("relation", "r", "", `relation id ("db:3" or "3"; default: the hook's relation)`)
}

// relationID resolves a -r value, "<endpoint>:<n>" or "<n>", defaulting to the hook's own
// relation. A bare number is completed from the hook's relation when it is the same one; else
// the Context gets the number alone (ops passes "-r 3").
func (t *invocation) relationID(flag string) (string, error) {
	own, _ := t.c.Relation()
	if flag == "" {
		if own == "" {
			return "", usagef("no relation id specified")
		}
		return own, nil
	}
	endpoint, num, named := strings.Cut(flag, ":")
	if !named {
		endpoint, num = "", flag
	}
	if _, err := strconv.ParseUint(num, 10, 63); err != nil || (named && endpoint == "") {
		return "", usagef("invalid relation id %q", flag)
	}
	if !named && own != "" && own[strings.LastIndex(own, ":")+1:] == num {
		return own, nil
	}
	return flag, nil
}

// relationErr reports an unknown relation given with -r as Juju does: a bad flag value (exit
// 2) whose text holds "relation not found", which ops matches. Other errors pass through.
func relationErr(flag string, err error) error {
	if flag != "" && errors.Is(err, ErrRelationNotFound) {
		return usagef("invalid value %q for flag -r: relation not found", flag)
	}
	return err
}

// checkRelation fails for a relation the unit is not in.
func (t *invocation) checkRelation(flag, id string) error {
	_, err := t.c.RelationRemoteApp(t.ctx, id)
	return relationErr(flag, err)
}

func relationGet(t *invocation) error {
	rel := t.relationFlag()
	app := t.fs.Bool("app", false, "get the settings of the application (of the unit given) rather than the unit's")
	t.formatFlag()
	if err := t.parse(2); err != nil {
		return err
	}
	id, err := t.relationID(*rel)
	if err != nil {
		return err
	}
	own, remote := t.c.Relation()
	target := t.arg(1)
	switch {
	case target != "" && *app:
		// A unit name stands for its application.
		target, _, _ = strings.Cut(target, "/")
	case target == "" && *app:
		// The remote application of the hook's relation.
		if own == "" {
			return usagef("no unit or application specified")
		}
		if target, _, _ = strings.Cut(remote, "/"); target == "" {
			if target, err = t.c.RelationRemoteApp(t.ctx, own); err != nil {
				return err
			}
		}
	case target == "" && id == own:
		// The hook's remote unit, or in a hook of the whole remote application (no remote
		// unit), that application's settings. The default holds only in the hook's relation.
		if target = remote; target == "" {
			if target, err = t.c.RelationRemoteApp(t.ctx, own); err != nil {
				return err
			}
			*app = true
		}
	case target == "":
		return usagef("no unit or application specified")
	}
	m, err := t.c.RelationGet(t.ctx, id, target, *app)
	if err != nil {
		return relationErr(*rel, err)
	}
	return t.settings(m, t.arg(0))
}

func relationSet(t *invocation) error {
	rel := t.relationFlag()
	app := t.fs.Bool("app", false, "set the settings of the unit's application (leader only)")
	file := t.fileFlag()
	t.ignoredFormatFlag()
	if err := t.parse(1 << 20); err != nil {
		return err
	}
	id, err := t.relationID(*rel)
	if err != nil {
		return err
	}
	values, err := t.settingsFrom(*file)
	if err != nil {
		return err
	}
	return relationErr(*rel, t.c.RelationSet(t.ctx, id, *app, values))
}

func relationIDs(t *invocation) error {
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	endpoint := t.arg(0)
	if endpoint == "" {
		own, _ := t.c.Relation()
		if endpoint, _, _ = strings.Cut(own, ":"); endpoint == "" {
			return usagef("no endpoint specified")
		}
	}
	ids, err := t.c.RelationIDs(t.ctx, endpoint)
	if err != nil {
		return err
	}
	return t.write(nonNil(ids))
}

func relationList(t *invocation) error {
	rel := t.relationFlag()
	app := t.fs.Bool("app", false, "print the remote application instead of the remote units")
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	id, err := t.relationID(*rel)
	if err != nil {
		return err
	}
	if *app {
		name, err := t.c.RelationRemoteApp(t.ctx, id)
		if err != nil {
			return relationErr(*rel, err)
		}
		return t.write(name)
	}
	units, err := t.c.RelationUnits(t.ctx, id)
	if err != nil {
		return relationErr(*rel, err)
	}
	return t.write(nonNil(units))
}

// relationModel is what relation-model-get prints.
type relationModel struct {
	UUID string `json:"uuid" yaml:"uuid"`
}

func relationModelGet(t *invocation) error {
	rel := t.relationFlag()
	t.formatFlag()
	if err := t.parse(0); err != nil {
		return err
	}
	id, err := t.relationID(*rel)
	if err != nil {
		return err
	}
	if err := t.checkRelation(*rel, id); err != nil {
		return err
	}
	uuid := t.c.ModelUUID()
	if uuid == "" {
		return fmt.Errorf("the model of relation %s is not known", id)
	}
	return t.write(relationModel{UUID: uuid})
}
