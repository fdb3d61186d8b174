package version

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdVersion(t *testing.T) {
	cmd := NewCmdVersion(cmdutil.TestFactory(), func(*versionOptions) error { return nil })
	cmd.SetArgs([]string{"extra"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || err.Error() != `unrecognized args: ["extra"]` {
		t.Fatalf("err = %v, want a usage error", err)
	}
}

func TestVersionRun(t *testing.T) {
	ios, out, _ := output.TestStreams()
	if err := versionRun(context.Background(), &versionOptions{IO: ios, Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "1.2.3\n" {
		t.Errorf("output = %q", out.String())
	}
}

// TestVersionGolden keeps the version line scripts read: the version and a newline, nothing on
// stderr.
func TestVersionGolden(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	if err := versionRun(context.Background(), &versionOptions{IO: ios, Version: "0.1.0"}); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, out.String(), "version/plain.stdout.golden")
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q", errOut.String())
	}
}
