package model

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdShowModel(t *testing.T) {
	for _, tc := range []struct {
		args, model string
		format      output.Format
		err         string
		// notUsage: a --format error becomes a usage error at the root, not here.
		notUsage bool
	}{
		{args: "", format: output.YAML},
		{args: "test --format json", model: "test", format: output.JSON},
		{args: "local:admin/test", model: "local:admin/test", format: output.YAML},
		{args: "a b", err: `unrecognized args: ["b"]`},
		{args: "local:", err: `"local:" is not a valid model name`},
		{args: "--format tabular", err: `invalid value "tabular" for --format: expected one of json, yaml`, notUsage: true},
	} {
		var got *showModelOptions
		cmd := NewCmdShowModel(cmdutil.TestFactory(), func(o *showModelOptions) error { got = o; return nil })
		err := execute(cmd, tc.args)
		if tc.err != "" {
			checkErr(t, err, tc.err, !tc.notUsage)
			continue
		}
		if err != nil || got.Model != tc.model || got.Format != tc.format {
			t.Errorf("%q: %+v %v", tc.args, got, err)
		}
	}
}

type fakeShowModelAPI struct {
	model    *jujupb.Model
	machines []*jujupb.MachineStatus
	err      error
}

func (f *fakeShowModelAPI) GetModel(_ context.Context, ref string) (*jujupb.Model, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.model, nil
}

func (f *fakeShowModelAPI) FullStatus(context.Context, string, []string) (*jujupb.FullStatusResponse, error) {
	return &jujupb.FullStatusResponse{Machines: f.machines}, nil
}

var showModelFixture = &fakeShowModelAPI{
	model: &jujupb.Model{Name: "default", Uuid: "uuid-default", Owner: "admin", Life: "alive", Cloud: "localhost", Region: "localhost",
		Type: "iaas", AgentVersion: "3.6.12", Status: &jujupb.StatusInfo{Status: "available", Since: 1735787045000000000}},
	machines: []*jujupb.MachineStatus{
		{Id: "0", Hardware: "arch=amd64 cores=4 mem=16000M root-disk=100000M"},
		{Id: "1", Hardware: "arch=amd64 cores=2 mem=8000M"},
		{Id: "2"},
	},
}

// showModelOutput runs show-model and returns its stdout.
func showModelOutput(t *testing.T, api *fakeShowModelAPI, format output.Format) string {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts := &showModelOptions{
		IO: ios, Store: seededStore(t), Format: format,
		Lookup: func(context.Context, string) (*cmdutil.ModelRef, error) { return testModel(context.Background()) },
		Client: func(_ context.Context, controller string) (showModelAPI, error) {
			if controller != "local" {
				t.Errorf("connected to %q", controller)
			}
			return api, nil
		},
		Now: func() time.Time {
			return time.Unix(0, showModelFixture.model.GetStatus().GetSince()).Add(2*time.Minute + 30*time.Second)
		},
	}
	if err := showModelRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut.String())
	}
	return out.String()
}

// TestShowModelGolden keeps Juju's shape: a map from the short name to ModelInfo.
func TestShowModelGolden(t *testing.T) {
	for _, f := range []output.Format{output.YAML, output.JSON} {
		golden.Assert(t, showModelOutput(t, showModelFixture, f), "show-model/default."+string(f)+".golden")
	}
}

func TestFriendlyDuration(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for ago, want := range map[time.Duration]string{
		0:                             "just now",
		1999 * time.Millisecond:       "just now",
		2 * time.Second:               "2 seconds ago",
		59 * time.Second:              "59 seconds ago",
		time.Minute + 59*time.Second:  "1 minute ago",
		2 * time.Minute:               "2 minutes ago",
		time.Hour + 30*time.Minute:    "1 hour ago",
		23*time.Hour + 59*time.Minute: "23 hours ago",
		24 * time.Hour:                "2025-01-01",
		40*24*time.Hour + 4*time.Hour: "2024-11-22",
		-5 * time.Second:              "just now", // a controller clock ahead of ours
	} {
		if got := friendlyDuration(now.Add(-ago), now); got != want {
			t.Errorf("%v ago: %q, want %q", ago, got, want)
		}
	}
}

func TestShowModelNotFound(t *testing.T) {
	ios, out, _ := output.TestStreams()
	opts := &showModelOptions{
		IO: ios, Store: seededStore(t), Format: output.JSON,
		Lookup: func(context.Context, string) (*cmdutil.ModelRef, error) { return testModel(context.Background()) },
		Client: func(context.Context, string) (showModelAPI, error) {
			return &fakeShowModelAPI{err: apierr.Errorf(apierr.NotFound, `model "uuid-default" not found`)}, nil
		},
	}
	err := showModelRun(context.Background(), opts)
	if err == nil || err.Error() != "model local:admin/default not found" || out.Len() != 0 {
		t.Errorf("err = %v, stdout %q", err, out.String())
	}
}

// TestJubilantParsesShowModel runs jubilant's own ModelInfo parser on show-model's JSON, when
// Python and jubilant are at hand.
func TestJubilantParsesShowModel(t *testing.T) {
	jubilant := jubilantDir(t)
	stdout := showModelOutput(t, showModelFixture, output.JSON)
	script := `import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("modeltypes", sys.argv[1] + "/jubilant/modeltypes.py")
m = importlib.util.module_from_spec(spec)
sys.modules["modeltypes"] = m
spec.loader.exec_module(m)
info = m.ModelInfo._from_dict(next(iter(json.loads(sys.argv[2]).values())))
print(info.name, info.short_name, info.controller_name, info.is_controller, info.status.current, sorted(info.machines), info.agent_version)`
	out, err := exec.Command("python3", "-c", script, jubilant, stdout).CombinedOutput()
	if err != nil {
		t.Fatalf("jubilant cannot parse %s: %v\n%s", stdout, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "admin/default default local False available ['0', '1', '2'] 3.6.12" {
		t.Errorf("jubilant parsed: %s", got)
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc["default"]["controller-uuid"] != "ctrl" {
		t.Errorf("document %s: %v", stdout, err)
	}
}

// jubilantDir finds jubilant 1.12 in ../shared/thirdparty (or $JUJU_THIRDPARTY) and python3,
// or skips.
func jubilantDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("JUJU_THIRDPARTY")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "thirdparty")
	}
	jubilant := filepath.Join(dir, "jubilant-1.12.0")
	if _, err := os.Stat(filepath.Join(jubilant, "jubilant", "modeltypes.py")); err != nil {
		t.Skipf("jubilant not found under %s", dir)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	abs, err := filepath.Abs(jubilant)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
