package controller

import (
	"context"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdWhoami(t *testing.T) {
	var got *whoamiOptions
	cmd := NewCmdWhoami(cmdutil.TestFactory(), func(o *whoamiOptions) error { got = o; return nil })
	if err := execute(cmd, "--format json -o out.json"); err != nil {
		t.Fatal(err)
	}
	if got.Format != output.JSON || got.Output != "out.json" {
		t.Errorf("opts = %+v", got)
	}
	cmd = NewCmdWhoami(cmdutil.TestFactory(), func(*whoamiOptions) error { return nil })
	checkErr(t, execute(cmd, "extra"), `unrecognized args: ["extra"]`, true)
	cmd = NewCmdWhoami(cmdutil.TestFactory(), func(*whoamiOptions) error { return nil })
	checkErr(t, execute(cmd, "--format xml"), `invalid value "xml" for --format: expected one of json, tabular, yaml`, false)
}

func whoamiStore(t *testing.T) *cmdutil.Store {
	t.Helper()
	store := cmdutil.NewStore(t.TempDir())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(store.AddController("local", cmdutil.ControllerDetails{UUID: "u", APIEndpoints: []string{"127.0.0.1:1"}}))
	must(store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin", Password: "pw"}))
	must(store.UpdateModel("local", "default", cmdutil.ModelDetails{UUID: "d"}))
	must(store.AddController("nobody", cmdutil.ControllerDetails{UUID: "n", APIEndpoints: []string{"127.0.0.1:2"}}))
	return store
}

func TestWhoamiRun(t *testing.T) {
	store := whoamiStore(t)
	tests := []struct {
		name, controller, model string
		format                  output.Format
		wantErr                 string
	}{
		{name: "current", controller: "local", model: "default", format: output.Tabular},
		{name: "current", controller: "local", model: "default", format: output.JSON},
		{name: "current", controller: "local", model: "default", format: output.YAML},
		{name: "no-model", controller: "local", format: output.Tabular},
		{name: "no-model", controller: "local", format: output.JSON},
		{name: "no-controller", format: output.Tabular},
		{name: "no-controller", format: output.JSON},
		{name: "no-account", controller: "nobody", model: "default", format: output.Tabular},
		{name: "unknown-controller", controller: "gone", format: output.Tabular, wantErr: `controller "gone" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name+"-"+string(tt.format), func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			err := whoamiRun(context.Background(), &whoamiOptions{
				IO: ios, Store: store, Format: tt.format,
				Config: func() (*cmdutil.Config, error) {
					return &cmdutil.Config{Controller: tt.controller, Model: tt.model}, nil
				},
			})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "whoami/"+tt.name+"."+string(tt.format)+".golden")
			golden.Assert(t, errOut.String(), "whoami/"+tt.name+"-"+string(tt.format)+".stderr.golden")
		})
	}
}
