package status

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// forceAt is when the forced removal of mysql/1 and machine 1 takes over.
var forceAt = controllerTime.Add(10 * time.Minute)

// dyingStatus is a model being taken apart: mysql is dying and waits for its units, which wait
// for their relations and subordinate; machine 1 waits for mysql/1, whose removal is forced; the
// wordpress–mysql relation is dying while units are still in its scope.
func dyingStatus() *jujupb.FullStatusResponse {
	fs := emptyStatus()
	fs.Machines = []*jujupb.MachineStatus{
		{
			Id: "0", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-0", DnsName: "10.0.0.10",
			AgentStatus: si("started", "", 50), InstanceStatus: si("running", "Running", 52),
		},
		{
			Id: "1", Life: "dying", Base: jammy, InstanceId: "juju-d32b3c-1", DnsName: "10.0.0.11",
			AgentStatus: si("started", "", 50), InstanceStatus: si("running", "Running", 52),
			BlockedBy:  []string{"waiting for unit mysql/1 to be removed"},
			ForceAfter: forceAt.UnixNano(),
		},
		{
			Id: "2", Life: "dying", Base: jammy, InstanceId: "juju-d32b3c-2", DnsName: "10.0.0.12",
			AgentStatus: si("stopped", "", 1), InstanceStatus: si("running", "Running", 52),
		},
	}
	fs.Applications = []*jujupb.ApplicationStatus{
		{
			Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-7", CharmRev: 7, CharmOrigin: "local",
			Base: jammy, Life: "dying", Status: si("active", "Primary", 40), UnitCount: 2,
			BlockedBy: []string{"waiting for 2 units to be removed"},
			Units: []*jujupb.UnitStatus{
				{
					Name: "mysql/0", Machine: "0", Life: "dying", Leader: true, PublicAddress: "10.0.0.10",
					AgentStatus: si("idle", "", 2), WorkloadStatus: si("active", "Primary", 40),
					BlockedBy: []string{"leaving relation wordpress:db mysql:db", "waiting for subordinate logging/0 to be removed"},
				},
				{
					Name: "mysql/1", Machine: "1", Life: "dying", PublicAddress: "10.0.0.11",
					AgentStatus: si("failed", "hook failed: \"stop\"", 2), WorkloadStatus: si("error", "hook failed: \"stop\"", 2),
					BlockedBy:  []string{"leaving relation wordpress:db mysql:db"},
					ForceAfter: forceAt.UnixNano(),
				},
			},
		},
		{
			Name: "logging", CharmName: "logging", CharmUrl: "local:logging-2", CharmRev: 2, CharmOrigin: "local",
			Base: jammy, Life: "alive", Subordinate: true, SubordinateTo: []string{"mysql"}, UnitCount: 1,
			Units: []*jujupb.UnitStatus{{
				Name: "logging/0", Machine: "0", Life: "dying", Leader: true, PublicAddress: "10.0.0.10",
				Principal:   "mysql/0",
				AgentStatus: si("executing", "running stop hook", 1), WorkloadStatus: si("maintenance", "stopping charm software", 1),
			}},
		},
		{
			Name: "wordpress", CharmName: "wordpress", CharmUrl: "local:wordpress-12", CharmRev: 12,
			CharmOrigin: "local", Base: jammy, Life: "alive", UnitCount: 1,
			Units: []*jujupb.UnitStatus{{
				Name: "wordpress/0", Machine: "2", Life: "alive", Leader: true, PublicAddress: "10.0.0.12",
				AgentStatus: si("idle", "", 30), WorkloadStatus: si("blocked", "database relation is going away", 1),
			}},
		},
	}
	dying := relation(1, "dying", "mysql", "",
		&jujupb.RelationEndpoint{Application: "wordpress", Name: "db", Role: "requirer", Interface: "mysql", Scope: "global"},
		&jujupb.RelationEndpoint{Application: "mysql", Name: "db", Role: "provider", Interface: "mysql", Scope: "global"})
	dying.UnitsInScope = 3
	dying.ScopeUnits = []string{"mysql/0", "mysql/1", "wordpress/0"}
	dying.BlockedBy = []string{"units in scope: mysql/0, mysql/1, wordpress/0"}
	fs.Relations = []*jujupb.RelationStatus{
		dying,
		relation(3, "alive", "juju-info", "container",
			&jujupb.RelationEndpoint{Application: "mysql", Name: "juju-info", Role: "provider", Interface: "juju-info", Scope: "global"},
			&jujupb.RelationEndpoint{Application: "logging", Name: "juju-info", Role: "requirer", Interface: "juju-info", Scope: "container"}),
		relation(2, "dying", "mysql-peers", "",
			&jujupb.RelationEndpoint{Application: "mysql", Name: "cluster", Role: "peer", Interface: "mysql-peers", Scope: "global"}),
	}
	return fs
}

func TestRemovalGolden(t *testing.T) {
	tests := []struct {
		name, golden string
		fs           *jujupb.FullStatusResponse
		format       output.Format
		relations    bool
	}{
		{name: "dying tabular", fs: dyingStatus(), format: output.Tabular, golden: "status/dying.tabular.golden"},
		{name: "dying tabular relations", fs: dyingStatus(), format: output.Tabular, relations: true, golden: "status/dying-relations.tabular.golden"},
		{name: "dying json", fs: dyingStatus(), format: output.JSON, golden: "status/dying.json.golden"},
		{name: "dying yaml", fs: dyingStatus(), format: output.YAML, golden: "status/dying.yaml.golden"},
		{name: "full tabular relations", fs: fullStatus(), format: output.Tabular, relations: true, golden: "status/full-relations.tabular.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, stdout, _ := output.TestStreams()
			v := NewView(tt.fs, "lxd", testNow, true).WithColor(s).WithRelations(tt.relations)
			if err := output.Write(s.Out, tt.format, v); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, stdout.String(), tt.golden)
		})
	}
}

func TestRemovalFields(t *testing.T) {
	v := NewView(dyingStatus(), "lxd", testNow, true)
	mysql := v.Applications["mysql"]
	if got := mysql.RemovalBlockedBy; !slices.Equal(got, []string{"waiting for 2 units to be removed"}) || mysql.ForcedRemovalAt != "" {
		t.Errorf("mysql removal = %+v", mysql.Removal)
	}
	if got := mysql.Units["mysql/1"].ForcedRemovalAt; got != "2026-11-21T20:30:15Z" {
		t.Errorf("mysql/1 forced-removal-at = %q", got)
	}
	if got := v.Machines["1"].ForcedRemovalAt; got != "2026-11-21T20:30:15Z" {
		t.Errorf("machine 1 forced-removal-at = %q", got)
	}
	if got := v.Machine("0").Removal; got.RemovalBlockedBy != nil || got.ForcedRemovalAt != "" {
		t.Errorf("alive machine removal = %+v", got)
	}

	// Alive entities carry no removal keys at all.
	b, err := json.Marshal(NewView(fullStatus(), "lxd", testNow, true))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Applications map[string]map[string]any
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"removal-blocked-by", "forced-removal-at"} {
		if _, ok := raw.Applications["mysql"][key]; ok {
			t.Errorf("alive application has %s", key)
		}
	}
}

func TestForcedRemovalLocalTime(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("CEST", 2*3600)
	t.Cleanup(func() { time.Local = saved })
	if got := NewRemoval(nil, forceAt.UnixNano(), false).ForcedRemovalAt; got != "2026-11-21T22:30:15+02:00" {
		t.Errorf("local forced-removal-at = %q", got)
	}
	if got := NewRemoval(nil, forceAt.UnixNano(), true).ForcedRemovalAt; got != "2026-11-21T20:30:15Z" {
		t.Errorf("utc forced-removal-at = %q", got)
	}
}

func TestRemovalMessage(t *testing.T) {
	tests := []struct {
		life      string
		blockedBy []string
		want      string
	}{
		{"", []string{"ignored"}, ""},
		{"dying", nil, "dying"},
		{"dead", nil, "dead"},
		{"dying", []string{"waiting for 2 units to be removed"}, "dying: waiting for 2 units to be removed"},
		{"dying", []string{"a", "b"}, "dying: a; b"},
	}
	for _, tt := range tests {
		if got := removalMessage(tt.life, tt.blockedBy); got != tt.want {
			t.Errorf("removalMessage(%q, %q) = %q, want %q", tt.life, tt.blockedBy, got, tt.want)
		}
	}
}

func TestRelationRows(t *testing.T) {
	ep := func(app, name, role, scope string) *jujupb.RelationEndpoint {
		return &jujupb.RelationEndpoint{Application: app, Name: name, Role: role, Interface: "i", Scope: scope}
	}
	rels := []*jujupb.RelationStatus{
		relation(1, "alive", "i", "", ep("app10", "db", "provider", "global"), ep("web", "db", "requirer", "global")),
		relation(2, "alive", "i", "", ep("web", "db", "requirer", "global"), ep("app2", "db", "provider", "global")),
		relation(3, "alive", "i", "container", ep("sub", "info", "requirer", "container"), ep("app2", "info", "provider", "global")),
		relation(4, "dying", "", "", ep("app2", "peers", "peer", "global")),
		relation(5, "alive", "i", "", ep("app2", "db", "provider", "global"), ep("api", "db", "requirer", "global")),
	}
	want := []relationRow{
		{provider: "app2:db", requirer: "api:db", iface: "i", kind: "regular"},
		{provider: "app2:db", requirer: "web:db", iface: "i", kind: "regular"},
		{provider: "app2:info", requirer: "sub:info", iface: "i", kind: "subordinate"},
		{provider: "app2:peers", requirer: "app2:peers", iface: "i", kind: "peer", message: "dying"},
		{provider: "app10:db", requirer: "web:db", iface: "i", kind: "regular"},
	}
	if got := relationRows(rels); !slices.Equal(got, want) {
		t.Errorf("rows =\n%+v\nwant\n%+v", got, want)
	}
	if got := relationRows(nil); len(got) != 0 {
		t.Errorf("no relations: rows = %v", got)
	}
}

func TestRelatedApplications(t *testing.T) {
	got := relatedApplications(dyingStatus().GetRelations())["mysql"]
	want := EndpointRelations{
		"db": {{RelatedApplication: "wordpress", Interface: "mysql", Scope: "global", Life: "dying",
			RemovalBlockedBy: []string{"units in scope: mysql/0, mysql/1, wordpress/0"}}},
		"cluster":   {{RelatedApplication: "mysql", Interface: "mysql-peers", Scope: "global", Life: "dying"}},
		"juju-info": {{RelatedApplication: "logging", Interface: "juju-info", Scope: "container"}},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("mysql relations =\n%s\nwant\n%s", gb, wb)
	}
	if got := relatedApplications(dyingStatus().GetRelations())["nope"]; got != nil {
		t.Errorf("unrelated application: %v", got)
	}
}
