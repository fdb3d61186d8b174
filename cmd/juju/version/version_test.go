package version

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdVersion(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		all     bool
		format  output.Format
		wantErr string
	}{
		{args: nil, format: smart},
		{args: []string{"--all"}, all: true, format: smart},
		{args: []string{"--all", "--format", "json"}, all: true, format: output.JSON},
		{args: []string{"--format", "yaml"}, format: output.YAML},
		{args: []string{"extra"}, wantErr: `unrecognized args: ["extra"]`},
		{args: []string{"--format", "tabular"}, wantErr: `invalid value "tabular" for --format: expected one of json, smart, yaml`},
	} {
		var got *versionOptions
		cmd := NewCmdVersion(cmdutil.TestFactory(), func(o *versionOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%v: err = %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.All != tc.all || got.Format != tc.format {
			t.Errorf("%v: %+v %v", tc.args, got, err)
		}
	}
	var fe *cmdutil.FlagError
	cmd := NewCmdVersion(cmdutil.TestFactory(), nil)
	cmd.SetArgs([]string{"extra"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); !errors.As(err, &fe) {
		t.Errorf("extra argument: %v, want a usage error", err)
	}
}

var fixedDetail = versionDetail{
	Version: "3.6.12-ubuntu-amd64", GitCommit: "0123456789abcdef0123456789abcdef01234567", GitTreeState: "clean",
	Compiler: "gc", GoVersion: "go1.26.0", JujucloneVersion: "0.1.0",
}

// TestVersionGolden keeps what scripts and jubilant read: the version line, and --all in each
// format. Nothing goes to stderr.
func TestVersionGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		all    bool
		format output.Format
	}{
		{"plain.stdout", false, smart},
		{"plain.json", false, output.JSON},
		{"plain.yaml", false, output.YAML},
		{"all.smart", true, smart},
		{"all.json", true, output.JSON},
		{"all.yaml", true, output.YAML},
	} {
		ios, out, errOut := output.TestStreams()
		if err := versionRun(context.Background(), &versionOptions{IO: ios, Detail: fixedDetail, All: tc.all, Format: tc.format}); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, out.String(), "version/"+tc.name+".golden")
		if errOut.Len() != 0 {
			t.Errorf("%s: stderr = %q", tc.name, errOut.String())
		}
	}
}

// TestCurrentDetail: the version is Juju's 3.6 binary version, which jubilant's Version parses
// ("major.minor.patch-release-arch"), and --all names this project's release.
func TestCurrentDetail(t *testing.T) {
	d := currentDetail()
	if !regexp.MustCompile(`^3\.6\.\d+-[^-]+-[^-]+$`).MatchString(d.Version) {
		t.Errorf("version %q", d.Version)
	}
	if d.JujucloneVersion == "" || d.Compiler == "" || d.GoVersion == "" || d.Official {
		t.Errorf("detail %+v", d)
	}
	b, err := json.Marshal(d)
	if err != nil || !strings.Contains(string(b), `"version":"3.6.`) {
		t.Errorf("json %s %v", b, err)
	}
}

// TestJubilantParsesVersion runs jubilant's own Version parser on our --all JSON, when Python
// and jubilant are at hand.
func TestJubilantParsesVersion(t *testing.T) {
	dir := os.Getenv("JUJU_THIRDPARTY")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "thirdparty")
	}
	jubilant := filepath.Join(dir, "jubilant-1.12.0")
	if _, err := os.Stat(filepath.Join(jubilant, "jubilant", "_version.py")); err != nil {
		t.Skipf("jubilant not found under %s", dir)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	b, err := json.Marshal(currentDetail())
	if err != nil {
		t.Fatal(err)
	}
	script := `import json, sys
import importlib.util
spec = importlib.util.spec_from_file_location("jubilant_version", sys.argv[1] + "/jubilant/_version.py")
m = importlib.util.module_from_spec(spec)
sys.modules["jubilant_version"] = m
spec.loader.exec_module(m)
v = m.Version._from_dict(json.loads(sys.argv[2]))
print(v.tuple, v.release, v.arch)`
	out, err := exec.Command("python3", "-c", script, jubilant, string(b)).CombinedOutput()
	if err != nil {
		t.Fatalf("jubilant cannot parse %s: %v\n%s", b, err, out)
	}
	if !strings.HasPrefix(string(out), "(3, 6, ") {
		t.Errorf("jubilant parsed %s as %s", b, out)
	}
}
