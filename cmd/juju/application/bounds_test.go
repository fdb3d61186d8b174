package application

import (
	"strings"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/limits"
	"github.com/jujuclone/juju/core/names"
)

// Bad sizes and names are usage errors found before anything is sent: -n beyond the
// controller's bound per call (or beyond int32, which the wire would wrap), and application
// names too long to become a unit's directory.
func TestUnitBoundsAndNames(t *testing.T) {
	long := "a" + strings.Repeat("b", names.MaxApplicationLength)
	longErr := `invalid application name "abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"...: 201 characters, at most 200`
	fits := "a" + strings.Repeat("b", names.MaxApplicationLength-1)
	tests := []struct {
		args, wantErr string
	}{
		{args: "-n 10001", wantErr: "--num-units 10001: at most 10000 units per call (add more with further add-unit calls)"},
		{args: "-n 100000000", wantErr: "--num-units 100000000: at most 10000 units per call (add more with further add-unit calls)"},
		{args: "-n 4294967297", wantErr: "--num-units 4294967297: at most 10000 units per call (add more with further add-unit calls)"},
		{args: "-n -1", wantErr: "--num-units must be a positive integer"},
		{args: "-n 10000"},
		{args: "--name " + long, wantErr: longErr},
		{args: "--name " + fits},
	}
	if limits.MaxUnitsPerCall != 10000 {
		t.Fatalf("the table assumes 10000 units per call, not %d", limits.MaxUnitsPerCall)
	}
	for _, cmdName := range []string{"deploy", "add-unit"} {
		for _, tt := range tests {
			t.Run(cmdName+" "+tt.args[:min(len(tt.args), 30)], func(t *testing.T) {
				app := "mysql"
				args := tt.args
				if rest, ok := strings.CutPrefix(args, "--name "); ok {
					app, args = rest, ""
				}
				ran := false
				var cmdArgs string
				f := cmdutil.TestFactory()
				var err error
				if cmdName == "deploy" {
					cmdArgs = strings.TrimSpace("./mysql " + app + " " + args)
					err = execute(NewCmdDeploy(f, func(*deployOptions) error { ran = true; return nil }), cmdArgs)
				} else {
					cmdArgs = strings.TrimSpace(app + " " + args)
					err = execute(NewCmdAddUnit(f, func(*addUnitOptions) error { ran = true; return nil }), cmdArgs)
				}
				checkErr(t, err, tt.wantErr, true)
				if ran != (tt.wantErr == "") {
					t.Errorf("ran = %v", ran)
				}
			})
		}
	}
}

// A charm whose name is too long for an application name is refused before anything is sent.
func TestDeployRunRefusesLongCharmName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	name := "c" + strings.Repeat("x", names.MaxApplicationLength)
	writeCharm(t, dir, name, false, "ubuntu@22.04")
	fake := &fakeDeployAPI{}
	_, err := deployWith(t, fake, "", "./"+name)
	want := `charm name cannot be used as an application name: invalid application name "cxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"...: 201 characters, at most 200; give one as the second argument`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	if len(fake.calls) != 0 {
		t.Errorf("calls = %v", fake.calls)
	}
}
