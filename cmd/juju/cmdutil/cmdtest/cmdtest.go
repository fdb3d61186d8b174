// Package cmdtest holds the helpers every command's flag tests share.
package cmdtest

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// Execute runs cmd with the space-separated args, discarding cobra's own output.
func Execute(cmd *cobra.Command, args string) error {
	cmd.SetArgs(strings.Fields(args))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

// CheckErr fails unless err is nil and want is "", or err's message is want; usage says whether
// it must be a *cmdutil.FlagError (exit code 2).
func CheckErr(t *testing.T, err error, want string, usage bool) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	var fe *cmdutil.FlagError
	if usage != errors.As(err, &fe) {
		t.Errorf("usage error = %v, want %v", !usage, usage)
	}
}
