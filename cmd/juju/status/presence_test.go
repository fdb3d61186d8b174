package status

import (
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// lostStatus is a model whose agents on machines 1 and 2 are not connected, as the controller
// sends it (apiserver status.go): the machines' agents down, the units' agents lost with their
// workloads unknown, but for mysql/2's error, which is kept; mysql's status derives from what
// its units stored (active), not from the unknown they show.
func lostStatus() *jujupb.FullStatusResponse {
	const notCommunicating = "agent is not communicating with the server"
	fs := emptyStatus()
	fs.Machines = []*jujupb.MachineStatus{
		{Id: "0", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-0", DnsName: "10.0.0.10",
			AgentStatus: si("started", "", 50), InstanceStatus: si("running", "Running", 52)},
		{Id: "1", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-1", DnsName: "10.0.0.11",
			AgentStatus: si("down", notCommunicating, 40), InstanceStatus: si("running", "Running", 41)},
		{Id: "2", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-2", DnsName: "10.0.0.12",
			AgentStatus: si("down", notCommunicating, 30), InstanceStatus: si("running", "Running", 31)},
	}
	fs.Applications = []*jujupb.ApplicationStatus{{
		Name: "mysql", CharmName: "mysql", CharmUrl: "local:mysql-3", CharmRev: 3, CharmOrigin: "local", Base: jammy,
		Life: "alive", WorkloadVersion: "8.0.36", Status: si("active", "Primary", 20), UnitCount: 3,
		Units: []*jujupb.UnitStatus{
			{
				Name: "mysql/0", Machine: "0", Life: "alive", Leader: true, PublicAddress: "10.0.0.10",
				OpenPorts:   []string{"3306/tcp"},
				AgentStatus: si("idle", "", 10), WorkloadStatus: si("active", "Primary", 20),
			},
			{
				Name: "mysql/1", Machine: "1", Life: "alive", PublicAddress: "10.0.0.11", OpenPorts: []string{"3306/tcp"},
				AgentStatus:    si("lost", notCommunicating, 15),
				WorkloadStatus: si("unknown", "agent lost, see 'juju show-status-log mysql/1'", 18),
			},
			{
				Name: "mysql/2", Machine: "2", Life: "alive", PublicAddress: "10.0.0.12",
				AgentStatus:    si("lost", notCommunicating, 5),
				WorkloadStatus: si("error", `hook failed: "start"`, 5),
			},
		},
	}}
	return fs
}

func TestLostGolden(t *testing.T) {
	for _, tt := range []struct {
		format output.Format
		golden string
	}{
		{output.Tabular, "status/lost.tabular.golden"},
		{output.YAML, "status/lost.yaml.golden"},
		{output.JSON, "status/lost.json.golden"},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			s, stdout, _ := output.TestStreams()
			if err := output.Write(s.Out, tt.format, NewView(lostStatus(), "lxd", testNow, true).WithColor(s)); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, stdout.String(), tt.golden)
		})
	}
}

// Lost units are not ready: Scale counts the idle one only, as Juju's "1/3".
func TestLostView(t *testing.T) {
	v := NewView(lostStatus(), "lxd", testNow, true)
	if got := v.Applications["mysql"]; got.ready != 1 || got.desired != 3 {
		t.Errorf("mysql scale %d/%d, want 1/3", got.ready, got.desired)
	}
	if got := v.Machines["1"].JujuStatus; got.Current != "down" || got.Message != "agent is not communicating with the server" {
		t.Errorf("machine 1 juju-status %+v", got)
	}
	if got := v.Applications["mysql"].Units["mysql/1"].JujuStatus; got.Current != "lost" {
		t.Errorf("mysql/1 juju-status %+v", got)
	}
}
