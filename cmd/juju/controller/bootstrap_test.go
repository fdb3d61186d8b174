package controller

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdBootstrap(t *testing.T) {
	tests := []struct {
		args                string
		wantCloud, wantName string
		wantPort            int
		wantTimeout         time.Duration
		wantNoSwitch        bool
		wantErr             string
	}{
		{args: "localhost ci --no-switch", wantCloud: "localhost", wantName: "ci", wantNoSwitch: true},
		{args: "", wantCloud: "localhost", wantName: "local", wantTimeout: 30 * time.Second},
		{args: "--timeout 2m", wantCloud: "localhost", wantName: "local", wantTimeout: 2 * time.Minute},
		{args: "--timeout 0s", wantErr: "--timeout must be positive"},
		{args: "localhost dev --api-port 17070", wantCloud: "localhost", wantName: "dev", wantPort: 17070},
		{args: "aws", wantErr: `unknown cloud "aws"; only "localhost" is supported`},
		{args: "localhost bad!name", wantErr: `controller-name value must be a valid controller name (lowercase or digit with non-leading hyphen), got "bad!name"`},
		{args: "localhost Bad_Name", wantErr: `controller-name value must be a valid controller name (lowercase or digit with non-leading hyphen), got "Bad_Name"`},
		{args: "localhost a b", wantErr: `unrecognized args: ["b"]`},
		{args: "--api-port 70000", wantErr: "--api-port must be between 0 and 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *bootstrapOptions
			cmd := NewCmdBootstrap(cmdutil.TestFactory(), func(o *bootstrapOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			checkErr(t, err, tt.wantErr, true)
			if tt.wantErr != "" {
				return
			}
			if got.Cloud != tt.wantCloud || got.Name != tt.wantName || got.APIPort != tt.wantPort || got.NoSwitch != tt.wantNoSwitch ||
				tt.wantTimeout != 0 && got.Timeout != tt.wantTimeout {
				t.Errorf("opts = %s %s %d %s", got.Cloud, got.Name, got.APIPort, got.Timeout)
			}
		})
	}
}

// --model-default: key=value or a YAML file, later ones winning, values in canonical form,
// checked as model configuration before any controller starts.
func TestNewCmdBootstrapModelDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "defaults.yaml")
	_ = os.WriteFile(file, []byte("extra-info: from-file\nautomatically-retry-hooks: true\n"), 0o600)
	for _, tc := range []struct {
		args string
		want map[string]string
		err  string
	}{
		{args: "", want: nil},
		{args: "--model-default automatically-retry-hooks=F --model-default update-status-hook-interval=1m",
			want: map[string]string{"automatically-retry-hooks": "false", "update-status-hook-interval": "1m"}},
		{args: "--model-default " + file + " --model-default automatically-retry-hooks=false",
			want: map[string]string{"extra-info": "from-file", "automatically-retry-hooks": "false"}},
		{args: "--model-default automatically-retry-hooks=maybe", err: `--model-default: automatically-retry-hooks: expected bool, got string("maybe")`},
		{args: "--model-default no-such=1", err: `--model-default: key "no-such" is not defined in the current model configuration: possible misspelling`},
		{args: "--model-default agent-version=1.0.0", err: `--model-default: "agent-version" cannot be set: it is the Juju version this controller implements (` + version.Juju + ")"},
		{args: "--model-default =x", err: `--model-default: expected "key=value" or a file, got "=x"`},
		{args: "--model-default " + filepath.Join(dir, "missing.yaml"), err: "--model-default: reading config file: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
	} {
		var got *bootstrapOptions
		cmd := NewCmdBootstrap(cmdutil.TestFactory(), func(o *bootstrapOptions) error { got = o; return nil })
		err := execute(cmd, tc.args)
		checkErr(t, err, tc.err, true)
		if tc.err == "" && !maps.Equal(got.ModelDefaults, tc.want) {
			t.Errorf("%s: model defaults %v, want %v", tc.args, got.ModelDefaults, tc.want)
		}
	}
	// jujud is given them, sorted, as --model-default key=value.
	j := &fakeJujud{}
	opts, _ := newBootstrapOpts(t, j)
	opts.ModelDefaults = map[string]string{"update-status-hook-interval": "1m", "automatically-retry-hooks": "false"}
	if err := bootstrapRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(j.args, " "); !strings.HasSuffix(got, " --model-default automatically-retry-hooks=false --model-default update-status-hook-interval=1m") {
		t.Errorf("jujud args %q", got)
	}
}

type fakeVersioner struct{ closed bool }

func (f *fakeVersioner) Version(context.Context) (*jujupb.VersionResponse, error) {
	return &jujupb.VersionResponse{Version: "0.1.0", ControllerUuid: "ctrl-uuid"}, nil
}
func (f *fakeVersioner) Close() error { f.closed = true; return nil }

// fakeJujud "starts" by writing bootstrap.json (or a log and an exit, when fail is set).
type fakeJujud struct {
	args    []string
	fail    bool
	dialled client.Config
}

func (j *fakeJujud) launch(bin string, args []string, logPath string) (*process, error) {
	j.args = append([]string{bin}, args...)
	exited := make(chan error, 1)
	dir := args[1]
	if j.fail {
		_ = os.WriteFile(logPath, []byte("starting\nlisten tcp 127.0.0.1:17070: bind: address already in use\n"), 0o600)
		exited <- errors.New("exit status 1")
		return &process{PID: 42, Exited: exited, Stop: func() {}}, nil
	}
	info := map[string]any{
		"controller_uuid": "ctrl-uuid",
		"api_addr":        "127.0.0.1:17070",
		"ca_cert":         "-----BEGIN CERTIFICATE-----\n...",
		"admin_tag":       "user-admin",
		"admin_password":  "sekrit",
		"pid":             4242,
		"models": []map[string]string{
			{"name": "controller", "uuid": "uuid-controller"},
			{"name": "default", "uuid": "uuid-default"},
		},
	}
	data, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(dir, bootstrapFile), data, 0o600); err != nil {
		return nil, err
	}
	return &process{PID: 4242, Exited: exited, Stop: func() {}}, nil
}

func newBootstrapOpts(t *testing.T, j *fakeJujud) (*bootstrapOptions, *strings.Builder) {
	t.Helper()
	ios, _, errOut := output.TestStreams()
	_ = errOut
	var stderr strings.Builder
	ios.ErrOut = &stderr
	return &bootstrapOptions{
		IO:        ios,
		Store:     cmdutil.NewStore(t.TempDir()),
		Cloud:     "localhost",
		Name:      "local",
		FindJujud: func() (string, error) { return "/opt/juju/jujud", nil },
		Launch:    j.launch,
		Dial: func(_ context.Context, cfg client.Config) (versioner, error) {
			j.dialled = cfg
			return &fakeVersioner{}, nil
		},
		Poll:    time.Millisecond,
		Timeout: 2 * time.Second,
		Euid:    func() int { return 0 },
	}, &stderr
}

func TestBootstrapRun(t *testing.T) {
	j := &fakeJujud{}
	opts, stderr := newBootstrapOpts(t, j)
	if err := bootstrapRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(opts.Store.Dir, "controllers", "local")
	wantArgs := []string{"/opt/juju/jujud", "--data-dir", dir, "--controller-name", "local", "--api-addr", "127.0.0.1:0"}
	if strings.Join(j.args, " ") != strings.Join(wantArgs, " ") {
		t.Errorf("jujud args = %q, want %q", j.args, wantArgs)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, %v", info.Mode().Perm(), err)
	}
	if j.dialled.Endpoint != "127.0.0.1:17070" || j.dialled.Tag != "user-admin" || j.dialled.Password != "sekrit" {
		t.Errorf("dialled %+v", j.dialled)
	}
	wantErr := `Creating Juju controller "local" on localhost
Bootstrap complete, controller "local" is now available
Initial model "default" added
`
	if stderr.String() != wantErr {
		t.Errorf("stderr = %q, want %q", stderr.String(), wantErr)
	}

	s := opts.Store
	d, err := s.ControllerByName("local")
	if err != nil {
		t.Fatal(err)
	}
	if d.UUID != "ctrl-uuid" || d.APIEndpoints[0] != "127.0.0.1:17070" || d.DataDir != dir || d.AgentVersion != "0.1.0" {
		t.Errorf("controller = %+v", d)
	}
	if pid := controllerPID(d); pid != 4242 {
		t.Errorf("recorded pid = %d", pid)
	}
	if a, err := s.AccountDetails("local"); err != nil || a.User != "admin" || a.Password != "sekrit" {
		t.Errorf("account = %+v, %v", a, err)
	}
	models, current, _ := s.AllModels("local")
	if current != "default" || models["default"].UUID != "uuid-default" || models["controller"].UUID != "uuid-controller" {
		t.Errorf("models = %v current %q", models, current)
	}
	if cur, _ := s.CurrentController(); cur != "local" {
		t.Errorf("current controller = %q", cur)
	}

	// A second bootstrap with the same name is refused before anything starts.
	j2 := &fakeJujud{}
	opts.Launch = j2.launch
	err = bootstrapRun(context.Background(), opts)
	if err == nil || err.Error() != `controller "local" already exists` {
		t.Errorf("second bootstrap = %v", err)
	}
	if j2.args != nil {
		t.Error("jujud started for an existing controller")
	}
}

// --no-switch records the controller, with "default" as its current model, and leaves the
// current controller as it was (jubilant's bootstrap passes it).
func TestBootstrapRunNoSwitch(t *testing.T) {
	opts, _ := newBootstrapOpts(t, &fakeJujud{})
	if err := opts.Store.AddController("old", cmdutil.ControllerDetails{UUID: "old-uuid", APIEndpoints: []string{"127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	if err := opts.Store.SetCurrentController("old"); err != nil {
		t.Fatal(err)
	}
	opts.Name, opts.NoSwitch = "ci", true
	if err := bootstrapRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if cur, _ := opts.Store.CurrentController(); cur != "old" {
		t.Errorf("current controller = %q, want old", cur)
	}
	if _, err := opts.Store.ControllerByName("ci"); err != nil {
		t.Errorf("ci not recorded: %v", err)
	}
	if cur, _ := opts.Store.CurrentModel("ci"); cur != "default" {
		t.Errorf("ci's current model = %q", cur)
	}
}

func TestBootstrapRunJujudExits(t *testing.T) {
	j := &fakeJujud{fail: true}
	opts, _ := newBootstrapOpts(t, j)
	err := bootstrapRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "jujud stopped before the controller was ready (exit status 1)") ||
		!strings.Contains(err.Error(), "bind: address already in use") {
		t.Fatalf("error = %v", err)
	}
	if names, _ := opts.Store.ControllerNames(); len(names) != 0 {
		t.Errorf("failed bootstrap recorded %v", names)
	}
}

func TestBootstrapRunTimeout(t *testing.T) {
	opts, _ := newBootstrapOpts(t, &fakeJujud{})
	stopped := false
	opts.Launch = func(string, []string, string) (*process, error) {
		return &process{PID: 1, Exited: make(chan error), Stop: func() { stopped = true }}, nil
	}
	opts.Timeout = 30 * time.Millisecond
	err := bootstrapRun(context.Background(), opts)
	if err == nil || !strings.HasPrefix(err.Error(), "controller did not start within 30ms") {
		t.Fatalf("error = %v", err)
	}
	if !stopped {
		t.Error("jujud left running after a failed bootstrap")
	}
}
