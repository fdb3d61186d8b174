package cmdutil_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/output"
)

func unit(name, agent, workload, msg, machine string) *jujupb.UnitStatus {
	return &jujupb.UnitStatus{
		Name: name, Machine: machine,
		AgentStatus:    &jujupb.StatusInfo{Status: agent},
		WorkloadStatus: &jujupb.StatusInfo{Status: workload, Message: msg},
	}
}

func appSnapshot(units ...*jujupb.UnitStatus) *jujupb.FullStatusResponse {
	return &jujupb.FullStatusResponse{Applications: []*jujupb.ApplicationStatus{{Name: "wordpress", Units: units}}}
}

func TestWaitForUnits(t *testing.T) {
	three := []string{"wordpress/0", "wordpress/1", "wordpress/2"}
	tests := []struct {
		name      string
		snapshots []*jujupb.FullStatusResponse
		terminal  bool
		quiet     bool
		wantErr   string
		wantOut   string
	}{
		{
			name: "all idle",
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "executing", "maintenance", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "idle", "active", "", "1"), unit("wordpress/2", "idle", "active", "", "2")),
			},
			wantOut: "waiting for 3 units of wordpress: 3 allocating\n" +
				"waiting for 3 units of wordpress: 1 idle, 2 allocating\n" +
				"waiting for 3 units of wordpress: 1 idle, 1 executing, 1 allocating\n" +
				"3 units of wordpress idle\n",
		},
		{
			name: "unchanged counts print once",
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0"), unit("wordpress/1", "executing", "waiting", "", "1"), unit("wordpress/2", "executing", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "executing", "waiting", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "executing", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "idle", "active", "", "1"), unit("wordpress/2", "idle", "active", "", "2")),
			},
			wantOut: "waiting for 3 units of wordpress: 2 executing, 1 allocating\n3 units of wordpress idle\n",
		},
		{
			name:     "terminal redraws one line",
			terminal: true,
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "idle", "active", "", "1"), unit("wordpress/2", "idle", "active", "", "2")),
			},
			wantOut: "\r\x1b[Kwaiting for 3 units of wordpress: 3 allocating" +
				"\r\x1b[Kwaiting for 3 units of wordpress: 1 idle, 2 allocating" +
				"\r\x1b[K3 units of wordpress idle\n",
		},
		{
			name:  "quiet",
			quiet: true,
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/1", "idle", "active", "", "1"), unit("wordpress/2", "idle", "active", "", "2")),
			},
		},
		{
			name: "hook error",
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "executing", "maintenance", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "idle", "error", `hook failed: "install"`, "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
			},
			wantOut: "waiting for 3 units of wordpress: 1 executing, 2 allocating\n",
			wantErr: `unit wordpress/0 is in error: hook failed: "install"; once fixed, run "juju resolved wordpress/0"`,
		},
		{
			name:     "error clears the terminal line",
			terminal: true,
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "executing", "maintenance", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
				appSnapshot(unit("wordpress/0", "error", "maintenance", "crashed", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")),
			},
			wantOut: "\r\x1b[Kwaiting for 3 units of wordpress: 1 executing, 2 allocating\r\x1b[K",
			wantErr: `unit wordpress/0 is in error: error; once fixed, run "juju resolved wordpress/0"`,
		},
		{
			name: "provisioning error",
			snapshots: []*jujupb.FullStatusResponse{{
				Applications: appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0"), unit("wordpress/1", "allocating", "waiting", "", "1"), unit("wordpress/2", "allocating", "waiting", "", "2")).Applications,
				Machines: []*jujupb.MachineStatus{
					{Id: "0", InstanceStatus: &jujupb.StatusInfo{Status: "running"}},
					{Id: "1", InstanceStatus: &jujupb.StatusInfo{Status: "provisioning error", Message: "not enough memory: 2048 MiB wanted"}},
				},
			}},
			wantErr: `machine 1 of unit wordpress/1 failed to start: not enough memory: 2048 MiB wanted; once fixed, run "juju retry-provisioning 1"`,
		},
		{
			name: "unit removed",
			snapshots: []*jujupb.FullStatusResponse{
				appSnapshot(unit("wordpress/0", "idle", "active", "", "0"), unit("wordpress/2", "idle", "active", "", "2")),
			},
			wantErr: "unit wordpress/1 was removed while waiting for it",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.ErrTerminal, ios.Quiet = tt.terminal, tt.quiet
			api := cmdtest.NewWaitAPI(tt.snapshots...)
			err := cmdutil.WaitForUnits(context.Background(), ios, api, "uuid", "wordpress", three, time.Minute)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if errOut.String() != tt.wantOut || out.Len() != 0 {
				t.Errorf("stderr = %q\nwant     %q\nstdout %q", errOut.String(), tt.wantOut, out.String())
			}
			if w := api.Watches[0]; len(w.Targets) != 3 || w.Targets[1].GetId() != "wordpress/" || w.Model != "uuid" {
				t.Errorf("watch = %v", w)
			}
			if strings.Join(api.Patterns[0], ",") != "wordpress" {
				t.Errorf("patterns = %v", api.Patterns)
			}
		})
	}
}

func TestWaitForUnitsNone(t *testing.T) {
	ios, _, errOut := output.TestStreams()
	// A subordinate deploys no unit: there is nothing to wait for, and nothing is read.
	if err := cmdutil.WaitForUnits(context.Background(), ios, nil, "uuid", "logging", nil, time.Minute); err != nil || errOut.Len() != 0 {
		t.Errorf("err %v, stderr %q", err, errOut.String())
	}
}

func TestWaitTimeout(t *testing.T) {
	ios, _, errOut := output.TestStreams()
	api := cmdtest.NewWaitAPI(appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0")))
	err := cmdutil.WaitForUnits(context.Background(), ios, api, "uuid", "wordpress", []string{"wordpress/0"}, 20*time.Millisecond)
	if err == nil || err.Error() != "timed out after 20ms waiting for 1 unit of wordpress: 1 allocating" {
		t.Errorf("err = %v", err)
	}
	if errOut.String() != "waiting for 1 unit of wordpress: 1 allocating\n" {
		t.Errorf("stderr = %q", errOut.String())
	}
}

func TestWaitCancelled(t *testing.T) {
	ios, _, _ := output.TestStreams()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	api := cmdtest.NewWaitAPI(appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0")))
	err := cmdutil.WaitForUnits(ctx, ios, api, "uuid", "wordpress", []string{"wordpress/0"}, time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestWaitWatchesAgainWhenTheWatchEnds(t *testing.T) {
	ios, _, _ := output.TestStreams()
	api := cmdtest.NewWaitAPI(
		appSnapshot(unit("wordpress/0", "allocating", "waiting", "", "0")),
		appSnapshot(unit("wordpress/0", "idle", "active", "", "0")),
	)
	api.EndFirstWatch = true
	if err := cmdutil.WaitForUnits(context.Background(), ios, api, "uuid", "wordpress", []string{"wordpress/0"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(api.Watches) != 2 || api.Reads != 2 {
		t.Errorf("%d watches, %d reads; want 2 and 2", len(api.Watches), api.Reads)
	}
}

func TestWaitForRemoval(t *testing.T) {
	units := func(names ...string) *jujupb.FullStatusResponse {
		var us []*jujupb.UnitStatus
		for _, n := range names {
			us = append(us, &jujupb.UnitStatus{Name: n, Life: "dying", BlockedBy: []string{"still in relation 1 (wordpress:db mysql:db)"}})
		}
		return &jujupb.FullStatusResponse{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Units: us}}}
	}
	apps := func(n int) *jujupb.FullStatusResponse {
		if n == 0 {
			return &jujupb.FullStatusResponse{}
		}
		var us []*jujupb.UnitStatus
		for i := 0; i < n; i++ {
			us = append(us, &jujupb.UnitStatus{Name: "mysql/" + string(rune('0'+i))})
		}
		return &jujupb.FullStatusResponse{Applications: []*jujupb.ApplicationStatus{{Name: "mysql", Life: "dying", Units: us}}}
	}
	tests := []struct {
		name, kind string
		entities   []string
		snapshots  []*jujupb.FullStatusResponse
		timeout    time.Duration
		wantOut    string
		wantErr    string
	}{
		{
			name: "units", kind: "unit", entities: []string{"mysql/0", "mysql/1"},
			snapshots: []*jujupb.FullStatusResponse{units("mysql/0", "mysql/1"), units("mysql/1"), units()},
			wantOut:   "waiting for removal of 2 units: 2 dying\nwaiting for removal of 2 units: 1 gone, 1 dying\n2 units removed\n",
		},
		{
			name: "application", kind: "application", entities: []string{"mysql"},
			snapshots: []*jujupb.FullStatusResponse{apps(3), apps(1), apps(0)},
			wantOut: "waiting for removal of application mysql: dying (3 units left)\n" +
				"waiting for removal of application mysql: dying (1 unit left)\napplication mysql removed\n",
		},
		{
			name: "machine already gone", kind: "machine", entities: []string{"3"},
			snapshots: []*jujupb.FullStatusResponse{{Machines: []*jujupb.MachineStatus{{Id: "4"}}}},
			wantOut:   "machine 3 removed\n",
		},
		{
			name: "timeout says what blocks", kind: "unit", entities: []string{"mysql/0"},
			snapshots: []*jujupb.FullStatusResponse{units("mysql/0")}, timeout: 20 * time.Millisecond,
			wantOut: "waiting for removal of unit mysql/0: dying\n",
			wantErr: "timed out after 20ms waiting for removal of unit mysql/0: dying\n  unit mysql/0: still in relation 1 (wordpress:db mysql:db)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, errOut := output.TestStreams()
			api := cmdtest.NewWaitAPI(tt.snapshots...)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = time.Minute
			}
			err := cmdutil.WaitForRemoval(context.Background(), ios, api, "uuid", tt.kind, tt.entities, timeout)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if errOut.String() != tt.wantOut {
				t.Errorf("stderr = %q\nwant     %q", errOut.String(), tt.wantOut)
			}
			for _, target := range api.Watches[0].Targets {
				if !target.LifeOnly {
					t.Errorf("target %v: a removal needs only life changes", target)
				}
			}
		})
	}
}

func TestWaitForRelationRemoval(t *testing.T) {
	ios, _, errOut := output.TestStreams()
	rel := func(ids ...int64) *jujupb.FullStatusResponse {
		fs := &jujupb.FullStatusResponse{}
		for _, id := range ids {
			fs.Relations = append(fs.Relations, &jujupb.RelationStatus{Id: id, Life: "dying"})
		}
		return fs
	}
	api := cmdtest.NewWaitAPI(rel(3, 4), rel(3))
	if err := cmdutil.WaitForRelationRemoval(context.Background(), ios, api, "uuid", 4, "wordpress:db mysql:db", time.Minute); err != nil {
		t.Fatal(err)
	}
	if errOut.String() != "waiting for removal of relation 4: dying\nrelation 4 removed\n" {
		t.Errorf("stderr = %q", errOut.String())
	}
	if strings.Join(api.Patterns[0], " ") != "wordpress mysql" || api.Watches[0].Targets[0].GetId() != "4" {
		t.Errorf("patterns %v, watch %v", api.Patterns, api.Watches[0])
	}
}

func TestWaitFlags(t *testing.T) {
	tests := []struct {
		args, wantErr string
		want          cmdutil.WaitFlags
		dryRun        bool
	}{
		{args: "", want: cmdutil.WaitFlags{Timeout: cmdutil.DefaultWaitTimeout}},
		{args: "--wait", want: cmdutil.WaitFlags{Wait: true, Timeout: cmdutil.DefaultWaitTimeout}},
		{args: "--wait --timeout 30s", want: cmdutil.WaitFlags{Wait: true, Timeout: 30 * time.Second}},
		{args: "--timeout 30s", wantErr: "--timeout without --wait not valid"},
		{args: "--wait --timeout 0s", wantErr: "--timeout must be positive"},
		{args: "--wait --dry-run", wantErr: "--wait with --dry-run not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got cmdutil.WaitFlags
			var rf cmdutil.RemoveFlags
			cmd := &cobra.Command{Use: "remove-thing", RunE: func(cmd *cobra.Command, _ []string) error { return rf.Validate(cmd, &got) }}
			cmdutil.AddRemoveFlags(cmd, &rf, "unit")
			cmdutil.AddWaitFlags(cmd, &got, "the units are gone")
			cmd.SetArgs(strings.Fields(tt.args))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tt.wantErr != "" {
				var fe *cmdutil.FlagError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want usage error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("flags = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestUnitsOf(t *testing.T) {
	got := cmdutil.UnitsOf("wordpress", []string{"wordpress/10", "mysql/0", "wordpress/2", "wordpress-db/0"})
	if strings.Join(got, " ") != "wordpress/2 wordpress/10" {
		t.Errorf("cmdutil.UnitsOf = %v", got)
	}
}
