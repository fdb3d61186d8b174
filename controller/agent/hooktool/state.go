package hooktool

import "fmt"

// state-get, state-set and state-delete keep the charm's state in the controller: ops stores
// its StoredState there (ops/storage.py's _JujuStorageBackend), one YAML document a key.

func stateGet(t *invocation) error {
	strict := t.fs.Bool("strict", false, "fail if the key is not set")
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	state, err := t.c.CharmState(t.ctx)
	if err != nil {
		return err
	}
	key := t.arg(0)
	if key == "" || key == "-" {
		if state == nil {
			state = map[string]string{}
		}
		return t.write(state)
	}
	value, ok := state[key]
	if !ok && *strict {
		return fmt.Errorf("%q not found", key)
	}
	// A missing key prints nothing (smart) or "" as Juju does; ops reads '' as missing.
	return t.write(value)
}

func stateSet(t *invocation) error {
	file := t.fileFlag()
	if err := t.parse(1 << 20); err != nil {
		return err
	}
	values, err := t.settingsFrom(*file)
	if err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	return t.c.SetCharmState(t.ctx, values)
}

func stateDelete(t *invocation) error {
	if err := t.parse(1); err != nil {
		return err
	}
	key := t.arg(0)
	if key == "" {
		return usagef("no key specified")
	}
	return t.c.SetCharmState(t.ctx, map[string]string{key: ""})
}
