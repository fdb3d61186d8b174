package apiserver

import (
	"strings"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag, kind, id string
		ok            bool
	}{
		{"user-admin", "user", "admin", true},
		{"machine-3", "machine", "3", true},
		{"unit-mysql-0", "unit", "mysql/0", true},
		{"unit-my-app-12", "unit", "my-app/12", true},
		{"unit-mysql", "", "", false},
		{"unit-mysql-", "", "", false},
		{"application-mysql", "", "", false},
		{"admin", "", "", false},
	}
	for _, tt := range tests {
		kind, id, ok := parseTag(tt.tag)
		if kind != tt.kind || id != tt.id || ok != tt.ok {
			t.Errorf("parseTag(%q) = %q %q %v", tt.tag, kind, id, ok)
		}
	}
}

func sampleStatus() *pb.FullStatusResponse {
	return &pb.FullStatusResponse{
		Machines: []*pb.MachineStatus{{Id: "0"}, {Id: "1"}, {Id: "2"}},
		Applications: []*pb.ApplicationStatus{
			{Name: "mysql", Units: []*pb.UnitStatus{{Name: "mysql/0", Machine: "0"}}},
			{Name: "wordpress", Units: []*pb.UnitStatus{{Name: "wordpress/0", Machine: "1"}, {Name: "wordpress/1", Machine: "2"}}},
		},
		Relations: []*pb.RelationStatus{
			{Key: "wordpress:cluster", Endpoints: []*pb.RelationEndpoint{{Application: "wordpress"}}},
		},
	}
}

func selected(fs *pb.FullStatusResponse) string {
	var out []string
	for _, m := range fs.Machines {
		out = append(out, m.Id)
	}
	for _, a := range fs.Applications {
		out = append(out, a.Name)
		for _, u := range a.Units {
			out = append(out, u.Name)
		}
	}
	return strings.Join(out, " ")
}

func TestFilterSelectors(t *testing.T) {
	tests := []struct {
		patterns []string
		want     string
	}{
		{[]string{"mysql"}, "0 mysql mysql/0"},
		{[]string{"wordpress/1"}, "2 wordpress wordpress/1"},
		{[]string{"1"}, "1 wordpress wordpress/0"},
		{[]string{"word*"}, "1 2 wordpress wordpress/0 wordpress/1"},
		{[]string{"nothing"}, ""},
	}
	for _, tt := range tests {
		fs := sampleStatus()
		filter(fs, tt.patterns)
		if got := selected(fs); got != tt.want {
			t.Errorf("filter(%v) = %q, want %q", tt.patterns, got, tt.want)
		}
	}
}

func TestAgentMethods(t *testing.T) {
	if !agentAllowed("/juju.v1.AgentService/GetUnit") || !agentAllowed("/juju.v1.StatusService/Watch") {
		t.Fatal("agents refused their API")
	}
	if agentAllowed("/juju.v1.StatusService/FullStatus") || agentAllowed("/juju.v1.ControllerService/AddModel") {
		t.Fatal("agents allowed the admin API")
	}
	e := Entity{Kind: "machine", ID: "3"}
	if !canActOnMachine(e, "3") || canActOnMachine(e, "4") || !canActOnMachine(Entity{Kind: "user"}, "4") {
		t.Fatal("machine authorisation wrong")
	}
}
