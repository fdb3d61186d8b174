package model

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	yamlv2 "go.yaml.in/yaml/v2"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/output"
)

// modelConfigAPI is the part of the client "juju model-config" uses.
type modelConfigAPI interface {
	GetModelConfig(ctx context.Context, model string) ([]*jujupb.ModelConfigValue, error)
	SetModelConfig(ctx context.Context, model string, set map[string]string, reset []string) error
}

var _ modelConfigAPI = (*client.Client)(nil)

type modelConfigOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (modelConfigAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	configArgs
	Format output.Format
	Output string
}

// configArgs are the arguments model-config and model-defaults share, parsed and checked by
// parseConfigArgs.
type configArgs struct {
	// Key is the one key to print; with neither Key nor anything to set or reset, every key is.
	Key string
	// Set holds the values to set: --file's, overridden by key=value arguments.
	Set   map[string]string
	Reset []string
	// File is --file: a YAML file of values, "-" for stdin (read before Run, into Set).
	File                 string
	IgnoreReadOnlyFields bool
}

// Juju's names of what a model-config invocation does, for "cannot X and Y simultaneously".
const (
	actionGetOne  = "get value"
	actionSetArgs = "set key=value pairs"
	actionSetFile = "use --file flag"
	actionReset   = "use --reset flag"
)

// NewCmdModelConfig returns "juju model-config": show, set and reset a model's configuration.
func NewCmdModelConfig(f *cmdutil.Factory, runF func(*modelConfigOptions) error) *cobra.Command {
	opts := &modelConfigOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[modelConfigAPI](f),
	}
	var reset []string
	cmd := &cobra.Command{
		Use:   "model-config [options] [<model-key>[=<value>] ...]",
		Short: "Displays or sets configuration values on a model",
		Long: `With no argument, show every configuration key of the model (-m, or the current one) with
its value and where the value comes from: "default" or "model" (set on the model). With one
key, print its value alone (in --format json|yaml, the key with its value and source).

key=value pairs set keys; --reset key1,key2 returns keys to their defaults; --file reads
values from a YAML file (a map of key: value, or model-config's own yaml output; "-" reads
stdin), which key=value pairs override. Set and reset happen together, in one change, and
only if every key is known and every value valid: nothing changes otherwise.
--ignore-read-only-fields drops read-only keys (agent-version) from what is set, so that
the yaml output of one model can be applied to another.

` + modelConfigKeysHelp(),
		Example: `  juju model-config
  juju model-config -m test --format json
  juju model-config update-status-hook-interval
  juju model-config update-status-hook-interval=1m logging-config='<root>=INFO;unit=DEBUG'
  juju model-config --reset update-status-hook-interval,logging-config
  juju model-config --file settings.yaml
  juju model-config -m a --format yaml | juju model-config -m b --file - --ignore-read-only-fields`,
		Annotations: map[string]string{cmdutil.SeeAlso: "models, show-model, model-constraints, add-model"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseConfigArgs(opts.IO.In, &opts.configArgs, args, reset); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return modelConfigRun(cmd.Context(), opts)
		},
	}
	addConfigArgsFlags(cmd, &opts.configArgs, &reset)
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular, output.JSON, output.Tabular, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// modelConfigKeysHelp lists the keys, as Juju's help does, with what each does here.
func modelConfigKeysHelp() string {
	var b strings.Builder
	b.WriteString("The following keys are available:\n")
	for _, name := range modelconfig.Keys() {
		k, _ := modelconfig.Lookup(name)
		def := k.Default
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(&b, "\n%s:\n  type: %s, default: %s\n  %s\n", name, k.Type, def, k.Description)
		if k.Here != "" {
			fmt.Fprintf(&b, "  Here: %s\n", k.Here)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// addConfigArgsFlags adds the flags of configArgs; --reset is gathered in reset, for
// parseConfigArgs to split.
func addConfigArgsFlags(cmd *cobra.Command, opts *configArgs, reset *[]string) {
	cmd.Flags().StringArrayVar(reset, "reset", nil, "Reset the provided comma delimited keys")
	cmd.Flags().StringVar(&opts.File, "file", "", "Path to yaml-formatted configuration file (- for stdin)")
	cmd.Flags().BoolVar(&opts.IgnoreReadOnlyFields, "ignore-read-only-fields", false, "Ignore read only fields that might cause errors to be emitted while processing yaml documents")
}

// parseConfigArgs sorts the arguments into the key to get or the values to set and the keys
// to reset, refusing what Juju refuses, and reads --file (stdin for "-"); every key and value
// is then checked before anything is sent.
func parseConfigArgs(stdin io.Reader, opts *configArgs, args, reset []string) error {
	var actions []string
	if opts.File != "" {
		actions = append(actions, actionSetFile)
	}
	opts.Reset = nil
	for _, r := range reset {
		for _, k := range strings.Split(strings.Trim(r, ","), ",") {
			if strings.Contains(k, "=") {
				return cmdutil.FlagErrorf(`--reset accepts a comma delimited set of keys "a,b,c", received: %q`, k)
			}
			if k = strings.TrimSpace(k); k != "" {
				opts.Reset = append(opts.Reset, k)
			}
		}
	}
	for _, k := range opts.Reset {
		if key, ok := modelconfig.Lookup(k); ok && key.ReadOnly {
			return cmdutil.FlagErrorf("%q cannot be reset", k)
		}
	}
	if len(opts.Reset) > 0 {
		actions = append(actions, actionReset)
	}
	var gets []string
	pairs := map[string]string{}
	for _, a := range args {
		key, value, isSet := strings.Cut(a, "=")
		if !isSet {
			gets = append(gets, a)
			continue
		}
		if key == "" {
			return cmdutil.FlagErrorf(`expected "key=value", got %q`, a)
		}
		if _, dup := pairs[key]; dup {
			return cmdutil.FlagErrorf("key %q specified more than once", key)
		}
		pairs[key] = value
	}
	if len(gets) > 0 {
		actions = append(actions, actionGetOne)
	}
	if len(pairs) > 0 {
		actions = append(actions, actionSetArgs)
	}
	if len(actions) > 1 && slices.Contains(actions, actionGetOne) {
		return cmdutil.FlagErrorf("cannot %s simultaneously", joinActions(actions))
	}
	if len(gets) > 1 {
		return cmdutil.FlagErrorf("cannot specify multiple keys to get")
	}
	for _, k := range opts.Reset {
		if _, ok := pairs[k]; ok {
			return cmdutil.FlagErrorf("cannot set and reset key %q simultaneously", k)
		}
	}
	opts.Key, opts.Set = "", nil
	if len(gets) == 1 {
		opts.Key = gets[0]
		return nil
	}
	if opts.File != "" {
		fromFile, err := cmdutil.ReadConfigFile(stdin, opts.File)
		if err != nil {
			return err
		}
		opts.Set = fromFile
	}
	for k, v := range pairs {
		if opts.Set == nil {
			opts.Set = map[string]string{}
		}
		opts.Set[k] = v
	}
	for k := range opts.Set {
		if key, ok := modelconfig.Lookup(k); ok && key.ReadOnly && opts.IgnoreReadOnlyFields {
			delete(opts.Set, k)
		}
	}
	if opts.File != "" {
		// --reset overrides what the file sets.
		for _, k := range opts.Reset {
			delete(opts.Set, k)
		}
	}
	if len(opts.Set) > 0 || len(opts.Reset) > 0 {
		if _, err := modelconfig.Apply(nil, opts.Set, opts.Reset); err != nil {
			return cmdutil.FlagErrorWrap(err)
		}
	}
	return nil
}

// joinActions lists actions as Juju does: "a and b", "a, b and c".
func joinActions(actions []string) string {
	if len(actions) == 1 {
		return actions[0]
	}
	return strings.Join(actions[:len(actions)-1], ", ") + " and " + actions[len(actions)-1]
}

func modelConfigRun(ctx context.Context, opts *modelConfigOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if len(opts.Set) > 0 || len(opts.Reset) > 0 {
		if err := c.SetModelConfig(ctx, model.UUID, opts.Set, opts.Reset); err != nil {
			return fmt.Errorf("setting config of model %q: %w", model.Qualified(), err)
		}
		return nil
	}
	if opts.File != "" {
		return nil // an empty file sets nothing
	}
	values, err := c.GetModelConfig(ctx, model.UUID)
	if err != nil {
		return fmt.Errorf("getting config of model %q: %w", model.Qualified(), err)
	}
	view := newModelConfigView(values)
	if opts.Key == "" {
		return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
	}
	v, ok := view[opts.Key]
	if !ok {
		return fmt.Errorf("%q is not a key of the currently targeted model: %q", opts.Key, model.Qualified())
	}
	if opts.Format == output.Tabular {
		// The value alone, as Juju's smart format prints it.
		return writeText(opts, smartText(v.Value))
	}
	return output.WriteFile(opts.Output, opts.Format, modelConfigView{opts.Key: v}, opts.IO)
}

// writeText writes a line of text to stdout, or to the -o file.
func writeText(opts *modelConfigOptions, text string) error {
	if opts.Output == "" {
		_, err := fmt.Fprintln(opts.IO.Out, text)
		return err
	}
	if err := os.WriteFile(opts.Output, []byte(text+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing output file: %w", err)
	}
	return nil
}

// smartText is a value as Juju's smart formatter prints it: a string as it is, a bool as
// True or False.
func smartText(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// modelConfigView is "juju model-config" in Juju's shape: every key with its value (typed: a
// boolean for a bool key) and source. Juju names the two fields Value and Source in JSON and
// value and source in YAML; jubilant reads "Value".
type modelConfigView map[string]modelConfigValue

type modelConfigValue struct {
	Value  any    `json:"Value" yaml:"value"`
	Source string `json:"Source" yaml:"source"`
}

func newModelConfigView(values []*jujupb.ModelConfigValue) modelConfigView {
	v := modelConfigView{}
	for _, val := range values {
		v[val.GetKey()] = modelConfigValue{Value: typedValue(val.GetKey(), val.GetValue()), Source: val.GetSource()}
	}
	return v
}

// Table renders Juju's "Attribute From Value" table, each value as YAML writes it.
func (v modelConfigView) Table() []output.Table {
	t := output.Table{Header: []string{"Attribute", "From", "Value"}}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		t.Rows = append(t.Rows, []string{k, v[k].Source, yamlText(v[k].Value)})
	}
	return []output.Table{t}
}

// yamlText is a value as YAML writes it, for a table cell.
func yamlText(value any) string {
	var buf bytes.Buffer
	if err := yamlv2.NewEncoder(&buf).Encode(value); err != nil {
		return fmt.Sprint(value)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
