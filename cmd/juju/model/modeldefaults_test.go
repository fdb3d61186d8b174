package model

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdModelDefaults(t *testing.T) {
	for _, tc := range []struct {
		args  string
		key   string
		set   map[string]string
		reset []string
		err   string
	}{
		{args: ""},
		{args: "automatically-retry-hooks", key: "automatically-retry-hooks"},
		{args: "automatically-retry-hooks=F extra-info=ci", set: map[string]string{"automatically-retry-hooks": "F", "extra-info": "ci"}},
		{args: "--reset automatically-retry-hooks,extra-info", reset: []string{"automatically-retry-hooks", "extra-info"}},
		{args: "-c other --format json"},
		{args: "nosuch", err: `key "nosuch" is not defined in the current model configuration: possible misspelling`},
		{args: "automatically-retry-hooks=maybe", err: `automatically-retry-hooks: expected bool, got string("maybe")`},
		{args: "a b", err: "cannot specify multiple keys to get"},
		{args: "extra-info=x --reset extra-info", err: `cannot set and reset key "extra-info" simultaneously`},
	} {
		var got *modelDefaultsOptions
		cmd := NewCmdModelDefaults(cmdutil.TestFactory(), func(o *modelDefaultsOptions) error { got = o; return nil })
		err := execute(cmd, tc.args)
		if tc.err != "" {
			checkErr(t, err, tc.err, true)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got.Key != tc.key || !maps.Equal(got.Set, tc.set) || !slices.Equal(got.Reset, tc.reset) {
			t.Errorf("%q: key %q set %v reset %v", tc.args, got.Key, got.Set, got.Reset)
		}
	}
}

type fakeModelDefaultsAPI struct {
	defaults   map[string]string
	set        map[string]string
	reset      []string
	calls, err int
}

func (f *fakeModelDefaultsAPI) GetModelDefaults(context.Context) ([]*jujupb.ModelDefault, error) {
	if f.err != 0 {
		return nil, errors.New("connection refused")
	}
	var out []*jujupb.ModelDefault
	for _, name := range modelconfig.Keys() {
		k, _ := modelconfig.Lookup(name)
		v, ok := f.defaults[name]
		out = append(out, &jujupb.ModelDefault{Key: name, Default: k.Default, Controller: v, ControllerSet: ok})
	}
	return out, nil
}

func (f *fakeModelDefaultsAPI) SetModelDefaults(_ context.Context, set map[string]string, reset []string) error {
	f.calls++
	f.set, f.reset = set, reset
	return nil
}

func runModelDefaults(t *testing.T, api *fakeModelDefaultsAPI, opts *modelDefaultsOptions) (string, string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO = ios
	opts.Client = func(context.Context) (modelDefaultsAPI, error) { return api, nil }
	if opts.Format == "" {
		opts.Format = output.Tabular
	}
	err := modelDefaultsRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

// Juju's shapes: every key with default (and controller, where set) in JSON and YAML, the
// Attribute/Default/Controller table with "-" where the controller has none, one key alone.
func TestModelDefaultsGolden(t *testing.T) {
	api := &fakeModelDefaultsAPI{defaults: map[string]string{"automatically-retry-hooks": "false", "update-status-hook-interval": "1m"}}
	for _, tc := range []struct {
		name   string
		key    string
		format output.Format
	}{
		{"all.tabular", "", output.Tabular},
		{"all.json", "", output.JSON},
		{"all.yaml", "", output.YAML},
		{"one.tabular", "automatically-retry-hooks", output.Tabular},
		{"one.json", "automatically-retry-hooks", output.JSON},
		{"one.yaml", "update-status-hook-interval", output.YAML},
	} {
		out, errOut, err := runModelDefaults(t, api, &modelDefaultsOptions{configArgs: configArgs{Key: tc.key}, Format: tc.format})
		if err != nil || errOut != "" {
			t.Fatalf("%s: %v %q", tc.name, err, errOut)
		}
		golden.Assert(t, out, "model-defaults/"+tc.name+".golden")
	}
}

func TestModelDefaultsSetAndReset(t *testing.T) {
	api := &fakeModelDefaultsAPI{}
	out, errOut, err := runModelDefaults(t, api, &modelDefaultsOptions{configArgs: configArgs{Set: map[string]string{"extra-info": "x"}, Reset: []string{"default-base"}}})
	if err != nil || out != "" || errOut != "" || api.calls != 1 || api.set["extra-info"] != "x" || !slices.Equal(api.reset, []string{"default-base"}) {
		t.Errorf("set: %v %q %q %+v", err, out, errOut, api)
	}
	_, _, err = runModelDefaults(t, &fakeModelDefaultsAPI{err: 1}, &modelDefaultsOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "getting model defaults: ") {
		t.Errorf("error = %v", err)
	}
}
