package status

import (
	"bytes"
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// baseRiskStatus has a machine and an application on ubuntu@22.04/edge next to a stable one.
func baseRiskStatus() *jujupb.FullStatusResponse {
	fs := emptyStatus()
	edge := &jujupb.Base{Name: "ubuntu", Channel: "22.04/edge"}
	fs.Machines = []*jujupb.MachineStatus{
		{Id: "0", Base: jammy, InstanceId: "juju-d32b3c-0", AgentStatus: si("started", "", 5), InstanceStatus: si("running", "Running", 5)},
		{Id: "1", Base: edge, InstanceId: "juju-d32b3c-1", AgentStatus: si("started", "", 5), InstanceStatus: si("running", "Running", 5)},
	}
	fs.Applications = []*jujupb.ApplicationStatus{
		{Name: "edgy", CharmName: "edgy", CharmRev: 1, CharmOrigin: "local", Base: edge, Life: "alive", Status: si("active", "", 5),
			Units: []*jujupb.UnitStatus{{Name: "edgy/0", Machine: "1", WorkloadStatus: si("active", "", 5), AgentStatus: si("idle", "", 5)}}},
	}
	return fs
}

// As Juju shows it, a base keeps a risk other than stable: "ubuntu@22.04/edge" in the Base column,
// channel "22.04/edge" in JSON and YAML; a stable one is "ubuntu@22.04" and "22.04".
func TestBaseRiskGolden(t *testing.T) {
	for _, f := range []output.Format{output.Tabular, output.JSON, output.YAML} {
		var buf bytes.Buffer
		if err := output.Write(&buf, f, NewView(baseRiskStatus(), "lxd", testNow, true)); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, buf.String(), "status/base-risk."+string(f)+".golden")
	}
}

func TestDisplayBase(t *testing.T) {
	for in, want := range map[string]string{"22.04/stable": "ubuntu@22.04", "22.04": "ubuntu@22.04", "22.04/edge": "ubuntu@22.04/edge", "24.04/candidate": "ubuntu@24.04/candidate"} {
		if got := DisplayBase(baseView(&jujupb.Base{Name: "ubuntu", Channel: in})); got != want {
			t.Errorf("channel %q: %q, want %q", in, got, want)
		}
	}
	if got := DisplayBase(nil); got != "" {
		t.Errorf("no base: %q", got)
	}
}
