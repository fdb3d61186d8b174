package root

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/output"
)

func runRoot(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	f := cmdutil.TestFactory()
	cmd := NewCmdRoot(f)
	cmd.AddCommand(&cobra.Command{
		Use:  "fail-silently",
		RunE: func(*cobra.Command, []string) error { return cmdutil.ErrSilent },
	})
	code := run(context.Background(), cmd, args, f.IO)
	return code, f.IO.Out.(*bytes.Buffer).String(), f.IO.ErrOut.(*bytes.Buffer).String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "version flag", args: []string{"--version"}, wantStdout: version.Binary() + "\n"},
		{name: "version command", args: []string{"version"}, wantStdout: version.Binary() + "\n"},
		{name: "unknown command", args: []string{"stauts"}, wantCode: 2,
			wantStderr: "ERROR juju: \"stauts\" is not a juju command. See \"juju --help\".\n\nDid you mean:\n\tstatus\n"},
		{name: "unknown command far from any", args: []string{"frobnicate"}, wantCode: 2,
			wantStderr: "ERROR juju: \"frobnicate\" is not a juju command. See \"juju --help\".\n"},
		{name: "unknown flag", args: []string{"deploy", "--x"}, wantCode: 2, wantStderr: "ERROR option provided but not defined: --x\n"},
		{name: "unknown shorthand", args: []string{"add-unit", "-z", "mysql"}, wantCode: 2, wantStderr: "ERROR option provided but not defined: -z\n"},
		{name: "missing value", args: []string{"add-unit", "mysql", "--to"}, wantCode: 2, wantStderr: "ERROR option needs an argument: --to\n"},
		{name: "missing short value", args: []string{"add-unit", "mysql", "-n"}, wantCode: 2, wantStderr: "ERROR option needs an argument: -n\n"},
		{name: "bad int", args: []string{"add-unit", "mysql", "-n", "x"}, wantCode: 2,
			wantStderr: "ERROR invalid value \"x\" for option --num-units: strconv.ParseInt: parsing \"x\": invalid syntax\n"},
		{name: "bad format", args: []string{"controllers", "--format", "xml"}, wantCode: 2,
			wantStderr: "ERROR invalid value \"xml\" for --format: expected one of json, tabular, yaml\n"},
		{name: "usage error from validation", args: []string{"deploy"}, wantCode: 2, wantStderr: "ERROR no charm or bundle specified\n"},
		{name: "arg count", args: []string{"models", "x"}, wantCode: 2, wantStderr: "ERROR unrecognized args: [\"x\"]\n"},
		{name: "run failure", args: []string{"status"}, wantCode: 1, wantStderr: "ERROR no client in tests\n"},
		{name: "silent", args: []string{"fail-silently"}, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runRoot(t, tt.args...)
			if code != tt.wantCode || stdout != tt.wantStdout || stderr != tt.wantStderr {
				t.Errorf("juju %v = %d\nstdout %q\nstderr %q\nwant %d %q %q", tt.args, code, stdout, stderr,
					tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}, {"help"}, {"deploy", "--help"}} {
		code, stdout, stderr := runRoot(t, args...)
		if code != 0 || stdout == "" || stderr != "" {
			t.Errorf("juju %v = %d, stdout %d bytes, stderr %q", args, code, len(stdout), stderr)
		}
	}
}

func TestErrorIsRedOnColourTerminals(t *testing.T) {
	f := cmdutil.TestFactory()
	f.IO.Color = true
	code := run(context.Background(), NewCmdRoot(f), []string{"deploy"}, f.IO)
	want := string(output.Red) + "ERROR\x1b[0m no charm or bundle specified\n"
	if got := f.IO.ErrOut.(*bytes.Buffer).String(); code != 2 || got != want {
		t.Errorf("got %d %q, want %q", code, got, want)
	}
}
