package application

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// configAPI is the part of the client "juju config" uses.
type configAPI interface {
	GetConfig(ctx context.Context, model, app string) (*jujupb.ApplicationConfig, error)
	SetConfig(ctx context.Context, req *jujupb.SetConfigRequest) error
}

var _ configAPI = (*client.Client)(nil)

type configOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (configAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	// Key is the one option to print; with neither Key nor anything to set, every option is.
	Key string
	// Values to set, as typed (the controller converts them to the options' types); from
	// key=value arguments (@file reads a value from a file) over --file.
	Values map[string]string
	Reset  []string
	File   string
	Format output.Format
	Output string
}

// NewCmdConfig returns "juju config <application> [key[=value] ...]": show, set and reset an
// application's config.
func NewCmdConfig(f *cmdutil.Factory, runF func(*configOptions) error) *cobra.Command {
	opts := &configOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[configAPI](f),
	}
	var reset []string
	cmd := &cobra.Command{
		Use:   "config [options] <application name> [--reset <key[,key]>] [<key>][=<value>] ...",
		Short: "Get, set, or reset the configuration of an application",
		Long: `With only an application name, show every option of its charm (settings) and Juju's
own application config (application-config: trust, see juju trust): default, description,
where the value comes from (default, user or unset), type and value; yaml by default, or
json. With one key, print that option's value alone.

key=value pairs set options (a value @path is read from the file at path); --file reads
more from a YAML file of the form {<application>: {key: value}} (or a flat map), which
key=value pairs override. --reset returns options to their charm defaults. Values are
checked against the charm's option types by the controller; the units' agents then run
their config-changed hook.`,
		Example: `  juju config mysql
  juju config mysql port
  juju config mysql port=3307 debug=true
  juju config mysql trust=true
  juju config mysql --reset port,debug
  juju config mysql --file settings.yaml`,
		Annotations: map[string]string{cmdutil.SeeAlso: "deploy, show-application, status"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseConfigCmdArgs(opts, args, splitComma(reset)); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return configRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&reset, "reset", nil, "Reset the given keys to their defaults (repeatable, comma-separated)")
	cmd.Flags().StringVar(&opts.File, "file", "", "Set the options of a YAML file")
	output.AddFormatFlag(cmd, &opts.Format, output.YAML, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func splitComma(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// parseConfigCmdArgs sorts the arguments into the one key to get or the values to set, and
// refuses mixing them.
func parseConfigCmdArgs(opts *configOptions, args, reset []string) error {
	if len(args) == 0 {
		return cmdutil.FlagErrorf("no application name specified")
	}
	opts.Application = args[0]
	if err := names.ValidateApplicationName(opts.Application); err != nil {
		return cmdutil.FlagErrorWrap(err)
	}
	opts.Reset, opts.Key = reset, ""
	var gets []string
	opts.Values = map[string]string{}
	if opts.File != "" {
		values, err := readConfigFile(opts.File, opts.Application)
		if err != nil {
			return err
		}
		opts.Values = values
	}
	setting := opts.File != ""
	for _, a := range args[1:] {
		key, value, isSet := strings.Cut(a, "=")
		if !isSet {
			gets = append(gets, a)
			continue
		}
		if key == "" {
			return cmdutil.FlagErrorf("invalid config value %q: expected <key>=<value>", a)
		}
		if path, ok := strings.CutPrefix(value, "@"); ok {
			data, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reading the value of %q: %w", key, err)
			}
			value = string(data)
		}
		opts.Values[key] = value
		setting = true
	}
	switch {
	case len(gets) > 1:
		return cmdutil.FlagErrorf("can only retrieve a single value, or all values")
	case len(gets) == 1 && setting:
		return cmdutil.FlagErrorf("cannot set and retrieve values simultaneously")
	case len(gets) == 1 && len(reset) > 0:
		return cmdutil.FlagErrorf("cannot reset and retrieve values simultaneously")
	}
	for _, k := range reset {
		if _, ok := opts.Values[k]; ok {
			return cmdutil.FlagErrorf("cannot set and reset key %q simultaneously", k)
		}
	}
	if len(gets) == 1 {
		opts.Key = gets[0]
	}
	return nil
}

// readConfigFile reads the settings of app from a YAML file: {<app>: {key: value}}, or a flat
// map of settings.
func readConfigFile(path, app string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("config file %q: %w", path, err)
	}
	settings := doc
	if inner, ok := doc[app].(map[string]any); ok {
		settings = inner
	} else {
		for name, v := range doc {
			if _, ok := v.(map[string]any); ok {
				return nil, fmt.Errorf("config file %q has no settings for application %q (only for %q)", path, app, name)
			}
		}
	}
	out := map[string]string{}
	for key, v := range settings {
		s, err := scalarString(v)
		if err != nil {
			return nil, fmt.Errorf("config file %q: option %q: %w", path, key, err)
		}
		out[key] = s
	}
	return out, nil
}

func configRun(ctx context.Context, opts *configOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if len(opts.Values) > 0 || len(opts.Reset) > 0 {
		req := &jujupb.SetConfigRequest{Model: model.UUID, Application: opts.Application, Values: opts.Values, Reset_: opts.Reset}
		if err := c.SetConfig(ctx, req); err != nil {
			return fmt.Errorf("setting config of application %q: %w", opts.Application, err)
		}
		return nil
	}
	cfg, err := c.GetConfig(ctx, model.UUID, opts.Application)
	if err != nil {
		return fmt.Errorf("getting config of application %q: %w", opts.Application, err)
	}
	view, err := newConfigView(cfg)
	if err != nil {
		return err
	}
	if opts.Key == "" {
		return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
	}
	s, ok := view.Settings[opts.Key]
	if !ok {
		// As in Juju, a key that is not the charm's may be Juju's application config (trust).
		s, ok = view.ApplicationConfig[opts.Key]
	}
	if !ok {
		return fmt.Errorf("key %q not found in %q application config or charm settings", opts.Key, opts.Application)
	}
	return writeFile(opts, valueText(s.Value))
}

// ConfigView is what "juju config <application>" prints, in Juju's shape: the charm's options
// under settings, Juju's own (trust) under application-config.
type ConfigView struct {
	Application       string                  `json:"application" yaml:"application"`
	ApplicationConfig map[string]*SettingView `json:"application-config,omitempty" yaml:"application-config,omitempty"`
	Charm             string                  `json:"charm" yaml:"charm"`
	Settings          map[string]*SettingView `json:"settings" yaml:"settings"`
}

// SettingView is one option: its default and value are typed (a string, number or boolean), and
// absent when it has none. Source is "default", "user" or "unset" (no value at all).
type SettingView struct {
	Default     any    `json:"default,omitempty" yaml:"default,omitempty"`
	Description string `json:"description" yaml:"description"`
	Source      string `json:"source" yaml:"source"`
	Type        string `json:"type" yaml:"type"`
	Value       any    `json:"value,omitempty" yaml:"value,omitempty"`
}

// charmRevRe strips the scheme and revision of a charm URL: local:mysql-7 is charm mysql.
var charmRevRe = regexp.MustCompile(`-[0-9]+$`)

func newConfigView(cfg *jujupb.ApplicationConfig) (*ConfigView, error) {
	charm := cfg.GetCharm()
	if i := strings.Index(charm, ":"); i >= 0 {
		charm = charmRevRe.ReplaceAllString(charm[i+1:], "")
	}
	v := &ConfigView{Application: cfg.GetApplication(), Charm: charm, Settings: map[string]*SettingView{}}
	for _, o := range cfg.GetOptions() {
		set, err := newSettingView(o)
		if err != nil {
			return nil, err
		}
		v.Settings[o.GetName()] = set
	}
	for _, o := range cfg.GetApplicationOptions() {
		set, err := newSettingView(o)
		if err != nil {
			return nil, err
		}
		if v.ApplicationConfig == nil {
			v.ApplicationConfig = map[string]*SettingView{}
		}
		v.ApplicationConfig[o.GetName()] = set
	}
	return v, nil
}

func newSettingView(o *jujupb.ConfigOption) (*SettingView, error) {
	def, err := decodeConfigValue(o.GetDefaultJson())
	if err != nil {
		return nil, fmt.Errorf("controller sent a bad default for %q: %w", o.GetName(), err)
	}
	val, err := decodeConfigValue(o.GetValueJson())
	if err != nil {
		return nil, fmt.Errorf("controller sent a bad value for %q: %w", o.GetName(), err)
	}
	source := o.GetSource()
	if val == nil && source != "user" {
		source = "unset"
	}
	return &SettingView{Default: def, Description: o.GetDescription(), Source: source, Type: o.GetType(), Value: val}, nil
}

// decodeConfigValue reads a JSON value; numbers stay integers when they are ("" is no value).
func decodeConfigValue(text string) (any, error) {
	if text == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		f, err := n.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return v, nil
}

// valueText is one value as "juju config <app> <key>" prints it: a string as it is, anything
// else in its usual notation; nothing for no value.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// writeFile writes one value and a newline (unless it already ends with one) to the file at
// opts.Output when set, else to stdout.
func writeFile(opts *configOptions, text string) error {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if opts.Output == "" {
		_, err := io.WriteString(opts.IO.Out, text)
		return err
	}
	if err := os.WriteFile(opts.Output, []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing output file: %w", err)
	}
	return nil
}
