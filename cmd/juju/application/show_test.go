package application

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdShow(t *testing.T) {
	tests := []struct {
		args, wantErr string
		wantApps      string
		wantFormat    output.Format
	}{
		{args: "mysql", wantApps: "mysql", wantFormat: output.YAML},
		{args: "mysql wordpress --format json -o x.json --utc", wantApps: "mysql wordpress", wantFormat: output.JSON},
		{args: "", wantErr: "an application name must be supplied"},
		{args: "mysql My-SQL", wantErr: "application name My-SQL not valid"},
		{args: "mysql/0", wantErr: "application name mysql/0 not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showOptions
			cmd := NewCmdShow(cmdutil.TestFactory(), func(o *showOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" && (strings.Join(got.Applications, " ") != tt.wantApps || got.Format != tt.wantFormat) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeShowStatus answers FullStatus with resp, keeping only the applications asked for (and
// every relation, as the server keeps those of the kept applications).
type fakeShowStatus struct {
	resp     *jujupb.FullStatusResponse
	err      error
	model    string
	patterns []string
}

func (f *fakeShowStatus) FullStatus(_ context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error) {
	f.model, f.patterns = model, patterns
	if f.err != nil {
		return nil, f.err
	}
	out := &jujupb.FullStatusResponse{Model: f.resp.Model, Relations: f.resp.Relations}
	for _, a := range f.resp.Applications {
		for _, p := range patterns {
			if a.Name == p {
				out.Applications = append(out.Applications, a)
			}
		}
	}
	return out, nil
}

var jammy = &jujupb.Base{Name: "ubuntu", Channel: "22.04/stable"}

func showModel() *jujupb.FullStatusResponse {
	ep := func(app, name, role, iface, scope string) *jujupb.RelationEndpoint {
		return &jujupb.RelationEndpoint{Application: app, Name: name, Role: role, Interface: iface, Scope: scope}
	}
	return &jujupb.FullStatusResponse{
		Model: &jujupb.ModelStatus{Name: "default", Type: "iaas"},
		Applications: []*jujupb.ApplicationStatus{
			{
				Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-7", CharmRev: 7, CharmOrigin: "local",
				Base: jammy, Life: "dying", Constraints: "mem=4096M", UnitCount: 2, RelationCount: 3,
				BlockedBy:  []string{"waiting for 2 units to be removed"},
				ForceAfter: time.Date(2026, 11, 21, 20, 30, 15, 0, time.UTC).UnixNano(),
				Units:      []*jujupb.UnitStatus{{Name: "mysql/0", Life: "dying"}, {Name: "mysql/1", Life: "dying"}},
				Endpoints:  []string{"cluster", "db", "juju-info"},
			},
			{
				Name: "wordpress", CharmName: "wordpress", CharmUrl: "local:wordpress-12", CharmRev: 12,
				CharmOrigin: "local", Base: jammy, Life: "alive", Exposed: true, UnitCount: 1, RelationCount: 1,
				Units:     []*jujupb.UnitStatus{{Name: "wordpress/0", Life: "alive"}},
				Endpoints: []string{"db", "juju-info"},
			},
			{
				Name: "logging", CharmName: "logging", CharmUrl: "local:logging-2", CharmRev: 2, CharmOrigin: "local",
				Base: jammy, Life: "alive", Subordinate: true, RelationCount: 1,
			},
		},
		Relations: []*jujupb.RelationStatus{
			{Id: 1, Key: "wordpress:db mysql:db", Life: "dying", Interface: "mysql", Scope: "global",
				BlockedBy: []string{"units in scope: mysql/0, wordpress/0"},
				Endpoints: []*jujupb.RelationEndpoint{ep("wordpress", "db", "requirer", "mysql", "global"), ep("mysql", "db", "provider", "mysql", "global")}},
			{Id: 2, Key: "mysql:cluster", Life: "alive", Interface: "mysql-peers", Scope: "global",
				Endpoints: []*jujupb.RelationEndpoint{ep("mysql", "cluster", "peer", "mysql-peers", "global")}},
			{Id: 3, Key: "logging:juju-info mysql:juju-info", Life: "alive", Interface: "juju-info", Scope: "container",
				Endpoints: []*jujupb.RelationEndpoint{ep("logging", "juju-info", "requirer", "juju-info", "container"), ep("mysql", "juju-info", "provider", "juju-info", "global")}},
		},
	}
}

func TestShowRun(t *testing.T) {
	tests := []struct {
		name string
		apps []string
	}{
		{name: "dying", apps: []string{"mysql"}},
		{name: "three", apps: []string{"wordpress", "mysql", "logging"}},
	}
	for _, tt := range tests {
		for _, f := range []output.Format{output.YAML, output.JSON} {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				ios, out, errOut := output.TestStreams()
				fake := &fakeShowStatus{resp: showModel()}
				opts := &showOptions{IO: ios, Format: f, Applications: tt.apps, UTC: true, ResolveModel: testModel,
					Client: func(context.Context) (showAPI, error) { return fake, nil }}
				if err := showRun(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
				if fake.model != "uuid-default" || strings.Join(fake.patterns, " ") != strings.Join(tt.apps, " ") {
					t.Errorf("asked %s %q", fake.model, fake.patterns)
				}
				if errOut.Len() != 0 {
					t.Errorf("stderr = %q", errOut)
				}
				golden.Assert(t, out.String(), "show-application/"+tt.name+"."+string(f)+".golden")
			})
		}
	}
}

func TestShowRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		fake    *fakeShowStatus
		wantErr string
		wantIs  error
	}{
		{name: "not found", fake: &fakeShowStatus{resp: showModel()},
			wantErr: `application "nope" not found`, wantIs: apierr.NotFound},
		{name: "failure", fake: &fakeShowStatus{err: apierr.Errorf(apierr.Unavailable, "controller unavailable")},
			wantErr: `getting status of model "default": controller unavailable`, wantIs: apierr.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, _ := output.TestStreams()
			opts := &showOptions{IO: ios, Format: output.YAML, Applications: []string{"mysql", "nope"}, ResolveModel: testModel,
				Client: func(context.Context) (showAPI, error) { return tt.fake, nil }}
			err := showRun(context.Background(), opts)
			checkErr(t, err, tt.wantErr, false)
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want %v", err, tt.wantIs)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on failure", out)
			}
		})
	}
}
