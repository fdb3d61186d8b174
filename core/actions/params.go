package actions

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	// YAML 1.1, as Juju parses run's arguments: "y", "yes" and "on" are booleans (what
	// --string-args exists for), which YAML 1.2 parsers read as strings.
	yaml "go.yaml.in/yaml/v2"
)

// NameRule is what an action's name, and each key of a key.key=value argument, must match:
// lowercase letters, digits and inner hyphens (Juju's rule).
var NameRule = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`)

// Arg is one "key.key...=value" argument of juju run: the path of keys and the raw value.
type Arg struct {
	Keys  []string
	Value string
}

// ParseArg splits a key.key...=value argument, checking each key against NameRule.
func ParseArg(s string) (Arg, error) {
	path, value, ok := strings.Cut(s, "=")
	if !ok {
		return Arg{}, fmt.Errorf("argument %q must be of the form key.key.key...=value", s)
	}
	keys := strings.Split(path, ".")
	for _, k := range keys {
		if !NameRule.MatchString(k) {
			return Arg{}, fmt.Errorf("key %q must start and end with lowercase alphanumeric, "+
				"and contain only lowercase alphanumeric and hyphens", k)
		}
	}
	return Arg{Keys: keys, Value: value}, nil
}

// BuildParams returns an action's params: the YAML map of paramsFile (nil for none), then each
// argument set over it, nested along its keys (a.b=c gives {a: {b: c}}, merged with what a
// already holds). Argument values are parsed as YAML unless raw (--string-args).
func BuildParams(paramsFile []byte, args []Arg, raw bool) (map[string]any, error) {
	params := map[string]any{}
	if paramsFile != nil {
		var doc any
		if err := yaml.Unmarshal(paramsFile, &doc); err != nil {
			return nil, err
		}
		conformed, err := Conform(doc)
		if err != nil {
			return nil, err
		}
		switch m := conformed.(type) {
		case map[string]any:
			params = m
		case nil: // an empty file: no params
		default:
			return nil, errors.New("params must contain a YAML map with string keys")
		}
	}
	for _, a := range args {
		var value any = a.Value
		if !raw {
			if err := yaml.Unmarshal([]byte(a.Value), &value); err != nil {
				return nil, err
			}
		}
		setPath(params, a.Keys, value)
	}
	conformed, err := Conform(params)
	if err != nil {
		return nil, err
	}
	return conformed.(map[string]any), nil
}

// setPath sets target[keys...] to value, making (or replacing non-map values with) the maps on
// the way.
func setPath(target map[string]any, keys []string, value any) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := target[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			target[k] = next
		}
		target = next
	}
	target[keys[len(keys)-1]] = value
}

// Conform turns the maps YAML decodes (keyed by any) into maps keyed by strings, all the way
// down, so the params encode as JSON; a key that is not a string is an error.
func Conform(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := Conform(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, errors.New("map keyed with non-string value")
			}
			c, err := Conform(e)
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := Conform(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}
