package application

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// configArgs holds the parsed --config values: YAML files first, then key=value pairs, which
// override the files, whatever their order on the command line.
type configArgs struct {
	files []configFile
	pairs map[string]string
}

type configFile struct {
	path string
	data map[string]any
}

// parseConfigArgs reads --config values: <key>=<value> (a value @<file> is read from the
// file), or the path of a YAML file.
func parseConfigArgs(values []string) (*configArgs, error) {
	c := &configArgs{pairs: map[string]string{}}
	for _, v := range values {
		if key, value, ok := strings.Cut(v, "="); ok {
			if key == "" {
				return nil, fmt.Errorf("invalid --config value %q: expected <key>=<value>", v)
			}
			if strings.HasPrefix(value, "@") {
				data, err := os.ReadFile(value[1:])
				if err != nil {
					return nil, fmt.Errorf("reading --config value of %q: %w", key, err)
				}
				value = string(data)
			}
			c.pairs[key] = value
			continue
		}
		data, err := os.ReadFile(v)
		if err != nil {
			return nil, fmt.Errorf("reading --config file: %w", err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("--config file %q: %w", v, err)
		}
		c.files = append(c.files, configFile{path: v, data: m})
	}
	return c, nil
}

// resolve returns the settings for application app. A file is either a flat map of settings or
// holds them under the application's name ({<app>: {key: value}}).
func (c *configArgs) resolve(app string) (map[string]string, error) {
	if c == nil {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range c.files {
		settings := f.data
		if inner, ok := f.data[app].(map[string]any); ok {
			settings = inner
		} else if len(f.data) == 1 {
			for name, v := range f.data {
				if _, ok := v.(map[string]any); ok {
					return nil, fmt.Errorf("--config file %q has no settings for application %q (only for %q)", f.path, app, name)
				}
			}
		}
		for _, key := range sortedKeys(settings) {
			s, err := scalarString(settings[key])
			if err != nil {
				return nil, fmt.Errorf("--config file %q: option %q: %w", f.path, key, err)
			}
			out[key] = s
		}
	}
	for k, v := range c.pairs {
		out[k] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// scalarString prints a YAML scalar the way the charm's config would be written.
func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("expected a scalar value, got %T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
