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

func TestNewCmdEnableHA(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantN         int
		wantFormat    output.Format
	}{
		{args: "", wantN: 0, wantFormat: formatSimple},
		{args: "-n 5", wantN: 5, wantFormat: formatSimple},
		{args: "-n 1 --format json -c local", wantN: 1, wantFormat: output.JSON},
		{args: "-n 3 --format yaml", wantN: 3, wantFormat: output.YAML},
		{args: "-n 2", wantErr: "must specify a number of controllers odd and non-negative"},
		{args: "-n -1", wantErr: "must specify a number of controllers odd and non-negative"},
		{args: "-n 0", wantErr: "-n 0 not valid: leave -n out for the default number of controllers"},
		{args: "extra", wantErr: `unrecognized args: ["extra"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *enableHAOptions
			cmd := NewCmdEnableHA(cmdutil.TestFactory(), func(o *enableHAOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if got.NumMembers != tt.wantN || got.Format != tt.wantFormat {
				t.Errorf("opts = %+v", got)
			}
		})
	}
	cmd := NewCmdEnableHA(cmdutil.TestFactory(), func(*enableHAOptions) error { return nil })
	if err := execute(cmd, "--format tabular"); err == nil {
		t.Error("--format tabular accepted")
	}
}

// fakeHA is a controller's member management: EnableHA answers resp (or err) and records n,
// ControllerMembers answers members, and RemoveControllerMember records the ids removed.
type fakeHA struct {
	resp       *jujupb.EnableHAResponse
	err        error
	members    []*jujupb.ControllerMember
	membersErr error
	removeErr  error

	gotN    []int
	removed []string
	// after replaces members once a member is removed.
	after []*jujupb.ControllerMember
}

func (f *fakeHA) EnableHA(_ context.Context, n int) (*jujupb.EnableHAResponse, error) {
	f.gotN = append(f.gotN, n)
	return f.resp, f.err
}

func (f *fakeHA) ControllerMembers(context.Context) ([]*jujupb.ControllerMember, string, error) {
	return f.members, "", f.membersErr
}

func (f *fakeHA) RemoveControllerMember(_ context.Context, id string) error {
	if f.removeErr != nil {
		return f.removeErr
	}
	f.removed = append(f.removed, id)
	if f.after != nil {
		f.members = f.after
	}
	return nil
}

// threeMembers is a healthy three-member controller; member 1 answered, 0 runs the workers.
func threeMembers() []*jujupb.ControllerMember {
	return []*jujupb.ControllerMember{
		{Id: "0", ApiAddress: "127.0.0.1:17070", StoreRole: "leader", Health: "healthy", Workers: true, Pid: 4100, Version: "3.6.12"},
		{Id: "1", ApiAddress: "127.0.0.1:17071", StoreRole: "follower", Health: "healthy", Serving: true, Pid: 4200, Version: "3.6.12"},
		{Id: "2", ApiAddress: "127.0.0.1:17072", StoreRole: "follower", Health: "healthy", Pid: 4300, Version: "3.6.12"},
	}
}

// haStore is a client store knowing controller "local" at one address, with one member.
func haStore(t *testing.T) *cmdutil.Store {
	t.Helper()
	store := cmdutil.NewStore(t.TempDir())
	for _, err := range []error{
		store.AddController("local", cmdutil.ControllerDetails{
			UUID: "local-uuid", APIEndpoints: []string{"127.0.0.1:17070"}, CACert: testCACert, Cloud: "localhost", Region: "localhost",
			AgentVersion: "3.6.12", ControllerMachineCount: 1, ActiveControllerMachineCount: 1,
		}),
		store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin", Password: "s3cret"}),
		store.SetModels("local", map[string]cmdutil.ModelDetails{"controller": {UUID: "c-uuid", Type: "iaas"}, "default": {UUID: "d-uuid", Type: "iaas"}}),
		store.SetCurrentController("local"),
		store.SetCurrentModel("local", "default"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func localConfig() (*cmdutil.Config, error) {
	return &cmdutil.Config{Controller: "local", Model: "default"}, nil
}

func TestEnableHARun(t *testing.T) {
	resp := &jujupb.EnableHAResponse{Maintained: []string{"0"}, Added: []string{"1", "2"}}
	tests := []struct {
		name   string
		resp   *jujupb.EnableHAResponse
		format output.Format
	}{
		{"added", resp, formatSimple},
		{"added", resp, output.JSON},
		{"added", resp, output.YAML},
		{"everything", &jujupb.EnableHAResponse{Maintained: []string{"0", "1"}, Added: []string{"5"}, Removed: []string{"3", "4"}, Restarted: []string{"1"}}, formatSimple},
		{"nothing", &jujupb.EnableHAResponse{}, formatSimple},
	}
	for _, tt := range tests {
		t.Run(tt.name+"."+string(tt.format), func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			store := haStore(t)
			fake := &fakeHA{resp: tt.resp, members: threeMembers()}
			fake.members[2].Health, fake.members[2].StoreRole = "starting", "learner"
			opts := &enableHAOptions{IO: ios, Store: store, Config: localConfig, Format: tt.format, NumMembers: 3,
				Client: func(context.Context) (enableHAAPI, error) { return fake, nil }}
			if err := enableHARun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), "enable-ha/"+tt.name+"."+string(tt.format)+".golden")
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut)
			}
			if !slices.Equal(fake.gotN, []int{3}) {
				t.Errorf("EnableHA(%v), want 3", fake.gotN)
			}
			// Every member's address, the healthy ones first (the serving one before them).
			d, err := store.ControllerByName("local")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"127.0.0.1:17071", "127.0.0.1:17070", "127.0.0.1:17072"}
			if !slices.Equal(d.APIEndpoints, want) || d.ControllerMachineCount != 3 || d.ActiveControllerMachineCount != 2 {
				t.Errorf("store: endpoints %q, members %d/%d", d.APIEndpoints, d.ActiveControllerMachineCount, d.ControllerMachineCount)
			}
		})
	}
}

func TestEnableHARunFails(t *testing.T) {
	ios, out, _ := output.TestStreams()
	store := haStore(t)
	fake := &fakeHA{err: apierr.Errorf(apierr.NotSupported, "this controller cannot have more than one member")}
	opts := &enableHAOptions{IO: ios, Store: store, Config: localConfig, Format: formatSimple,
		Client: func(context.Context) (enableHAAPI, error) { return fake, nil }}
	err := enableHARun(context.Background(), opts)
	if err == nil || err.Error() != "enabling HA: this controller cannot have more than one member" || !errors.Is(err, apierr.NotSupported) {
		t.Errorf("err = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q", out)
	}
	if d, _ := store.ControllerByName("local"); !slices.Equal(d.APIEndpoints, []string{"127.0.0.1:17070"}) {
		t.Errorf("endpoints changed: %q", d.APIEndpoints)
	}
}

// The members cannot be listed after enable-ha: it still succeeded, the store keeps its list, and a
// warning says why it was not refreshed.
func TestEnableHARunCannotListMembers(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	store := haStore(t)
	fake := &fakeHA{resp: &jujupb.EnableHAResponse{Maintained: []string{"0"}}, membersErr: errors.New("boom")}
	opts := &enableHAOptions{IO: ios, Store: store, Config: localConfig, Format: formatSimple,
		Client: func(context.Context) (enableHAAPI, error) { return fake, nil }}
	if err := enableHARun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if out.String() != "maintaining members: 0\n" {
		t.Errorf("stdout = %q", out)
	}
	if errOut.String() != "WARNING cannot record the controller's members in the client store: boom\n" {
		t.Errorf("stderr = %q", errOut)
	}
}
