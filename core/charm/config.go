package charm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Option types a charm's config.yaml may declare.
const (
	TypeString  = "string"
	TypeInt     = "int"
	TypeFloat   = "float"
	TypeBoolean = "boolean"
)

// Option is one option of a charm's config.yaml. Default holds a typed value (string, int64,
// float64 or bool), or nil when the option has no default.
type Option struct {
	Name        string
	Type        string
	Description string
	Default     any
}

// Config is a charm's config.yaml: its options by name. A charm without config.yaml has an
// empty Config, so every key given to it is unknown.
type Config struct {
	Options map[string]Option
}

type rawOption struct {
	Type        string    `yaml:"type"`
	Description string    `yaml:"description"`
	Default     yaml.Node `yaml:"default"`
}

// ParseConfig parses config.yaml: options: {name: {type, default, description}}. A missing
// type means string, as in Juju; an unknown type or a default of the wrong type is an error.
func ParseConfig(data []byte) (*Config, error) {
	var raw struct {
		Options map[string]rawOption `yaml:"options"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("invalid config.yaml: %v", err)
	}
	c := &Config{Options: map[string]Option{}}
	for _, name := range sortedNames(raw.Options) {
		r := raw.Options[name]
		opt := Option{Name: name, Type: r.Type, Description: r.Description}
		switch opt.Type {
		case "":
			opt.Type = TypeString
		case TypeString, TypeInt, TypeFloat, TypeBoolean:
		default:
			return nil, fmt.Errorf("invalid config.yaml: option %q has unknown type %q", name, r.Type)
		}
		def, err := opt.defaultValue(&r.Default)
		if err != nil {
			return nil, fmt.Errorf("invalid config.yaml: %w", err)
		}
		opt.Default = def
		c.Options[name] = opt
	}
	return c, nil
}

// ReadConfigDir reads config.yaml of the charm directory dir; a charm without one has no
// options.
func ReadConfigDir(dir string) (*Config, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{Options: map[string]Option{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read config.yaml: %w", err)
	}
	return ParseConfig(data)
}

// defaultValue converts a YAML default to the option's type. YAML's own typing is kept where
// it is unambiguous ("default: 8080" for an int); a quoted number for an int is refused.
func (o Option) defaultValue(n *yaml.Node) (any, error) {
	if n.Kind == 0 || n.ShortTag() == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("option %q: default must be a scalar", o.Name)
	}
	tag := n.ShortTag()
	bad := fmt.Errorf("option %q: default %q is not of type %s", o.Name, n.Value, o.Type)
	switch o.Type {
	case TypeString:
		return n.Value, nil
	case TypeInt:
		if tag != "!!int" {
			return nil, bad
		}
		return ParseValue(o, n.Value)
	case TypeFloat:
		if tag != "!!int" && tag != "!!float" {
			return nil, bad
		}
		return ParseValue(o, n.Value)
	case TypeBoolean:
		if tag != "!!bool" {
			return nil, bad
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, bad
		}
		return b, nil
	}
	return nil, bad
}

// ParseValue converts a value typed on the command line to the option's type: a string as
// is, an int or a float as a number, a boolean as "true" or "false".
func ParseValue(opt Option, s string) (any, error) {
	bad := fmt.Errorf("option %q: expected %s, got %q", opt.Name, opt.Type, s)
	switch opt.Type {
	case TypeString, "":
		return s, nil
	case TypeInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			// YAML writes large ints as floats; accept whole floats only.
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, bad
			}
			n = int64(f)
		}
		return n, nil
	case TypeFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, bad
		}
		return f, nil
	case TypeBoolean:
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, bad
	}
	return nil, fmt.Errorf("option %q has unknown type %q", opt.Name, opt.Type)
}

// Names returns the option names, sorted.
func (c *Config) Names() []string {
	if c == nil {
		return nil
	}
	return sortedNames(c.Options)
}

// Option returns the named option; an unknown name is an error.
func (c *Config) Option(name string) (Option, error) {
	if c != nil {
		if o, ok := c.Options[name]; ok {
			return o, nil
		}
	}
	return Option{}, fmt.Errorf("unknown option %q", name)
}

// ParseSettings checks values typed on the command line against the options and converts
// them, in the order of their names so the first error is always the same.
func (c *Config) ParseSettings(values map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(values))
	for _, name := range sortedNames(values) {
		opt, err := c.Option(name)
		if err != nil {
			return nil, err
		}
		v, err := ParseValue(opt, values[name])
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// Defaults returns the default of every option that has one.
func (c *Config) Defaults() map[string]any {
	out := map[string]any{}
	if c == nil {
		return out
	}
	for name, o := range c.Options {
		if o.Default != nil {
			out[name] = o.Default
		}
	}
	return out
}

// EncodeValue is the JSON form of a typed value, how values are stored and sent.
func EncodeValue(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding config value: %w", err)
	}
	return string(data), nil
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
