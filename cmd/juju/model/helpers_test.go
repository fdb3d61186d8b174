package model

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// execute runs cmd with the space-separated args, discarding cobra's own output.
func execute(cmd *cobra.Command, args string) error {
	cmd.SetArgs(strings.Fields(args))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

// checkErr fails unless err is nil and want is "", or err's message is want; usage says whether
// it must be a *cmdutil.FlagError.
func checkErr(t *testing.T, err error, want string, usage bool) {
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

// seededStore returns a store with controller "local" (user admin), models default (current)
// and controller.
func seededStore(t *testing.T) *cmdutil.Store {
	t.Helper()
	s := cmdutil.NewStore(t.TempDir())
	_ = s.AddController("local", cmdutil.ControllerDetails{UUID: "ctrl", APIEndpoints: []string{"127.0.0.1:17070"}, Cloud: "localhost"})
	_ = s.UpdateAccount("local", cmdutil.AccountDetails{User: "admin", Password: "pw"})
	_ = s.UpdateModel("local", "default", cmdutil.ModelDetails{UUID: "uuid-default", Type: "iaas"})
	_ = s.UpdateModel("local", "controller", cmdutil.ModelDetails{UUID: "uuid-controller", Type: "iaas"})
	_ = s.SetCurrentModel("local", "default")
	_ = s.SetCurrentController("local")
	return s
}

func configOf(ctrl, model string) func() (*cmdutil.Config, error) {
	return func() (*cmdutil.Config, error) { return &cmdutil.Config{Controller: ctrl, Model: model}, nil }
}

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}
