package controller

import (
	"context"
	"errors"
	"slices"
	"strings"
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
	if got.Format != output.YAML || got.Output != "out.yaml" || got.Refresh {
		t.Errorf("opts = %+v", got)
	}
	if err := execute(NewCmdControllers(cmdutil.TestFactory(), func(o *controllersOptions) error { got = o; return nil }), "--refresh"); err != nil || !got.Refresh {
		t.Errorf("--refresh: %v, %+v", err, got)
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
	// local has three members, one of them down; staging one (bootstrap's count).
	machines := 4
	_ = store.ModifyController("local", func(d *cmdutil.ControllerDetails) bool {
		d.ControllerMachineCount, d.ActiveControllerMachineCount, d.MachineCount = 3, 2, &machines
		return true
	})
	_ = store.ModifyController("staging", func(d *cmdutil.ControllerDetails) bool {
		d.ControllerMachineCount, d.ActiveControllerMachineCount = 1, 1
		return true
	})

	for _, f := range []output.Format{output.Tabular, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			if err := controllersRun(context.Background(), &controllersOptions{IO: ios, Store: store, Format: f}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "controllers/two."+string(f)+".golden")
			wantErr := ""
			if f == output.Tabular {
				wantErr = "Use --refresh option with this command to see the latest information.\n"
			}
			if errOut.String() != wantErr {
				t.Errorf("stderr = %q, want %q", errOut, wantErr)
			}
		})
	}
}

// --refresh asks every controller for its models and members and caches the counts; one that
// cannot be reached is reported and keeps its last known values.
func TestControllersRunRefresh(t *testing.T) {
	store := haStore(t)
	if err := store.AddController("down", cmdutil.ControllerDetails{UUID: "down-uuid", APIEndpoints: []string{"127.0.0.1:1"}, CACert: testCACert,
		Cloud: "localhost", ControllerMachineCount: 1, ActiveControllerMachineCount: 1}); err != nil {
		t.Fatal(err)
	}
	members := threeMembers()
	members[2].Health = "down"
	info := &fakeInfo{models: twoModels(), members: members, version: "3.6.13"}
	var asked []string
	connect := func(_ context.Context, name string) (controllerInfoAPI, error) {
		asked = append(asked, name)
		if name == "down" {
			return nil, errors.New("cannot connect to controller at 127.0.0.1:1: connection refused")
		}
		return info, nil
	}
	ios, out, errOut := output.TestStreams()
	if err := controllersRun(context.Background(), &controllersOptions{IO: ios, Store: store, Format: output.Tabular, Refresh: true, Connect: connect}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"down", "local"}) {
		t.Errorf("connected to %q", asked)
	}
	golden.Assert(t, out.String(), "controllers/refresh.tabular.golden")
	if want := "error connecting to api for \"down\": cannot connect to controller at 127.0.0.1:1: connection refused\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
	models, _, _ := store.AllModels("local")
	if len(models) != 3 {
		t.Errorf("models cached: %v", models)
	}

	// A controller that answers only in part keeps what the store knew.
	info.membersErr = errors.New("boom")
	ios, _, errOut = output.TestStreams()
	if err := controllersRun(context.Background(), &controllersOptions{IO: ios, Store: store, Format: output.JSON, Refresh: true, Connect: connect}); err != nil {
		t.Fatal(err)
	}
	if want := "error updating cached details for \"local\": listing controller members: boom\n"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr = %q, want a line %q", errOut, want)
	}
	if d, _ := store.ControllerByName("local"); d.ControllerMachineCount != 3 || d.ActiveControllerMachineCount != 2 {
		t.Errorf("counts changed: %d/%d", d.ActiveControllerMachineCount, d.ControllerMachineCount)
	}
}

func TestHAColumn(t *testing.T) {
	for _, tt := range []struct {
		m    *controllerMachines
		want string
	}{
		{nil, "-"},
		{&controllerMachines{}, "-"},
		{&controllerMachines{Active: 1, Total: 1}, "none"},
		{&controllerMachines{Active: 0, Total: 1}, "none"},
		{&controllerMachines{Active: 3, Total: 3}, "3"},
		{&controllerMachines{Active: 1, Total: 3}, "1/3"},
	} {
		if got := haColumn(tt.m); got != tt.want {
			t.Errorf("haColumn(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

func TestControllersRunEmpty(t *testing.T) {
	ios, _, _ := output.TestStreams()
	err := controllersRun(context.Background(), &controllersOptions{IO: ios, Store: cmdutil.NewStore(t.TempDir()), Format: output.Tabular})
	if err != cmdutil.ErrNoControllers {
		t.Errorf("err = %v, want ErrNoControllers", err)
	}
}
