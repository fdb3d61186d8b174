package status

import (
	"slices"
	"strings"
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// hooksStatus is a model whose charms run hooks: units executing hooks (the agent's
// "running <hook> hook" becomes the message prefix), a failed hook, a unit whose remove hook
// has run (terminated), opened ports of several protocols and ranges, workload versions, and
// applications whose status is derived from their units.
func hooksStatus() *jujupb.FullStatusResponse {
	fs := emptyStatus()
	fs.Machines = []*jujupb.MachineStatus{
		{Id: "0", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-0", DnsName: "10.0.0.10",
			AgentStatus: si("started", "", 50), InstanceStatus: si("running", "Running", 52)},
		{Id: "1", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-1", DnsName: "10.0.0.11",
			AgentStatus: si("started", "", 40), InstanceStatus: si("running", "Running", 41)},
		{Id: "2", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-2", DnsName: "10.0.0.12",
			AgentStatus: si("started", "", 30), InstanceStatus: si("running", "Running", 31)},
	}
	fs.Applications = []*jujupb.ApplicationStatus{
		{
			Name: "haproxy", CharmName: "haproxy", CharmUrl: "local:haproxy-0", CharmOrigin: "local", Base: jammy,
			Life: "alive", WorkloadVersion: "2.4.24-0ubuntu0.22.04.1+esm1\nbuilt with OpenSSL 3.0.2",
			Units: []*jujupb.UnitStatus{{
				Name: "haproxy/0", Machine: "2", Life: "alive", Leader: true, PublicAddress: "10.0.0.12",
				OpenPorts:      []string{"8443/tcp", "53/udp", "80/tcp", "8000-8005/tcp", "443/tcp", "10000-10010/udp"},
				AgentStatus:    si("executing", "running website-relation-changed hook for wordpress/0", 1),
				WorkloadStatus: si("active", "serving 2 backends", 3),
			}},
		},
		{
			Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-3", CharmRev: 3, CharmOrigin: "local", Base: jammy,
			Life: "alive", WorkloadVersion: "8.0.36",
			Units: []*jujupb.UnitStatus{
				{
					Name: "mysql/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
					OpenPorts:   []string{"3306/tcp"},
					AgentStatus: si("idle", "", 10), WorkloadStatus: si("error", `hook failed: "config-changed"`, 10),
				},
				{
					Name: "mysql/1", Machine: "1", Life: "alive", PublicAddress: "10.0.0.11",
					AgentStatus: si("executing", "running install hook", 2), WorkloadStatus: si("maintenance", "installing charm software", 2),
				},
			},
		},
		{
			Name: "wordpress", CharmName: "wordpress", CharmUrl: "local:wordpress-1", CharmRev: 1, CharmOrigin: "local",
			Base: jammy, Life: "alive",
			Units: []*jujupb.UnitStatus{
				{
					Name: "wordpress/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
					AgentStatus: si("executing", "running start hook", 1), WorkloadStatus: si("waiting", "", 5),
				},
				{
					Name: "wordpress/1", Machine: "1", Life: "alive", PublicAddress: "10.0.0.11",
					AgentStatus: si("executing", "running remove hook", 1), WorkloadStatus: si("terminated", "", 1),
				},
			},
		},
	}
	return fs
}

func TestHooksGolden(t *testing.T) {
	for _, tt := range []struct {
		format output.Format
		golden string
	}{
		{output.Tabular, "status/hooks.tabular.golden"},
		{output.YAML, "status/hooks.yaml.golden"},
		{output.JSON, "status/hooks.json.golden"},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			s, stdout, _ := output.TestStreams()
			if err := output.Write(s.Out, tt.format, NewView(hooksStatus(), "lxd", testNow, true).WithColor(s)); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, stdout.String(), tt.golden)
		})
	}
}

func TestHooksView(t *testing.T) {
	v := NewView(hooksStatus(), "lxd", testNow, true)
	// Application status derived from the units when the charm set none (juju-cli.md §4).
	for app, want := range map[string]string{"mysql": "error", "wordpress": "waiting", "haproxy": "active"} {
		if got := v.Applications[app].ApplicationStatus; got.Current != want {
			t.Errorf("%s status = %+v, want %s", app, got, want)
		}
	}
	if got := v.Applications["mysql"].ApplicationStatus.Message; got != `hook failed: "config-changed"` {
		t.Errorf("mysql message = %q", got)
	}
	// open-ports in Juju's order: protocol, then port.
	want := []string{"80/tcp", "443/tcp", "8000-8005/tcp", "8443/tcp", "53/udp", "10000-10010/udp"}
	if got := v.Applications["haproxy"].Units["haproxy/0"].OpenPorts; !slices.Equal(got, want) {
		t.Errorf("open-ports = %q, want %q", got, want)
	}
	rows := v.unitTable().Rows
	byName := map[string][]string{}
	for _, r := range rows {
		byName[strings.TrimSuffix(strings.TrimSpace(r[0]), "*")] = r
	}
	if got := byName["haproxy/0"][5]; got != "80,443,8443/tcp 8000-8005/tcp 53/udp 10000-10010/udp" {
		t.Errorf("ports cell = %q", got)
	}
	if got := byName["haproxy/0"][6]; got != "(website-relation-changed) serving 2 backends" {
		t.Errorf("relation hook message = %q", got)
	}
	if got := byName["mysql/1"][6]; got != "(install) installing charm software" {
		t.Errorf("install message = %q", got)
	}
	if got := byName["wordpress/0"][6]; got != "(start)" {
		t.Errorf("start message = %q", got)
	}
	if got := byName["wordpress/1"][1]; got != "terminated" {
		t.Errorf("terminated workload = %q", got)
	}
	// Colours: terminated and error are red, maintenance yellow.
	s := &output.Streams{Color: true}
	colored := NewView(hooksStatus(), "lxd", testNow, true).WithColor(s).unitTable().Rows
	for _, r := range colored {
		switch strings.TrimSpace(r[0]) {
		case "wordpress/1":
			if r[1] != string(output.Red)+"terminated\x1b[0m" {
				t.Errorf("terminated colour = %q", r[1])
			}
		case "mysql/0*":
			if r[1] != string(output.Red)+"error\x1b[0m" {
				t.Errorf("error colour = %q", r[1])
			}
		case "mysql/1":
			if r[1] != string(output.Yellow)+"maintenance\x1b[0m" {
				t.Errorf("maintenance colour = %q", r[1])
			}
		}
	}
}

func TestSortPorts(t *testing.T) {
	tests := []struct{ in, want []string }{
		{nil, nil},
		{[]string{"443/tcp", "80/tcp"}, []string{"80/tcp", "443/tcp"}},
		{[]string{"53/udp", "80/tcp", "icmp", "22/tcp", "8000-8005/tcp"}, []string{"22/tcp", "80/tcp", "8000-8005/tcp", "53/udp", "icmp"}},
	}
	for _, tt := range tests {
		if got := sortPorts(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("sortPorts(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
