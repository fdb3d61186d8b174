package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdRemoveControllerMember(t *testing.T) {
	tests := []struct {
		args, wantErr, wantID string
		wantNoPrompt          bool
	}{
		{args: "2", wantID: "2"},
		{args: "0 --no-prompt -c local", wantID: "0", wantNoPrompt: true},
		{args: "", wantErr: "no controller member specified"},
		{args: "x", wantErr: `invalid controller member id "x"`},
		{args: "02", wantErr: `invalid controller member id "02"`},
		{args: "-- -1", wantErr: `invalid controller member id "-1"`},
		{args: "1 2", wantErr: `unrecognized args: ["2"]`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *removeMemberOptions
			cmd := NewCmdRemoveControllerMember(cmdutil.TestFactory(), func(o *removeMemberOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr != "" {
				if got != nil {
					t.Error("runF called after a usage error")
				}
				return
			}
			if got.ID != tt.wantID || got.NoPrompt != tt.wantNoPrompt {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

func TestRemoveControllerMemberRun(t *testing.T) {
	tests := []struct {
		name, id, in    string
		noPrompt, tty   bool
		wantErr         string
		wantRemoved     []string
		wantEndpoints   []string
		afterUnknown    bool // the members cannot be listed after the removal
		removeErr       error
		wantStoreCounts [2]int
	}{
		{name: "no-prompt", id: "2", noPrompt: true, wantRemoved: []string{"2"},
			wantEndpoints: []string{"127.0.0.1:17071", "127.0.0.1:17070"}, wantStoreCounts: [2]int{2, 2}},
		{name: "prompt-yes", id: "2", tty: true, in: "y\n", wantRemoved: []string{"2"},
			wantEndpoints: []string{"127.0.0.1:17071", "127.0.0.1:17070"}, wantStoreCounts: [2]int{2, 2}},
		{name: "prompt-no", id: "2", tty: true, in: "n\n", wantErr: "controller member removal: aborted",
			wantEndpoints: []string{"127.0.0.1:17070", "127.0.0.1:17071", "127.0.0.1:17072"}, wantStoreCounts: [2]int{3, 3}},
		{name: "no-terminal", id: "2", wantErr: "controller member removal: " + cmdutil.ErrNoTerminal.Error(),
			wantEndpoints: []string{"127.0.0.1:17070", "127.0.0.1:17071", "127.0.0.1:17072"}, wantStoreCounts: [2]int{3, 3}},
		{name: "not-found", id: "9", noPrompt: true, wantErr: `controller member "9" not found`,
			wantEndpoints: []string{"127.0.0.1:17070", "127.0.0.1:17071", "127.0.0.1:17072"}, wantStoreCounts: [2]int{3, 3}},
		{name: "refused", id: "0", noPrompt: true, removeErr: apierr.Errorf(apierr.NotValid, "removing member 0 would cost the store its quorum"),
			wantErr:       "removing controller member 0 failed: removing member 0 would cost the store its quorum",
			wantEndpoints: []string{"127.0.0.1:17070", "127.0.0.1:17071", "127.0.0.1:17072"}, wantStoreCounts: [2]int{3, 3}},
		// The member that answered is gone with its connection: its address still leaves the store.
		{name: "serving-removed", id: "1", noPrompt: true, afterUnknown: true, wantRemoved: []string{"1"},
			wantEndpoints: []string{"127.0.0.1:17070", "127.0.0.1:17072"}, wantStoreCounts: [2]int{3, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.InTerminal = tt.tty
			ios.In = strings.NewReader(tt.in)
			store := haStore(t)
			before := threeMembers()
			if err := recordMembers(store, "local", before, ""); err != nil {
				t.Fatal(err)
			}
			// The store as enable-ha left it, in the members' order.
			_ = store.ModifyController("local", func(d *cmdutil.ControllerDetails) bool {
				d.APIEndpoints = []string{"127.0.0.1:17070", "127.0.0.1:17071", "127.0.0.1:17072"}
				return true
			})
			fake := &fakeHA{members: before, removeErr: tt.removeErr}
			if !tt.afterUnknown {
				fake.after = slices.DeleteFunc(threeMembers(), func(m *jujupb.ControllerMember) bool { return m.GetId() == tt.id })
			}
			var asked bool
			opts := &removeMemberOptions{IO: ios, Store: store, Config: localConfig, ID: tt.id, NoPrompt: tt.noPrompt,
				Client: func(context.Context) (removeMemberAPI, error) {
					asked = true
					if tt.afterUnknown {
						return &goneAfterRemoval{fakeHA: fake}, nil
					}
					return fake, nil
				}}
			err := removeMemberRun(context.Background(), opts)
			checkErr(t, err, tt.wantErr, false)
			if tt.name == "no-terminal" && asked {
				t.Error("connected to the controller without a terminal to ask on")
			}
			if !slices.Equal(fake.removed, tt.wantRemoved) {
				t.Errorf("removed %q, want %q", fake.removed, tt.wantRemoved)
			}
			d, _ := store.ControllerByName("local")
			if !slices.Equal(d.APIEndpoints, tt.wantEndpoints) || d.ActiveControllerMachineCount != tt.wantStoreCounts[0] || d.ControllerMachineCount != tt.wantStoreCounts[1] {
				t.Errorf("store: endpoints %q, members %d/%d", d.APIEndpoints, d.ActiveControllerMachineCount, d.ControllerMachineCount)
			}
			golden.Assert(t, out.String(), "remove-controller-member/"+tt.name+".stdout.golden")
			golden.Assert(t, errOut.String(), "remove-controller-member/"+tt.name+".stderr.golden")
		})
	}
}

// goneAfterRemoval is a controller reached through the member being removed: once it is gone,
// nothing answers.
type goneAfterRemoval struct {
	*fakeHA
	removed bool
}

func (g *goneAfterRemoval) RemoveControllerMember(ctx context.Context, id string) error {
	g.removed = true
	return g.fakeHA.RemoveControllerMember(ctx, id)
}

func (g *goneAfterRemoval) ControllerMembers(ctx context.Context) ([]*jujupb.ControllerMember, string, error) {
	if g.removed {
		return nil, "", apierr.Errorf(apierr.Unavailable, "cannot connect to controller at 127.0.0.1:17071: connection refused")
	}
	return g.fakeHA.ControllerMembers(ctx)
}
