package actions

// WithDefaults returns params with the schema's defaults filled in where a key is missing,
// recursing into object properties, as Juju 3.6 does when it queues an action: the charm's
// action-get then sees every defaulted key. params itself is not changed.
func WithDefaults(schema map[string]any, params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		out[k] = v
	}
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		prop, ok := p.(map[string]any)
		if !ok {
			continue
		}
		v, present := out[name]
		if !present {
			if d, has := prop["default"]; has {
				out[name] = d
			}
			continue
		}
		if sub, isMap := v.(map[string]any); isMap {
			if _, nested := prop["properties"]; nested {
				out[name] = WithDefaults(prop, sub)
			}
		}
	}
	return out
}
