package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

var (
	controllerTime = time.Date(2026, 11, 21, 20, 20, 15, 0, time.UTC)
	// now differs from the controller time: the view must show the controller's.
	testNow = controllerTime.Add(42 * time.Second)
)

// at is a status time t minutes before the controller time, in Unix nanoseconds.
func at(minutes int) int64 {
	return controllerTime.Add(-time.Duration(minutes) * time.Minute).UnixNano()
}

func si(status, message string, minutes int) *jujupb.StatusInfo {
	return &jujupb.StatusInfo{Status: status, Message: message, Since: at(minutes)}
}

var jammy = &jujupb.Base{Name: "ubuntu", Channel: "22.04/stable"}

// fullStatus is a model mid-deployment: a started, a pending and a failed machine; wordpress half
// allocated, mysql with a logging subordinate, and a dying application stuck on the failed machine.
func fullStatus() *jujupb.FullStatusResponse {
	return &jujupb.FullStatusResponse{
		Model: &jujupb.ModelStatus{
			Name: "default", Uuid: "d32b3c4e-0000-4000-8000-000000000001", Controller: "server-name",
			Cloud: "localhost", Region: "localhost", Version: "3.6.1", Type: "iaas",
			Status: si("available", "", 60), Life: "alive",
		},
		Machines: []*jujupb.MachineStatus{
			{
				Id: "0", Life: "alive", Base: jammy, Constraints: "mem=4096M",
				Hardware: "arch=amd64 cores=2 mem=4096M", InstanceId: "juju-d32b3c-0", DnsName: "10.0.0.10",
				Hostname: "juju-d32b3c-0", AgentStatus: si("started", "", 50),
				InstanceStatus: si("running", "Running", 52), Jobs: []string{"host-units"},
			},
			{
				Id: "1", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-1",
				AgentStatus: si("pending", "", 5), InstanceStatus: si("allocating", "starting", 5),
			},
			{
				Id: "2", Life: "dying", Base: jammy, Constraints: "mem=2048G",
				AgentStatus:    si("error", "cannot satisfy constraints: mem=2048G exceeds host memory", 4),
				InstanceStatus: si("provisioning error", "cannot satisfy constraints: mem=2048G exceeds host memory", 4),
			},
		},
		Applications: []*jujupb.ApplicationStatus{
			{
				Name: "wordpress", CharmName: "wordpress", CharmUrl: "local:wordpress-12", CharmRev: 12,
				CharmOrigin: "local", Base: jammy, Life: "alive", Exposed: true, WorkloadVersion: "6.4.3",
				ExposedEndpoints: []*jujupb.ExposedEndpoint{
					{ToCidrs: []string{"0.0.0.0/0", "::/0"}},
					{Endpoint: "website", ToSpaces: []string{"alpha"}, ToCidrs: []string{"10.0.0.0/24"}},
				},
				Relations: []*jujupb.EndpointRelations{{Endpoint: "db", Applications: []string{"mysql"}}},
				UnitCount: 2,
				Units: []*jujupb.UnitStatus{
					// Listed out of order: the view sorts.
					{
						Name: "wordpress/1", Machine: "1", Life: "alive",
						AgentStatus: si("allocating", "waiting for machine", 5), WorkloadStatus: si("waiting", "", 5),
					},
					{
						Name: "wordpress/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
						OpenPorts:   []string{"443/tcp", "80/tcp"},
						AgentStatus: si("idle", "", 30), WorkloadStatus: si("active", "", 30),
					},
				},
			},
			{
				Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-7", CharmRev: 7, CharmOrigin: "local",
				Base: jammy, Life: "alive", Status: si("active", "Primary", 40), WorkloadVersion: "8.0.36",
				Relations: []*jujupb.EndpointRelations{
					{Endpoint: "database", Applications: []string{"wordpress"}},
					{Endpoint: "juju-info", Applications: []string{"logging"}},
					{Endpoint: "cluster", Applications: []string{"mysql"}},
				},
				UnitCount: 1,
				Units: []*jujupb.UnitStatus{{
					Name: "mysql/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
					OpenPorts:   []string{"3306/tcp"},
					AgentStatus: si("idle", "", 40), WorkloadStatus: si("active", "Primary", 40),
				}},
			},
			{
				Name: "logging", CharmName: "logging", CharmUrl: "local:logging-2", CharmRev: 2, CharmOrigin: "local",
				Base: jammy, Life: "alive", Subordinate: true, SubordinateTo: []string{"mysql"},
				Relations: []*jujupb.EndpointRelations{{Endpoint: "juju-info", Applications: []string{"mysql"}}},
				UnitCount: 1,
				Units: []*jujupb.UnitStatus{{
					Name: "logging/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
					Principal:   "mysql/0",
					AgentStatus: si("idle", "", 35), WorkloadStatus: si("active", "", 35),
				}},
			},
			{
				Name: "ghost", CharmName: "ghost", CharmUrl: "local:ghost-3", CharmRev: 3, CharmOrigin: "local",
				Base: jammy, Life: "dying", UnitCount: 1,
				Units: []*jujupb.UnitStatus{{
					Name: "ghost/0", Machine: "2", Life: "dying",
					AgentStatus: si("allocating", "", 4), WorkloadStatus: si("waiting", "waiting for machine", 4),
				}},
			},
		},
		Relations: []*jujupb.RelationStatus{
			relation(1, "alive", "mysql", "",
				&jujupb.RelationEndpoint{Application: "wordpress", Name: "db", Role: "requirer", Interface: "mysql", Scope: "global"},
				&jujupb.RelationEndpoint{Application: "mysql", Name: "database", Role: "provider", Interface: "mysql", Scope: "global"}),
			relation(2, "alive", "juju-info", "container",
				&jujupb.RelationEndpoint{Application: "logging", Name: "juju-info", Role: "requirer", Interface: "juju-info", Scope: "container"},
				&jujupb.RelationEndpoint{Application: "mysql", Name: "juju-info", Role: "provider", Interface: "juju-info", Scope: "global"}),
			relation(0, "alive", "mysql-peers", "",
				&jujupb.RelationEndpoint{Application: "mysql", Name: "cluster", Role: "peer", Interface: "mysql-peers", Scope: "global"}),
		},
		ControllerTime: controllerTime.UnixNano(),
		Revision:       1234,
	}
}

// relation is a relation between endpoints, with the key Juju gives it; scope "" is global.
func relation(id int64, life, iface, scope string, eps ...*jujupb.RelationEndpoint) *jujupb.RelationStatus {
	var keys []string
	for _, ep := range eps {
		keys = append(keys, ep.Application+":"+ep.Name)
	}
	if scope == "" {
		scope = "global"
	}
	return &jujupb.RelationStatus{Id: id, Key: strings.Join(keys, " "), Life: life, Interface: iface, Scope: scope, Endpoints: eps}
}

func emptyStatus() *jujupb.FullStatusResponse {
	return &jujupb.FullStatusResponse{
		Model: &jujupb.ModelStatus{
			Name: "default", Cloud: "localhost", Region: "localhost", Version: "3.6.1", Type: "iaas",
			Status: si("available", "", 60), Life: "alive",
		},
		ControllerTime: controllerTime.UnixNano(),
	}
}

func TestViewGolden(t *testing.T) {
	tests := []struct {
		name, golden string
		fs           *jujupb.FullStatusResponse
		format       output.Format
	}{
		{name: "full tabular", fs: fullStatus(), format: output.Tabular, golden: "status/full.tabular.golden"},
		{name: "full json", fs: fullStatus(), format: output.JSON, golden: "status/full.json.golden"},
		{name: "full yaml", fs: fullStatus(), format: output.YAML, golden: "status/full.yaml.golden"},
		{name: "empty tabular", fs: emptyStatus(), format: output.Tabular, golden: "status/empty.tabular.golden"},
		{name: "empty yaml", fs: emptyStatus(), format: output.YAML, golden: "status/empty.yaml.golden"},
	}
	for _, f := range []output.Format{output.Oneline, output.Short, output.Line, output.Summary} {
		tests = append(tests, struct {
			name, golden string
			fs           *jujupb.FullStatusResponse
			format       output.Format
		}{name: "full " + string(f), fs: fullStatus(), format: f, golden: "status/full." + string(f) + ".golden"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, stdout, _ := output.TestStreams()
			v := NewView(tt.fs, "lxd", testNow, true).WithColor(s)
			if err := output.Write(s.Out, tt.format, v); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, stdout.String(), tt.golden)
		})
	}
}

// short and line are other names of oneline.
func TestOnelineAliases(t *testing.T) {
	render := func(f output.Format) string {
		var buf bytes.Buffer
		if err := output.Write(&buf, f, NewView(fullStatus(), "lxd", testNow, true)); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	oneline := render(output.Oneline)
	for _, f := range []output.Format{output.Short, output.Line} {
		if got := render(f); got != oneline {
			t.Errorf("%s:\n%s", f, golden.Diff(oneline, got))
		}
	}
	if err := NewView(fullStatus(), "lxd", testNow, true).WriteText(io.Discard, "xml"); err == nil {
		t.Error("WriteText of an unknown format succeeded")
	}
}

// With colour: statuses in Juju's colours, headers bold, addresses cyan, ports bright magenta,
// messages grey, endpoints magenta. json and yaml are never coloured.
func TestViewGoldenColor(t *testing.T) {
	s := &output.Streams{Color: true}
	for _, f := range []output.Format{output.Tabular, output.Oneline, output.Summary} {
		var buf bytes.Buffer
		v := NewView(fullStatus(), "lxd", testNow, true).WithColor(s).WithRelations(true)
		if err := output.Write(&buf, f, v); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, buf.String(), "status/full-color."+string(f)+".golden")
	}
	for _, f := range []output.Format{output.JSON, output.YAML} {
		var buf bytes.Buffer
		if err := output.Write(&buf, f, NewView(fullStatus(), "lxd", testNow, true).WithColor(s)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "\x1b") {
			t.Errorf("%s is coloured", f)
		}
	}
}

func TestViewEmpty(t *testing.T) {
	if !NewView(emptyStatus(), "lxd", testNow, true).Empty() {
		t.Error("empty model not Empty")
	}
	if NewView(fullStatus(), "lxd", testNow, true).Empty() {
		t.Error("full model Empty")
	}
	// A nil response must not crash.
	if v := NewView(nil, "", testNow, true); !v.Empty() || v.Controller.Timestamp != "20:20:57Z" {
		t.Errorf("nil response: empty=%v timestamp=%q", v.Empty(), v.Controller.Timestamp)
	}
}

func TestViewShape(t *testing.T) {
	v := NewView(fullStatus(), "", testNow, true)
	if v.Model.Controller != "server-name" {
		t.Errorf("controller = %q, want the server's name when none given", v.Model.Controller)
	}
	if _, ok := v.Applications["logging"].Units["logging/0"]; ok {
		t.Error("subordinate listed at the top of its application")
	}
	sub := v.Applications["mysql"].Units["mysql/0"].Subordinates["logging/0"]
	if sub == nil || sub.Machine != "" || !sub.Leader {
		t.Errorf("logging/0 under mysql/0 = %+v", sub)
	}
	if got := v.Applications["wordpress"].ApplicationStatus; got.Current != "waiting" {
		t.Errorf("derived wordpress status = %+v", got)
	}
	if got := v.Machines["2"].JujuStatus.Life; got != "dying" {
		t.Errorf("machine 2 life = %q", got)
	}
	if got := v.Machines["0"].JujuStatus.Life; got != "" {
		t.Errorf("alive machine life = %q", got)
	}

	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	logging := raw["applications"]["logging"].(map[string]any)
	if _, ok := logging["units"]; ok {
		t.Error("subordinate application has a units key")
	}
	if _, ok := raw["applications"]["mysql"].(map[string]any)["life"]; ok {
		t.Error("alive application has a life key")
	}
	if got := raw["applications"]["ghost"].(map[string]any)["life"]; got != "dying" {
		t.Errorf("ghost life = %v", got)
	}
}

func TestDerivedStatus(t *testing.T) {
	unit := func(name, status string) *jujupb.UnitStatus {
		return &jujupb.UnitStatus{Name: name, WorkloadStatus: &jujupb.StatusInfo{Status: status, Message: name}}
	}
	tests := []struct {
		units       []*jujupb.UnitStatus
		want, wantM string
	}{
		{nil, "unknown", ""},
		{[]*jujupb.UnitStatus{unit("a/0", "active"), unit("a/1", "blocked"), unit("a/2", "error")}, "error", "a/2"},
		{[]*jujupb.UnitStatus{unit("a/0", "terminated"), unit("a/1", "active")}, "active", "a/1"},
		{[]*jujupb.UnitStatus{unit("a/10", "waiting"), unit("a/2", "waiting")}, "waiting", "a/2"},
		{[]*jujupb.UnitStatus{unit("a/0", "unknown"), unit("a/1", "terminated")}, "terminated", "a/1"},
		{[]*jujupb.UnitStatus{unit("a/0", "maintenance"), unit("a/1", "blocked")}, "blocked", "a/1"},
		{[]*jujupb.UnitStatus{{Name: "a/0"}}, "unknown", ""},
	}
	for _, tt := range tests {
		got := derivedStatus(tt.units)
		if got.GetStatus() != tt.want || got.GetMessage() != tt.wantM {
			t.Errorf("derivedStatus(%v) = %q %q, want %q %q", tt.units, got.GetStatus(), got.GetMessage(), tt.want, tt.wantM)
		}
	}
}

func TestFormatPorts(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"3306/tcp"}, "3306/tcp"},
		{[]string{"443/tcp", "80/tcp", "8000-8005/tcp"}, "80,443/tcp 8000-8005/tcp"},
		{[]string{"81/tcp", "80/tcp", "53/udp", "82-90/tcp"}, "80-90/tcp 53/udp"},
		{[]string{"icmp", "22/tcp"}, "22/tcp icmp"},
	}
	for _, tt := range tests {
		if got := formatPorts(tt.in); got != tt.want {
			t.Errorf("formatPorts(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnitMessage(t *testing.T) {
	tests := []struct {
		agent, agentMsg, workloadMsg, want string
		life                               string
		blockedBy                          []string
	}{
		{"allocating", "waiting for machine", "", "waiting for machine", "", nil},
		{"allocating", "waiting for machine", "installing", "installing", "", nil},
		{"executing", "running install hook", "installing charm software", "(install) installing charm software", "", nil},
		{"executing", "running db-relation-changed hook for mysql/0", "", "(db-relation-changed)", "", nil},
		{"executing", "running action backup", "busy", "(backup) busy", "", nil},
		{"idle", "ignored", "ready", "ready", "", nil},
		{"idle", "", "ready", "dying", "dying", nil},
		{"executing", "running stop hook", "stopping", "dying: leaving relation wordpress:db mysql:db",
			"dying", []string{"leaving relation wordpress:db mysql:db"}},
	}
	for _, tt := range tests {
		u := &UnitView{
			JujuStatus:     StatusView{Current: tt.agent, Message: tt.agentMsg, Life: tt.life},
			WorkloadStatus: StatusView{Message: tt.workloadMsg},
			Removal:        Removal{RemovalBlockedBy: tt.blockedBy},
		}
		if got := unitMessage(u); got != tt.want {
			t.Errorf("unitMessage(%s %q, %q) = %q, want %q", tt.agent, tt.agentMsg, tt.workloadMsg, got, tt.want)
		}
	}
}

func TestAppTableCuts(t *testing.T) {
	fs := emptyStatus()
	fs.Applications = []*jujupb.ApplicationStatus{{
		Name: "app", CharmName: "app", WorkloadVersion: "1.2.3-very-long-version-string\nsecond line",
		Status: &jujupb.StatusInfo{Status: "blocked", Message: strings.Repeat("x", 130)},
	}}
	rows := NewView(fs, "lxd", testNow, true).appTable().Rows
	if len(rows) != 1 {
		t.Fatalf("rows = %v", rows)
	}
	if got := rows[0][1]; got != "1.2.3-very-l..." {
		t.Errorf("version = %q", got)
	}
	if got := rows[0][8]; len(got) != 120 || !strings.HasSuffix(got, "...") {
		t.Errorf("message = %q (%d)", got, len(got))
	}
	if got := rows[0][3]; got != "0" {
		t.Errorf("scale of no units = %q", got)
	}
}

func TestContainersNestUnderHost(t *testing.T) {
	fs := emptyStatus()
	fs.Machines = []*jujupb.MachineStatus{
		{Id: "0", AgentStatus: &jujupb.StatusInfo{Status: "started"}},
		{Id: "0/lxd/10", AgentStatus: &jujupb.StatusInfo{Status: "started"}},
		{Id: "0/lxd/2", AgentStatus: &jujupb.StatusInfo{Status: "pending"}},
		{Id: "1", AgentStatus: &jujupb.StatusInfo{Status: "started"}, Hardware: "arch=amd64 availability-zone=zone-b"},
	}
	v := NewView(fs, "lxd", testNow, true)
	if len(v.Machines) != 2 || len(v.Machines["0"].Containers) != 2 {
		t.Fatalf("machines = %v, containers of 0 = %v", v.Machines, v.Machines["0"].Containers)
	}
	var buf bytes.Buffer
	if err := output.WriteTables(&buf, v.MachineTable()); err != nil {
		t.Fatal(err)
	}
	want := `Machine   State    Address  Inst id  Base  AZ      Message
0         started           pending
0/lxd/2   pending           pending
0/lxd/10  started           pending
1         started           pending        zone-b
`
	if buf.String() != want {
		t.Errorf("machine table:\n%s", golden.Diff(want, buf.String()))
	}
}

func TestLocalTime(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("CEST", 2*3600)
	t.Cleanup(func() { time.Local = saved })
	v := NewView(fullStatus(), "lxd", testNow, false)
	if got := v.Controller.Timestamp; got != "22:20:15+02:00" {
		t.Errorf("timestamp = %q", got)
	}
	if got := v.Model.ModelStatus.Since; got != "21 Nov 2026 21:20:15+02:00" {
		t.Errorf("since = %q", got)
	}
	if got := NewView(fullStatus(), "lxd", testNow, true).Model.ModelStatus.Since; got != "21 Nov 2026 19:20:15Z" {
		t.Errorf("utc since = %q", got)
	}
}

func TestColor(t *testing.T) {
	s := &output.Streams{Color: true}
	tables := NewView(fullStatus(), "lxd", testNow, true).WithColor(s).Table()
	row := tables[2].Rows[0] // ghost/0
	if row[1] != "waiting" || row[2] != "\x1b[33mallocating\x1b[0m" {
		t.Errorf("unit row not coloured: %q", row)
	}
	if plain := NewView(fullStatus(), "lxd", testNow, true).Table(); strings.Contains(plain[2].Rows[0][2], "\x1b") {
		t.Error("colour without streams")
	}
}

// bigStatus is a model of n principal units, each on its own machine with one subordinate.
func bigStatus(n int) *jujupb.FullStatusResponse {
	fs := emptyStatus()
	app := &jujupb.ApplicationStatus{Name: "app", CharmName: "app", CharmRev: 1, Base: jammy}
	sub := &jujupb.ApplicationStatus{Name: "sub", CharmName: "sub", CharmRev: 1, Base: jammy, SubordinateTo: []string{"app"}}
	for i := range n {
		id := fmt.Sprint(i)
		addr := fmt.Sprintf("10.0.%d.%d", i/250, i%250)
		fs.Machines = append(fs.Machines, &jujupb.MachineStatus{
			Id: id, Base: jammy, InstanceId: "juju-d32b3c-" + id, DnsName: addr,
			AgentStatus: si("started", "", 10), InstanceStatus: si("running", "Running", 10),
		})
		name := fmt.Sprintf("app/%d", i)
		app.Units = append(app.Units, &jujupb.UnitStatus{
			Name: name, Machine: id, PublicAddress: addr, OpenPorts: []string{"80/tcp"},
			AgentStatus: si("idle", "", 5), WorkloadStatus: si("active", "ready", 5),
		})
		sub.Units = append(sub.Units, &jujupb.UnitStatus{
			Name: fmt.Sprintf("sub/%d", i), Principal: name, PublicAddress: addr,
			AgentStatus: si("idle", "", 5), WorkloadStatus: si("active", "", 5),
		})
	}
	fs.Applications = []*jujupb.ApplicationStatus{app, sub}
	return fs
}

// BenchmarkStatus1000 builds and renders the tabular status of 1,000 units (2,000 unit rows).
func BenchmarkStatus1000(b *testing.B) {
	fs := bigStatus(1000)
	for b.Loop() {
		if err := output.Write(io.Discard, output.Tabular, NewView(fs, "lxd", testNow, true)); err != nil {
			b.Fatal(err)
		}
	}
}

// Natural order everywhere: app/2 before app/10, machine 2 before 10, containers after their
// host; Juju's order across applications ("a-b/0" before "a/1").
func TestNaturalOrder(t *testing.T) {
	fs := emptyStatus()
	app := func(name string, units ...string) *jujupb.ApplicationStatus {
		a := &jujupb.ApplicationStatus{Name: name, CharmName: name}
		for _, u := range units {
			a.Units = append(a.Units, &jujupb.UnitStatus{Name: u, Machine: "1"})
		}
		return a
	}
	fs.Applications = []*jujupb.ApplicationStatus{app("app", "app/10", "app/2", "app/1"), app("a-b", "a-b/0"), app("a", "a/1")}
	for _, id := range []string{"10", "2", "1", "1/lxd/10", "1/lxd/9"} {
		fs.Machines = append(fs.Machines, &jujupb.MachineStatus{Id: id})
	}
	tables := NewView(fs, "lxd", testNow, true).Table()
	col := func(tbl output.Table) string {
		var names []string
		for _, r := range tbl.Rows {
			names = append(names, r[0])
		}
		return strings.Join(names, " ")
	}
	if got := col(tables[1]); got != "a a-b app" {
		t.Errorf("apps = %q", got)
	}
	if got := col(tables[2]); got != "a-b/0 a/1 app/1 app/2 app/10" {
		t.Errorf("units = %q", got)
	}
	if got := col(tables[3]); got != "1 1/lxd/9 1/lxd/10 2 10" {
		t.Errorf("machines = %q", got)
	}
	var buf bytes.Buffer
	if err := output.Write(&buf, output.Oneline, NewView(fs, "lxd", testNow, true)); err != nil {
		t.Fatal(err)
	}
	want := "- a/1:  (agent:, workload:)\n- a-b/0:  (agent:, workload:)\n- app/1:  (agent:, workload:)\n- app/2:  (agent:, workload:)\n- app/10:  (agent:, workload:)\n"
	if buf.String() != want {
		t.Errorf("oneline:\n%s", golden.Diff(want, buf.String()))
	}
}

// Messages are cut at 120 characters, the last three "...": model notes and the messages of
// applications, units and machines; not the reason a dying entity is not gone.
func TestMessagesCut(t *testing.T) {
	long := strings.Repeat("0123456789", 13)
	cut := long[:117] + "..."
	fs := emptyStatus()
	fs.Model.Status.Message = long
	fs.Machines = []*jujupb.MachineStatus{
		{Id: "0", AgentStatus: si("started", "", 1), InstanceStatus: si("running", long, 1)},
		{Id: "1", Life: "dying", AgentStatus: si("started", "", 1), BlockedBy: []string{long}},
	}
	fs.Applications = []*jujupb.ApplicationStatus{{Name: "app", CharmName: "app", Status: si("blocked", long, 1), Units: []*jujupb.UnitStatus{
		{Name: "app/0", Machine: "0", AgentStatus: si("executing", "running install hook", 1), WorkloadStatus: si("maintenance", long, 1)},
		{Name: "app/1", Machine: "1", Life: "dying", AgentStatus: si("idle", "", 1), WorkloadStatus: si("active", "", 1), BlockedBy: []string{long}},
	}}}
	tables := NewView(fs, "lxd", testNow, true).Table()
	checks := []struct {
		what, got, want string
	}{
		{"notes", tables[0].Rows[0][5], cut},
		{"app", tables[1].Rows[0][8], cut},
		{"unit", tables[2].Rows[0][6], ("(install) " + long)[:117] + "..."},
		{"dying unit", tables[2].Rows[1][6], "dying: " + long},
		{"machine", tables[3].Rows[0][6], cut},
		{"dying machine", tables[3].Rows[1][6], "dying: " + long},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s message = %q, want %q", c.what, c.got, c.want)
		}
	}
	// Characters, not bytes: a multi-byte message is not cut inside a character.
	if got := truncate(strings.Repeat("é", 130), 120); got != strings.Repeat("é", 117)+"..." {
		t.Errorf("truncate of é = %q", got)
	}
}

func TestFormatSince(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("CEST", 2*3600), time.FixedZone("NPT", 5*3600+45*60),
		time.FixedZone("W", -9*3600-30*60), time.FixedZone("odd", -30)}
	for i, base := range []time.Time{controllerTime, time.Date(1999, 12, 31, 23, 59, 59, 999, time.UTC), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 1, 2, 3, 0, time.UTC)} {
		for _, z := range zones {
			tm := base.Add(time.Duration(i) * 7919 * time.Second).In(z)
			if got, want := formatSince(tm), tm.Format(sinceLayout); got != want {
				t.Errorf("formatSince(%v) = %q, want %q", tm, got, want)
			}
		}
	}
	f := &sinceFormatter{utc: true}
	a, b := controllerTime.UnixNano(), controllerTime.Add(300*time.Millisecond).UnixNano()
	if f.format(a) != "21 Nov 2026 20:20:15Z" || f.format(b) != "21 Nov 2026 20:20:15Z" || f.format(0) != "" ||
		f.format(controllerTime.Add(time.Second).UnixNano()) != "21 Nov 2026 20:20:16Z" {
		t.Error("sinceFormatter wrong")
	}
	if got := f.format(-1); got != time.Unix(0, -1).UTC().Format(sinceLayout) {
		t.Errorf("before 1970: %q", got)
	}
}

func TestSummarySubnets(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"10.1.2.3", "10.0.0.0/8"}, {"172.16.5.4", "172.16.0.0/16"}, {"192.168.1.7", "192.168.1.0/24"}, {"fd00::1", "fd00::/64"},
	} {
		ip, _ := netip.ParseAddr(tt.addr)
		if got := defaultPrefix(ip).String(); got != tt.want {
			t.Errorf("defaultPrefix(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}

// BenchmarkStatus10000 builds and renders the tabular status of 10,000 units (20,000 unit rows,
// 10,000 machines); scripts/bench compares it with text/tabwriter.
func BenchmarkStatus10000(b *testing.B) {
	fs := bigStatus(10000)
	for b.Loop() {
		if err := output.Write(io.Discard, output.Tabular, NewView(fs, "lxd", testNow, true)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatusJSON10000 renders the json status of 10,000 units (view built once).
func BenchmarkStatusJSON10000(b *testing.B) {
	v := NewView(bigStatus(10000), "lxd", testNow, true)
	for b.Loop() {
		if err := output.Write(io.Discard, output.JSON, v); err != nil {
			b.Fatal(err)
		}
	}
}
