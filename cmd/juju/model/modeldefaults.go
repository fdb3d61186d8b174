package model

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/output"
)

// modelDefaultsAPI is the part of the client "juju model-defaults" uses.
type modelDefaultsAPI interface {
	GetModelDefaults(ctx context.Context) ([]*jujupb.ModelDefault, error)
	SetModelDefaults(ctx context.Context, set map[string]string, reset []string) error
}

var _ modelDefaultsAPI = (*client.Client)(nil)

type modelDefaultsOptions struct {
	IO     *output.Streams
	Client func(ctx context.Context) (modelDefaultsAPI, error)

	Controller string
	configArgs
	Format output.Format
	Output string
}

// NewCmdModelDefaults returns "juju model-defaults": show, set and reset the configuration
// every model of the controller inherits.
func NewCmdModelDefaults(f *cmdutil.Factory, runF func(*modelDefaultsOptions) error) *cobra.Command {
	opts := &modelDefaultsOptions{IO: f.IO, Client: cmdutil.ClientFunc[modelDefaultsAPI](f)}
	var reset []string
	cmd := &cobra.Command{
		Use:     "model-defaults [options] [<model-key>[=<value>] ...]",
		Aliases: []string{"model-default"},
		Short:   "Displays or sets default configuration settings for models",
		Long: `Model defaults are the configuration every model of the controller (-c, or the current
one) inherits for the keys it does not set itself; model-config shows such a value with the
source "controller". They are set at bootstrap with --model-default and changed here; a change
reaches existing models at once, as in Juju.

With no argument, show every key with Juju's default and the controller's default. With one
key, show that key. key=value pairs set defaults; --reset key1,key2 removes them; --file
reads values from a YAML file ("-" reads stdin), which key=value pairs override. Everything
is checked as model configuration first, and set in one change or not at all.

This controller has one cloud and one region, so there are no cloud or region defaults.
The keys are those of "juju model-config --help".`,
		Example: `  juju model-defaults
  juju model-defaults automatically-retry-hooks
  juju model-defaults automatically-retry-hooks=false update-status-hook-interval=1m
  juju model-defaults --reset automatically-retry-hooks
  juju model-defaults --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "model-config, bootstrap, add-model"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseConfigArgs(opts.IO.In, &opts.configArgs, args, reset); err != nil {
				return err
			}
			if opts.Key != "" {
				if _, ok := modelconfig.Lookup(opts.Key); !ok {
					return cmdutil.FlagErrorWrap(modelconfig.UnknownKeyError(opts.Key))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return modelDefaultsRun(cmd.Context(), opts)
		},
	}
	addConfigArgsFlags(cmd, &opts.configArgs, &reset)
	cmdutil.AddControllerFlag(cmd, &opts.Controller)
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular, output.JSON, output.Tabular, output.YAML)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func modelDefaultsRun(ctx context.Context, opts *modelDefaultsOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if len(opts.Set) > 0 || len(opts.Reset) > 0 {
		if err := c.SetModelDefaults(ctx, opts.Set, opts.Reset); err != nil {
			return fmt.Errorf("setting model defaults: %w", err)
		}
		return nil
	}
	if opts.File != "" {
		return nil // an empty file sets nothing
	}
	values, err := c.GetModelDefaults(ctx)
	if err != nil {
		return fmt.Errorf("getting model defaults: %w", err)
	}
	view := newModelDefaultsView(values)
	if opts.Key != "" {
		view = modelDefaultsView{opts.Key: view[opts.Key]}
	}
	return output.WriteFile(opts.Output, opts.Format, view, opts.IO)
}

// modelDefaultsView is "juju model-defaults" in Juju's shape: every key with Juju's default
// and, where it has one, the controller's (typed: a boolean for a bool key).
type modelDefaultsView map[string]modelDefaultValue

type modelDefaultValue struct {
	Default    any `json:"default" yaml:"default"`
	Controller any `json:"controller,omitempty" yaml:"controller,omitempty"`
}

func newModelDefaultsView(values []*jujupb.ModelDefault) modelDefaultsView {
	v := modelDefaultsView{}
	for _, d := range values {
		val := modelDefaultValue{Default: typedValue(d.GetKey(), d.GetDefault())}
		if d.GetControllerSet() {
			val.Controller = typedValue(d.GetKey(), d.GetController())
		}
		v[d.GetKey()] = val
	}
	return v
}

// typedValue is a configuration value as its key's type: a bool for a bool key.
func typedValue(key, value string) any {
	if k, ok := modelconfig.Lookup(key); ok && k.Type == modelconfig.TypeBool {
		if b, err := strconv.ParseBool(value); err == nil {
			return b
		}
	}
	return value
}

// Table renders Juju's "Attribute Default Controller" table; "-" where the controller has
// no default of its own.
func (v modelDefaultsView) Table() []output.Table {
	t := output.Table{Header: []string{"Attribute", "Default", "Controller"}}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ctl := "-"
		if v[k].Controller != nil {
			ctl = yamlText(v[k].Controller)
		}
		t.Rows = append(t.Rows, []string{k, yamlText(v[k].Default), ctl})
	}
	return []output.Table{t}
}
