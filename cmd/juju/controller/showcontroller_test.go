package controller

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// testCACert is a real certificate, so that show-controller's ca-fingerprint is known:
// openssl x509 -noout -fingerprint -sha256 says 37:70:AF:E0:...:C3:BE.
const testCACert = `-----BEGIN CERTIFICATE-----
MIIBhjCCASugAwIBAgIUHEyVDJBW80aIBaGbIwsOXiY/CsowCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwManVqdS10ZXN0LWNhMCAXDTI2MTEyNDE1MjgyNFoYDzIxMjYx
MDMxMTUyODI0WjAXMRUwEwYDVQQDDAxqdWp1LXRlc3QtY2EwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAATg44O0tlr5jK0PHhJ6xwuHyTY97XSmi03lmw3qTMK1V1TD
415ogQnvVMn0pj3Xxs0Dk/zonZQmO/K3M8f5vsfho1MwUTAdBgNVHQ4EFgQUdAaV
jKtIB3UZVOizuc866TVT+5gwHwYDVR0jBBgwFoAUdAaVjKtIB3UZVOizuc866TVT
+5gwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAvGvA3IdPNZ6A
NQXkmDOBXT/08cRuHM8tLI2nCa2zqY8CIQDCLFwMLu7sC+HBf31qeH1UBz+EWcQ1
zgnP/H9fOhy6zA==
-----END CERTIFICATE-----
`

func TestCAFingerprint(t *testing.T) {
	const want = "37:70:AF:E0:A6:4D:CD:F0:10:C3:A2:C4:10:80:01:B0:8F:D5:22:6E:15:24:25:6A:E7:C1:0A:4B:0D:B3:C3:BE"
	if got := caFingerprint(testCACert); got != want {
		t.Errorf("caFingerprint = %s, want %s", got, want)
	}
	if got := caFingerprint("not a certificate"); got != "" {
		t.Errorf("caFingerprint of junk = %q", got)
	}
}

func TestNewCmdShowController(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantNames     []string
		wantFormat    output.Format
		wantPassword  bool
	}{
		{args: "", wantFormat: output.YAML},
		{args: "local other --format json --show-password", wantNames: []string{"local", "other"}, wantFormat: output.JSON, wantPassword: true},
		{args: "--format tabular", wantErr: `invalid argument "tabular" for "--format" flag: invalid value "tabular" for --format: expected one of json, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showControllerOptions
			cmd := NewCmdShowController(cmdutil.TestFactory(), func(o *showControllerOptions) error { got = o; return nil })
			err := execute(cmd, tt.args)
			if tt.wantErr != "" {
				if err == nil || got != nil {
					t.Errorf("err = %v, runF called %v", err, got != nil)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Names, tt.wantNames) || got.Format != tt.wantFormat || got.ShowPassword != tt.wantPassword {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeInfo is a controller answering show-controller and controllers --refresh.
type fakeInfo struct {
	models     []*jujupb.Model
	modelsErr  error
	members    []*jujupb.ControllerMember
	degraded   string
	membersErr error
	version    string
}

func (f *fakeInfo) ListModels(context.Context) ([]*jujupb.Model, error) { return f.models, f.modelsErr }

func (f *fakeInfo) ControllerMembers(context.Context) ([]*jujupb.ControllerMember, string, error) {
	return f.members, f.degraded, f.membersErr
}

func (f *fakeInfo) LoginVersion() *jujupb.VersionResponse {
	return &jujupb.VersionResponse{Version: f.version}
}

func twoModels() []*jujupb.Model {
	return []*jujupb.Model{
		{Name: "controller", Uuid: "c-uuid", MachineCount: 1},
		{Name: "default", Uuid: "d-uuid", MachineCount: 2},
		{Name: "empty", Uuid: "e-uuid"},
	}
}

func TestShowControllerRun(t *testing.T) {
	degraded := threeMembers()
	degraded[0].Health, degraded[0].Message, degraded[0].StoreRole = "down", "no heartbeat for 12s", ""
	degraded[2].Health, degraded[2].Message, degraded[2].StoreRole = "down", "no heartbeat for 12s", ""
	degraded[1].Health, degraded[1].StoreRole = "no-quorum", "follower"
	joining := threeMembers()
	joining[2].Health, joining[2].StoreRole, joining[2].Message = "starting", "learner", "catching up with the store"
	tests := []struct {
		name         string
		info         *fakeInfo
		showPassword bool
		wantCounts   [2]int
	}{
		{name: "one-member", info: &fakeInfo{models: twoModels(), version: "3.6.13", members: []*jujupb.ControllerMember{
			{Id: "0", ApiAddress: "127.0.0.1:17070", StoreRole: "leader", Health: "healthy", Workers: true, Serving: true, Pid: 4100, Version: "3.6.13"},
		}}, wantCounts: [2]int{1, 1}},
		{name: "ha", info: &fakeInfo{models: twoModels(), version: "3.6.12", members: threeMembers()}, showPassword: true, wantCounts: [2]int{3, 3}},
		{name: "joining", info: &fakeInfo{models: twoModels(), version: "3.6.12", members: joining}, wantCounts: [2]int{2, 3}},
		// No quorum: the models cannot be read, the members still say why.
		{name: "degraded", info: &fakeInfo{modelsErr: apierr.Errorf(apierr.Unavailable, "the store has no quorum"), version: "3.6.12",
			members: degraded, degraded: "2 of 3 controller members are down: the store has no quorum"}, wantCounts: [2]int{1, 1}},
	}
	for _, tt := range tests {
		for _, f := range []output.Format{output.YAML, output.JSON} {
			t.Run(tt.name+"."+string(f), func(t *testing.T) {
				ios, out, errOut := output.TestStreams()
				store := haStore(t)
				opts := &showControllerOptions{IO: ios, Store: store, Config: localConfig, Format: f, ShowPassword: tt.showPassword,
					Connect: func(_ context.Context, name string) (controllerInfoAPI, error) {
						if name != "local" {
							t.Errorf("connected to %q", name)
						}
						return tt.info, nil
					}}
				if err := showControllerRun(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, out.String(), "show-controller/"+tt.name+"."+string(f)+".golden")
				if errOut.Len() != 0 {
					t.Errorf("stderr = %q", errOut)
				}
				d, _ := store.ControllerByName("local")
				got := [2]int{d.ActiveControllerMachineCount, d.ControllerMachineCount}
				if tt.info.modelsErr == nil && got != tt.wantCounts {
					t.Errorf("store counts %v, want %v", got, tt.wantCounts)
				}
				if tt.info.modelsErr == nil && (d.AgentVersion != tt.info.version || d.MachineCount == nil || *d.MachineCount != 3) {
					t.Errorf("store: agent-version %q, machine-count %v", d.AgentVersion, d.MachineCount)
				}
				if tt.info.modelsErr != nil && (got != [2]int{1, 1} || d.AgentVersion != "3.6.12") {
					t.Errorf("the store changed although the controller could not say everything: %+v", d)
				}
			})
		}
	}
}

func TestShowControllerRunErrors(t *testing.T) {
	ios, _, _ := output.TestStreams()
	store := haStore(t)
	connect := func(context.Context, string) (controllerInfoAPI, error) {
		return nil, apierr.Errorf(apierr.Unavailable, "cannot connect to controller at 127.0.0.1:17070: connection refused")
	}
	opts := &showControllerOptions{IO: ios, Store: store, Config: localConfig, Format: output.YAML, Connect: connect}
	err := showControllerRun(context.Background(), opts)
	checkErr(t, err, "opening API connection: cannot connect to controller at 127.0.0.1:17070: connection refused", false)

	opts.Names = []string{"nope"}
	err = showControllerRun(context.Background(), opts)
	if !errors.Is(err, apierr.NotFound) || err.Error() != `controller "nope" not found` {
		t.Errorf("unknown controller: %v", err)
	}

	opts.Names = nil
	opts.Config = func() (*cmdutil.Config, error) { return &cmdutil.Config{}, nil }
	checkErr(t, showControllerRun(context.Background(), opts), "there is no active controller", false)
}

func TestHAStatus(t *testing.T) {
	for _, tt := range []struct {
		health, role, want string
	}{
		{"healthy", "leader", "ha-enabled"},
		{"healthy", "follower", "ha-enabled"},
		{"healthy", "", "ha-enabled"}, // an external store: no etcd role
		{"no-quorum", "follower", "ha-enabled"},
		{"starting", "", "ha-pending"},
		{"healthy", "learner", "ha-pending"},
		{"down", "follower", "down, lost connection"},
	} {
		if got := haStatus(&jujupb.ControllerMember{Health: tt.health, StoreRole: tt.role}); got != tt.want {
			t.Errorf("haStatus(%s, %s) = %q, want %q", tt.health, tt.role, got, tt.want)
		}
	}
}
