package model

import (
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"

	"context"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

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

// Shared helpers, under the short names these tests use.
var (
	execute  = cmdtest.Execute
	checkErr = cmdtest.CheckErr
)
