package charm

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Action is one action a charm declares in actions.yaml (or under actions: in charmcraft.yaml).
type Action struct {
	Name        string
	Description string
	// Params is the JSON schema of the action's parameters, as Juju builds it: an object with
	// title, description, type "object", properties (the declared params), required and
	// additionalProperties when given. It holds only JSON values (maps with string keys).
	Params         map[string]any
	Parallel       bool
	ExecutionGroup string
}

// Actions is a charm's actions.yaml.
type Actions struct {
	Actions map[string]Action
	// Raw is actions.yaml as read (or generated from charmcraft.yaml), for storing.
	Raw []byte
}

// actionNameRe is Juju's rule, loosened to allow digits: real charms use names like "backup2".
var actionNameRe = regexp.MustCompile(`^[a-z](?:[a-z0-9-]*[a-z0-9])?$`)

// ParseActions parses actions.yaml: {name: {description, params, required,
// additionalProperties, parallel, execution-group}}. Empty input means no actions.
func ParseActions(data []byte) (*Actions, error) {
	out := &Actions{Actions: map[string]Action{}, Raw: data}
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("invalid actions.yaml: %v", err)
	}
	for _, name := range sortedNames(raw) {
		node := raw[name]
		if !actionNameRe.MatchString(name) {
			return nil, fmt.Errorf("invalid actions.yaml: bad action name %q", name)
		}
		if strings.HasPrefix(name, "juju-") {
			return nil, fmt.Errorf("invalid actions.yaml: action %q uses the reserved prefix juju-", name)
		}
		var spec map[string]any
		if node.ShortTag() != "!!null" {
			if err := node.Decode(&spec); err != nil {
				return nil, fmt.Errorf("invalid actions.yaml: action %q: %v", name, yamlErr(err))
			}
		}
		a := Action{Name: name}
		schema := map[string]any{"title": name, "type": "object", "properties": map[string]any{}}
		for k, v := range spec {
			v, err := jsonValue(v)
			if err != nil {
				return nil, fmt.Errorf("invalid actions.yaml: action %q key %q: %v", name, k, err)
			}
			switch k {
			case "description":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("invalid actions.yaml: action %q: description is not a string", name)
				}
				a.Description = s
				schema["description"] = s
			case "params":
				if v == nil {
					continue
				}
				p, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("invalid actions.yaml: action %q: params is not a map", name)
				}
				schema["properties"] = p
			case "parallel":
				b, ok := v.(bool)
				if !ok {
					return nil, fmt.Errorf("invalid actions.yaml: action %q: parallel is not a boolean", name)
				}
				a.Parallel = b
			case "execution-group":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("invalid actions.yaml: action %q: execution-group is not a string", name)
				}
				a.ExecutionGroup = s
			default:
				// required, additionalProperties and other JSON-schema keys belong to the schema.
				schema[k] = v
			}
		}
		a.Params = schema
		out.Actions[name] = a
	}
	return out, nil
}

// jsonValue converts a decoded YAML value to JSON-compatible values, refusing maps with
// non-string keys, which have no JSON form.
func jsonValue(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		for i, e := range t {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	default:
		return v, nil
	}
}

// yamlErr drops yaml.v3's "yaml: " prefix, which reads badly inside our messages.
func yamlErr(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
