package application

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdConfig(t *testing.T) {
	dir := t.TempDir()
	valueFile := filepath.Join(dir, "motd.txt")
	os.WriteFile(valueFile, []byte("hello\nworld\n"), 0o644)
	nested := filepath.Join(dir, "nested.yaml")
	os.WriteFile(nested, []byte("mysql:\n  port: 3307\n  debug: true\n  title: db\n"), 0o644)
	flat := filepath.Join(dir, "flat.yaml")
	os.WriteFile(flat, []byte("port: 3308\nratio: 0.5\n"), 0o644)
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, []byte("wordpress:\n  port: 1\n"), 0o644)

	tests := []struct {
		args, wantErr string
		key           string
		values        map[string]string
		reset         []string
		format        output.Format
		usage         bool
	}{
		{args: "mysql", values: map[string]string{}, format: output.YAML},
		{args: "mysql --format json", values: map[string]string{}, format: output.JSON},
		{args: "mysql port", key: "port", values: map[string]string{}, format: output.YAML},
		{args: "mysql port=3307 debug=true title=a=b", values: map[string]string{"port": "3307", "debug": "true", "title": "a=b"}, format: output.YAML},
		{args: "mysql empty=", values: map[string]string{"empty": ""}, format: output.YAML},
		{args: "mysql motd=@" + valueFile, values: map[string]string{"motd": "hello\nworld\n"}, format: output.YAML},
		{args: "mysql --reset port,debug --reset title", values: map[string]string{}, reset: []string{"port", "debug", "title"}, format: output.YAML},
		{args: "mysql --reset port debug=false", values: map[string]string{"debug": "false"}, reset: []string{"port"}, format: output.YAML},
		{args: "mysql --file " + nested + " title=override", values: map[string]string{"port": "3307", "debug": "true", "title": "override"}, format: output.YAML},
		{args: "mysql --file " + flat, values: map[string]string{"port": "3308", "ratio": "0.5"}, format: output.YAML},
		{args: "", wantErr: "no application name specified", usage: true},
		{args: "MySQL", wantErr: `invalid application name "MySQL", unexpected uppercase character`, usage: true},
		{args: "mysql port debug", wantErr: "can only retrieve a single value, or all values", usage: true},
		{args: "mysql port debug=true", wantErr: "cannot set and retrieve values simultaneously", usage: true},
		{args: "mysql port --reset debug", wantErr: "cannot reset and retrieve values simultaneously", usage: true},
		{args: "mysql port --file " + flat, wantErr: "cannot set and retrieve values simultaneously", usage: true},
		{args: "mysql port=1 --reset port", wantErr: `cannot set and reset key "port" simultaneously`, usage: true},
		{args: "mysql =1", wantErr: `invalid config value "=1": expected <key>=<value>`, usage: true},
		{args: "mysql --file " + other, wantErr: `config file "` + other + `" has no settings for application "mysql" (only for "wordpress")`},
		{args: "mysql motd=@" + filepath.Join(dir, "missing"), wantErr: `reading the value of "motd": open ` + filepath.Join(dir, "missing") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *configOptions
			cmd := NewCmdConfig(cmdutil.TestFactory(), func(o *configOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, tt.usage)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after an error")
				}
				return
			}
			if got.Application != "mysql" || got.Key != tt.key || !reflect.DeepEqual(got.Values, tt.values) ||
				strings.Join(got.Reset, ",") != strings.Join(tt.reset, ",") || got.Format != tt.format {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeConfig answers GetConfig with a charm's options and records SetConfig requests.
type fakeConfig struct {
	cfg    *jujupb.ApplicationConfig
	getErr error
	setErr error
	sets   []*jujupb.SetConfigRequest
	gets   int
}

func (f *fakeConfig) GetConfig(_ context.Context, model, app string) (*jujupb.ApplicationConfig, error) {
	f.gets++
	if model != "uuid-default" || app != "mysql" {
		return nil, apierr.Errorf(apierr.NotFound, "application %q not found", app)
	}
	return f.cfg, f.getErr
}

func (f *fakeConfig) SetConfig(_ context.Context, req *jujupb.SetConfigRequest) error {
	f.sets = append(f.sets, req)
	return f.setErr
}

func mysqlConfig() *jujupb.ApplicationConfig {
	return &jujupb.ApplicationConfig{Application: "mysql", Charm: "local:mysql-7", Options: []*jujupb.ConfigOption{
		{Name: "port", Type: "int", Description: "Port to listen on", DefaultJson: "3306", ValueJson: "3307", Source: "user"},
		{Name: "debug", Type: "boolean", Description: "Log queries", DefaultJson: "false", ValueJson: "false", Source: "default"},
		{Name: "title", Type: "string", Description: "Banner shown to clients.\nSecond line of the description.", DefaultJson: `"MySQL"`, ValueJson: `"My \"own\" db"`, Source: "user"},
		{Name: "ratio", Type: "float", Description: "Buffer pool share", DefaultJson: "0.75", ValueJson: "0.75", Source: "default"},
		{Name: "admin-password", Type: "string", Description: "Initial password"},
	}, ApplicationOptions: []*jujupb.ConfigOption{
		{Name: "trust", Type: "bool", Description: "Does this application have access to trusted credentials", DefaultJson: "false", ValueJson: "true", Source: "user"},
	}}
}

func TestConfigRun(t *testing.T) {
	tests := []struct {
		name, args string
		fake       *fakeConfig
		wantErr    string
		wantSet    *jujupb.SetConfigRequest
	}{
		{name: "all-yaml", args: "mysql", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "all-json", args: "mysql --format json", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "key-int", args: "mysql port", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "key-string", args: "mysql title", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "key-bool", args: "mysql debug", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "key-float", args: "mysql ratio", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "key-unset", args: "mysql admin-password", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "key-trust", args: "mysql trust", fake: &fakeConfig{cfg: mysqlConfig()}},
		{name: "set-trust", args: "mysql trust=true", fake: &fakeConfig{},
			wantSet: &jujupb.SetConfigRequest{Model: "uuid-default", Application: "mysql", Values: map[string]string{"trust": "true"}}},
		{name: "key-missing", args: "mysql nope", fake: &fakeConfig{cfg: mysqlConfig()},
			wantErr: `key "nope" not found in "mysql" application config or charm settings`},
		{name: "set", args: "mysql port=3308 title=new", fake: &fakeConfig{},
			wantSet: &jujupb.SetConfigRequest{Model: "uuid-default", Application: "mysql", Values: map[string]string{"port": "3308", "title": "new"}}},
		{name: "reset", args: "mysql --reset port,title", fake: &fakeConfig{},
			wantSet: &jujupb.SetConfigRequest{Model: "uuid-default", Application: "mysql", Values: map[string]string{}, Reset_: []string{"port", "title"}}},
		{name: "set-error", args: "mysql port=many", fake: &fakeConfig{setErr: apierr.Errorf(apierr.NotValid, `option "port" expected int, got "many"`)},
			wantErr: `setting config of application "mysql": option "port" expected int, got "many"`,
			wantSet: &jujupb.SetConfigRequest{Model: "uuid-default", Application: "mysql", Values: map[string]string{"port": "many"}}},
		{name: "get-error", args: "wordpress", fake: &fakeConfig{cfg: mysqlConfig()},
			wantErr: `getting config of application "wordpress": application "wordpress" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			cmd := NewCmdConfig(cmdutil.TestFactory(), func(o *configOptions) error {
				o.IO = ios
				o.ResolveModel = testModel
				o.Client = func(context.Context) (configAPI, error) { return tt.fake, nil }
				return configRun(context.Background(), o)
			})
			checkErr(t, execute(cmd, tt.args), tt.wantErr, false)
			if tt.wantSet != nil {
				if len(tt.fake.sets) != 1 || tt.fake.gets != 0 {
					t.Fatalf("calls: %d sets, %d gets", len(tt.fake.sets), tt.fake.gets)
				}
				got := tt.fake.sets[0]
				if got.GetModel() != tt.wantSet.GetModel() || got.GetApplication() != tt.wantSet.GetApplication() ||
					!reflect.DeepEqual(got.GetValues(), tt.wantSet.GetValues()) ||
					strings.Join(got.GetReset_(), ",") != strings.Join(tt.wantSet.GetReset_(), ",") {
					t.Errorf("set request = %v, want %v", got, tt.wantSet)
				}
			} else if len(tt.fake.sets) != 0 {
				t.Errorf("unexpected set: %v", tt.fake.sets)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut.String())
			}
			golden.Assert(t, out.String(), "config/"+tt.name+".stdout.golden")
		})
	}
}

func TestConfigOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	ios, out, _ := output.TestStreams()
	cmd := NewCmdConfig(cmdutil.TestFactory(), func(o *configOptions) error {
		o.IO = ios
		o.ResolveModel = testModel
		o.Client = func(context.Context) (configAPI, error) { return &fakeConfig{cfg: mysqlConfig()}, nil }
		return configRun(context.Background(), o)
	})
	checkErr(t, execute(cmd, "mysql port -o "+path), "", false)
	if b, err := os.ReadFile(path); err != nil || string(b) != "3307\n" || out.Len() != 0 {
		t.Errorf("file = %q %v, stdout %q", b, err, out.String())
	}
}

func TestDecodeConfigValue(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"", nil},
		{"8080", int64(8080)},
		{"0.5", 0.5},
		{"1e21", 1e21},
		{"true", true},
		{`"text"`, "text"},
	}
	for _, tt := range tests {
		got, err := decodeConfigValue(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeConfigValue(%q) = %#v %v, want %#v", tt.in, got, err, tt.want)
		}
	}
	if _, err := decodeConfigValue("{"); err == nil {
		t.Error("bad JSON accepted")
	}
	if _, err := newConfigView(&jujupb.ApplicationConfig{Options: []*jujupb.ConfigOption{{Name: "x", ValueJson: "nope"}}}); err == nil ||
		!strings.Contains(err.Error(), `controller sent a bad value for "x"`) {
		t.Errorf("bad value: %v", err)
	}
}
