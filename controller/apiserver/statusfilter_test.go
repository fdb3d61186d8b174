package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
)

// statusSample: mysql/0 (active) with a logging subordinate on machine 0, wordpress/0 (error)
// on 1, wordpress/1 (waiting) on 2, a container 0/lxd/0 and a pending machine 3.
func statusSample() *pb.FullStatusResponse {
	si := func(s string) *pb.StatusInfo { return &pb.StatusInfo{Status: s} }
	return &pb.FullStatusResponse{
		Machines: []*pb.MachineStatus{
			{Id: "0", AgentStatus: si("started")}, {Id: "0/lxd/0", AgentStatus: si("started")},
			{Id: "1", AgentStatus: si("started")}, {Id: "2", AgentStatus: si("started")},
			{Id: "3", AgentStatus: si("pending"), InstanceStatus: si("provisioning error")},
		},
		Applications: []*pb.ApplicationStatus{
			{Name: "logging", Units: []*pb.UnitStatus{
				{Name: "logging/0", Machine: "0", Principal: "mysql/0", WorkloadStatus: si("blocked"), AgentStatus: si("idle")},
				{Name: "logging/1", Machine: "1", Principal: "wordpress/0", WorkloadStatus: si("active"), AgentStatus: si("idle")},
			}},
			{Name: "mysql", Units: []*pb.UnitStatus{{Name: "mysql/0", Machine: "0", WorkloadStatus: si("active"), AgentStatus: si("idle")}}},
			{Name: "wordpress", Status: si("maintenance"), Units: []*pb.UnitStatus{
				{Name: "wordpress/0", Machine: "1", WorkloadStatus: si("error"), AgentStatus: si("error")},
				{Name: "wordpress/1", Machine: "2", WorkloadStatus: si("waiting"), AgentStatus: si("executing")},
			}},
		},
		Relations: []*pb.RelationStatus{
			{Key: "logging:juju-info mysql:juju-info", Endpoints: []*pb.RelationEndpoint{{Application: "logging"}, {Application: "mysql"}}},
			{Key: "mysql:db wordpress:db", Endpoints: []*pb.RelationEndpoint{{Application: "mysql"}, {Application: "wordpress"}}},
		},
	}
}

func TestFilterStatusValuesAndSubordinates(t *testing.T) {
	tests := []struct {
		patterns []string
		want     string
	}{
		// A unit in error brings its machine, application and subordinates.
		{[]string{"error"}, "1 logging logging/1 wordpress wordpress/0"},
		// Workload and agent statuses, and the application's own status.
		{[]string{"waiting"}, "2 wordpress wordpress/1"},
		{[]string{"executing"}, "2 wordpress wordpress/1"},
		{[]string{"maintenance"}, "wordpress"},
		// A matched subordinate brings its principal, not the principal's other subordinates.
		{[]string{"blocked"}, "0 logging logging/0 mysql mysql/0"},
		{[]string{"logging/1"}, "1 logging logging/1 wordpress wordpress/0"},
		// Machine statuses; a machine brings its units, a host its containers.
		{[]string{"provisioning error"}, "3"},
		{[]string{"pending"}, "3"},
		{[]string{"0"}, "0 0/lxd/0 logging logging/0 mysql mysql/0"},
		{[]string{"0/lxd/*"}, "0/lxd/0"},
		// Several selectors: the union.
		{[]string{"mysql", "wordpress/1"}, "0 2 logging logging/0 mysql mysql/0 wordpress wordpress/1"},
		{[]string{"*"}, "0 0/lxd/0 1 2 3 logging logging/0 logging/1 mysql mysql/0 wordpress wordpress/0 wordpress/1"},
		{[]string{"w*/1"}, "2 wordpress wordpress/1"},
		{[]string{"idle", "nothing"}, "0 1 logging logging/0 logging/1 mysql mysql/0 wordpress wordpress/0"},
		{[]string{"terminated"}, ""},
	}
	for _, tt := range tests {
		fs := statusSample()
		if err := filter(fs, tt.patterns); err != nil {
			t.Fatalf("filter(%q): %v", tt.patterns, err)
		}
		if got := selected(fs); got != tt.want {
			t.Errorf("filter(%q) = %q\n want %q", tt.patterns, got, tt.want)
		}
	}
}

// As in Juju's FullStatus: a selected unit brings the relations of its application, not the
// related applications themselves; applications brought only by a selected machine bring no
// relations.
func TestFilterRelations(t *testing.T) {
	tests := []struct {
		patterns []string
		apps     string
		rels     string
	}{
		{[]string{"mysql/0"}, "0 logging logging/0 mysql mysql/0", "logging:juju-info mysql:juju-info|mysql:db wordpress:db"},
		{[]string{"mysql"}, "0 logging logging/0 mysql mysql/0", "logging:juju-info mysql:juju-info|mysql:db wordpress:db"},
		{[]string{"wordpress/1"}, "2 wordpress wordpress/1", "mysql:db wordpress:db"},
		{[]string{"logging/0"}, "0 logging logging/0 mysql mysql/0", "logging:juju-info mysql:juju-info|mysql:db wordpress:db"},
		{[]string{"0"}, "0 0/lxd/0 logging logging/0 mysql mysql/0", ""},
		{[]string{"3"}, "3", ""},
	}
	for _, tt := range tests {
		fs := statusSample()
		if err := filter(fs, tt.patterns); err != nil {
			t.Fatalf("filter(%q): %v", tt.patterns, err)
		}
		if got := selected(fs); got != tt.apps {
			t.Errorf("filter(%q) = %q\n want %q", tt.patterns, got, tt.apps)
		}
		var keys []string
		for _, r := range fs.Relations {
			keys = append(keys, r.Key)
		}
		if got := strings.Join(keys, "|"); got != tt.rels {
			t.Errorf("relations of %q = %q, want %q", tt.patterns, got, tt.rels)
		}
	}
}

func TestFilterInvalidSelector(t *testing.T) {
	for _, p := range []string{"mysql/x", "["} {
		err := filter(statusSample(), []string{"mysql", p})
		if !errors.Is(err, apierr.NotValid) {
			t.Errorf("filter(%q) = %v, want NotValid", p, err)
		}
	}
}

// Through the real server: status values select, a bad selector is NotValid.
func TestFullStatusSelectors(t *testing.T) {
	env := startTestEnv(t)
	ctx := context.Background()
	env.deploy(t, "mysql", "name: mysql\nsummary: db\n", 2)
	if err := env.st.SetUnitStatus(ctx, env.model, "mysql/1", state.UnitStatus{
		Agent: &storepb.Status{Status: "idle"}, Workload: &storepb.Status{Status: "blocked", Message: "needs a relation"},
	}); err != nil {
		t.Fatal(err)
	}
	fs, err := env.admin.FullStatus(ctx, "default", []string{"blocked"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Applications) != 1 || len(fs.Applications[0].Units) != 1 || fs.Applications[0].Units[0].Name != "mysql/1" {
		t.Errorf("status blocked = %v", fs.Applications)
	}
	if _, err := env.admin.FullStatus(ctx, "default", []string{"mysql/x"}); !errors.Is(err, apierr.NotValid) {
		t.Errorf("bad selector: %v", err)
	}
}
