package hooktool

import (
	"regexp"
	"slices"
	"strings"
)

// The action tools: what an action (or a juju exec command) reads of its params and reports
// back. Their flags and messages are Juju 3.6's; ops 2.20 runs `action-get --format=json`,
// `action-set k=v ...` (nested keys flattened to "a.b"), `action-log <message>` and
// `action-fail <message>` (an empty message when the charm gave none).

// actionKeyRule is what each dot-separated part of an action-set key must match: Juju's rule
// for action names.
var actionKeyRule = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`)

// reservedResultKeys are set by the agent from the action's output; a charm may not set them.
var reservedResultKeys = []string{"stdout", "stdout-encoding", "stderr", "stderr-encoding"}

// defaultFailMessage is action-fail's message when it is given none.
const defaultFailMessage = "action failed without reason given, check action for errors"

func actionGet(t *invocation) error {
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	params, err := t.c.ActionParams()
	if err != nil {
		return err
	}
	if t.fs.NArg() == 0 {
		if params == nil {
			params = map[string]any{}
		}
		return t.write(params)
	}
	// A missing key prints nothing (smart, yaml) or null (json), as in Juju.
	return t.write(lookupKeys(params, strings.Split(t.arg(0), ".")))
}

// lookupKeys walks nested maps along keys; nil when a key is missing or the path goes through
// something that is not a map.
func lookupKeys(m map[string]any, keys []string) any {
	v, ok := m[keys[0]]
	if !ok || len(keys) == 1 {
		return v
	}
	next, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return lookupKeys(next, keys[1:])
}

func actionSet(t *invocation) error {
	if err := t.parse(1 << 20); err != nil {
		return err
	}
	// Every argument is checked before any is set: a bad one sets nothing.
	type pair struct {
		keys  []string
		value string
	}
	pairs := make([]pair, 0, t.fs.NArg())
	for _, arg := range t.fs.Args() {
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			return usagef("argument %q must be of the form key...=value", arg)
		}
		keys := strings.Split(key, ".")
		for _, k := range keys {
			if !actionKeyRule.MatchString(k) {
				return usagef("key %q must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods", k)
			}
			if slices.Contains(reservedResultKeys, k) {
				return usagef("cannot set reserved action key %q", k)
			}
		}
		pairs = append(pairs, pair{keys, value})
	}
	for _, p := range pairs {
		if err := t.c.SetActionResult(p.keys, p.value); err != nil {
			return err
		}
	}
	return nil
}

func actionLog(t *invocation) error {
	if err := t.parse(1 << 20); err != nil {
		return err
	}
	if t.fs.NArg() == 0 {
		return usagef("no message specified")
	}
	return t.c.LogAction(t.ctx, strings.Join(t.fs.Args(), " "))
}

func actionFail(t *invocation) error {
	if err := t.parse(1); err != nil {
		return err
	}
	message := defaultFailMessage
	if t.fs.NArg() == 1 {
		message = t.arg(0) // even "": ops passes an empty message when the charm gave none
	}
	return t.c.FailAction(message)
}
