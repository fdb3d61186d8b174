package controller

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdControllers(t *testing.T) {
	var got *controllersOptions
	cmd := NewCmdControllers(cmdutil.TestFactory(), func(o *controllersOptions) error { got = o; return nil })
	if err := execute(cmd, "--format yaml -o out.yaml"); err != nil {
		t.Fatal(err)
	}
	if got.Format != output.YAML || got.Output != "out.yaml" {
		t.Errorf("opts = %+v", got)
	}
	cmd = NewCmdControllers(cmdutil.TestFactory(), func(*controllersOptions) error { return nil })
	checkErr(t, execute(cmd, "extra"), `unrecognized args: ["extra"]`, true)
}

func TestControllersRun(t *testing.T) {
	store := cmdutil.NewStore(t.TempDir())
	for _, name := range []string{"local", "staging"} {
		_ = store.AddController(name, cmdutil.ControllerDetails{
			UUID:         name + "-uuid",
			APIEndpoints: []string{"127.0.0.1:17070"},
			CACert:       "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
			Cloud:        "localhost",
			Region:       "localhost",
			AgentVersion: "0.1.0",
		})
		_ = store.UpdateAccount(name, cmdutil.AccountDetails{User: "admin", Password: "pw"})
		_ = store.UpdateModel(name, "controller", cmdutil.ModelDetails{UUID: "c"})
		_ = store.UpdateModel(name, "default", cmdutil.ModelDetails{UUID: "d"})
	}
	_ = store.SetCurrentModel("local", "default")
	_ = store.SetCurrentController("local")

	for _, f := range []output.Format{output.Tabular, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			ios, out, _ := output.TestStreams()
			if err := controllersRun(context.Background(), &controllersOptions{IO: ios, Store: store, Format: f}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "controllers/two."+string(f)+".golden")
		})
	}
}

func TestControllersRunEmpty(t *testing.T) {
	ios, _, _ := output.TestStreams()
	err := controllersRun(context.Background(), &controllersOptions{IO: ios, Store: cmdutil.NewStore(t.TempDir()), Format: output.Tabular})
	if err != cmdutil.ErrNoControllers {
		t.Errorf("err = %v, want ErrNoControllers", err)
	}
}
