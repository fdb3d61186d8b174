package cmdutil

import (
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// ReadConfigFile reads a YAML map of key: value, or model-config's yaml output (key:
// {value: ..., source: ...}), from path or stdin ("-").
func ReadConfigFile(stdin io.Reader, path string) (map[string]string, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("config file %q: %v", path, err)
	}
	out := map[string]string{}
	for key, v := range doc {
		if m, ok := v.(map[string]any); ok {
			if inner, has := m["value"]; has {
				v = inner
			}
		}
		switch x := v.(type) {
		case nil:
			out[key] = ""
		case string:
			out[key] = x
		case bool, int, int64, uint64, float64:
			out[key] = fmt.Sprint(x)
		default:
			return nil, fmt.Errorf("config file %q: %q must be a single value", path, key)
		}
	}
	return out, nil
}
