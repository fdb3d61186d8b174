package model

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdModelConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cfg.yaml")
	// model-config's own yaml output, read back: read-only keys need --ignore-read-only-fields.
	if err := os.WriteFile(file, []byte("agent-version:\n  value: 3.6.12\n  source: model\nextra-info:\n  value: from-file\n  source: model\nautomatically-retry-hooks: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  string
		key   string
		set   map[string]string
		reset []string
		err   string
	}{
		{args: ""},
		{args: "update-status-hook-interval", key: "update-status-hook-interval"},
		{args: "update-status-hook-interval=1m extra-info=a=b", set: map[string]string{"update-status-hook-interval": "1m", "extra-info": "a=b"}},
		{args: "--reset extra-info,default-base, --reset logging-config", reset: []string{"extra-info", "default-base", "logging-config"}},
		{args: "extra-info=x --reset default-base", set: map[string]string{"extra-info": "x"}, reset: []string{"default-base"}},
		{args: "--file " + file + " --ignore-read-only-fields extra-info=args", set: map[string]string{"extra-info": "args", "automatically-retry-hooks": "true"}},
		{args: "--file " + file + " --ignore-read-only-fields --reset extra-info", set: map[string]string{"automatically-retry-hooks": "true"}, reset: []string{"extra-info"}},
		{args: "--file " + file, err: `"agent-version" cannot be set: it is the Juju version this controller implements (3.6.12)`},
		{args: "a b", err: "cannot specify multiple keys to get"},
		{args: "a b=1", err: "cannot get value and set key=value pairs simultaneously"},
		{args: "a --reset b", err: "cannot use --reset flag and get value simultaneously"},
		{args: "--file " + file + " a --reset b", err: "cannot use --file flag, use --reset flag and get value simultaneously"},
		{args: "=x", err: `expected "key=value", got "=x"`},
		{args: "a=1 a=2", err: `key "a" specified more than once`},
		{args: "--reset a=1", err: `--reset accepts a comma delimited set of keys "a,b,c", received: "a=1"`},
		{args: "--reset agent-version", err: `"agent-version" cannot be reset`},
		{args: "extra-info=1 --reset extra-info", err: `cannot set and reset key "extra-info" simultaneously`},
		{args: "nope=1", err: `key "nope" is not defined in the current model configuration: possible misspelling`},
		{args: "--reset nope", err: `key "nope" is not defined in the current model configuration: possible misspelling`},
		{args: "automatically-retry-hooks=maybe", err: `automatically-retry-hooks: expected bool, got string("maybe")`},
		{args: "update-status-hook-interval=10ms", err: "update status hook frequency 10ms cannot be less than 1s"},
		{args: "http-proxy=http://p juju-http-proxy=http://p", err: "cannot specify both legacy proxy values and juju proxy values"},
	} {
		var got *modelConfigOptions
		cmd := NewCmdModelConfig(cmdutil.TestFactory(), func(o *modelConfigOptions) error { got = o; return nil })
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

type fakeModelConfigAPI struct {
	config map[string]string
	set    map[string]string
	reset  []string
	calls  int
	err    error
}

func (f *fakeModelConfigAPI) GetModelConfig(_ context.Context, model string) ([]*jujupb.ModelConfigValue, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []*jujupb.ModelConfigValue
	for _, v := range modelconfig.Values(nil, f.config) {
		out = append(out, &jujupb.ModelConfigValue{Key: v.Key.Name, Value: v.Value, Source: v.Source})
	}
	return out, nil
}

func (f *fakeModelConfigAPI) SetModelConfig(_ context.Context, model string, set map[string]string, reset []string) error {
	f.calls++
	f.set, f.reset = set, reset
	return f.err
}

func runModelConfig(t *testing.T, api *fakeModelConfigAPI, opts *modelConfigOptions) (string, string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO = ios
	opts.ResolveModel = testModel
	opts.Client = func(context.Context) (modelConfigAPI, error) { return api, nil }
	if opts.Format == "" {
		opts.Format = output.Tabular
	}
	err := modelConfigRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

var modelConfigFixture = map[string]string{"update-status-hook-interval": "10s", "automatically-retry-hooks": "true", "logging-config": "<root>=INFO;unit=DEBUG"}

// TestModelConfigGolden keeps Juju's shapes: every key with Value and Source in JSON (value
// and source in YAML), the Attribute/From/Value table, one key's value alone.
func TestModelConfigGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    string
		format output.Format
	}{
		{"all.tabular", "", output.Tabular},
		{"all.json", "", output.JSON},
		{"all.yaml", "", output.YAML},
		{"one.stdout", "update-status-hook-interval", output.Tabular},
		{"one-bool.stdout", "automatically-retry-hooks", output.Tabular},
		{"one.json", "update-status-hook-interval", output.JSON},
		{"one.yaml", "update-status-hook-interval", output.YAML},
	} {
		out, errOut, err := runModelConfig(t, &fakeModelConfigAPI{config: modelConfigFixture}, &modelConfigOptions{configArgs: configArgs{Key: tc.key}, Format: tc.format})
		if err != nil || errOut != "" {
			t.Fatalf("%s: %v %q", tc.name, err, errOut)
		}
		golden.Assert(t, out, "model-config/"+tc.name+".golden")
	}
}

func TestModelConfigSetAndReset(t *testing.T) {
	api := &fakeModelConfigAPI{}
	out, errOut, err := runModelConfig(t, api, &modelConfigOptions{configArgs: configArgs{Set: map[string]string{"extra-info": "x"}, Reset: []string{"default-base"}}})
	if err != nil || out != "" || errOut != "" {
		t.Fatalf("%q %q %v", out, errOut, err)
	}
	if api.calls != 1 || api.set["extra-info"] != "x" || !slices.Equal(api.reset, []string{"default-base"}) {
		t.Errorf("calls %d set %v reset %v", api.calls, api.set, api.reset)
	}
	api = &fakeModelConfigAPI{err: apierr.Errorf(apierr.NotValid, "cannot specify both legacy proxy values and juju proxy values")}
	_, _, err = runModelConfig(t, api, &modelConfigOptions{configArgs: configArgs{Set: map[string]string{"juju-http-proxy": "http://p"}}})
	if err == nil || err.Error() != `setting config of model "admin/default": cannot specify both legacy proxy values and juju proxy values` {
		t.Errorf("err = %v", err)
	}
}

func TestModelConfigUnknownKey(t *testing.T) {
	out, _, err := runModelConfig(t, &fakeModelConfigAPI{}, &modelConfigOptions{configArgs: configArgs{Key: "nope"}, Format: output.JSON})
	if err == nil || err.Error() != `"nope" is not a key of the currently targeted model: "admin/default"` || out != "" {
		t.Errorf("%q %v", out, err)
	}
}

// TestJubilantParsesModelConfig runs jubilant's own reading of model-config --format json.
func TestJubilantParsesModelConfig(t *testing.T) {
	jubilant := jubilantDir(t)
	out, _, err := runModelConfig(t, &fakeModelConfigAPI{config: modelConfigFixture}, &modelConfigOptions{Format: output.JSON})
	if err != nil {
		t.Fatal(err)
	}
	// jubilant's Juju.model_config: {k: v['Value'] for k, v in result.items() if 'Value' in v}
	script := `import json, sys
result = json.loads(sys.argv[1])
cfg = {k: v['Value'] for k, v in result.items() if 'Value' in v}
print(cfg['update-status-hook-interval'], cfg['automatically-retry-hooks'], cfg['agent-version'], len(cfg))`
	got, err := exec.Command("python3", "-c", script, out).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	want := fmt.Sprintf("10s True 3.6.12 %d", len(modelconfig.Keys()))
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("jubilant read %s, want %s (from %s)", got, want, jubilant)
	}
}

// --file - reads stdin: a flat map, or model-config's own yaml output (the value of each key).
func TestReadModelConfigFileFromStdin(t *testing.T) {
	in := strings.NewReader("update-status-hook-interval:\n  value: 1m\n  source: model\nautomatically-retry-hooks: true\nextra-info:\n")
	got, err := cmdutil.ReadConfigFile(in, "-")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"update-status-hook-interval": "1m", "automatically-retry-hooks": "true", "extra-info": ""}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := cmdutil.ReadConfigFile(strings.NewReader("a: [1, 2]\n"), "-"); err == nil || err.Error() != `config file "-": "a" must be a single value` {
		t.Errorf("a list: %v", err)
	}
}
