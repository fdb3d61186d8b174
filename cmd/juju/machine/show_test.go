package machine

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
		wantIDs       string
		wantFormat    output.Format
	}{
		{args: "", wantIDs: "", wantFormat: output.YAML},
		{args: "0 0/lxd/1 --format tabular", wantIDs: "0 0/lxd/1", wantFormat: output.Tabular},
		{args: "3 --format json -o m.json --utc", wantIDs: "3", wantFormat: output.JSON},
		{args: "0 x", wantErr: `invalid machine id "x"`},
		{args: "01", wantErr: `invalid machine id "01"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *showOptions
			cmd := NewCmdShow(cmdutil.TestFactory(), func(o *showOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" && (strings.Join(got.Machines, " ") != tt.wantIDs || got.Format != tt.wantFormat) {
				t.Errorf("opts = %+v", got)
			}
		})
	}
}

// fakeShowStatus answers FullStatus with the machines of resp the patterns select, as the
// server does: an id selects the machine and, for a host, its containers.
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
	out := &jujupb.FullStatusResponse{Model: f.resp.Model, ControllerTime: f.resp.ControllerTime}
	for _, m := range f.resp.Machines {
		for _, p := range patterns {
			if m.Id == p || (!strings.Contains(p, "/") && strings.HasPrefix(m.Id, p+"/")) {
				out.Machines = append(out.Machines, m)
				break
			}
		}
		if len(patterns) == 0 {
			out.Machines = append(out.Machines, m)
		}
	}
	return out, nil
}

func showMachines() *jujupb.FullStatusResponse {
	at := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	jammy := &jujupb.Base{Name: "ubuntu", Channel: "22.04/stable"}
	si := func(status, msg string) *jujupb.StatusInfo {
		return &jujupb.StatusInfo{Status: status, Message: msg, Since: at.UnixNano()}
	}
	return &jujupb.FullStatusResponse{
		Model:          &jujupb.ModelStatus{Name: "default", Type: "iaas"},
		ControllerTime: at.Add(time.Hour).UnixNano(),
		Machines: []*jujupb.MachineStatus{
			{
				Id: "0", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-0", DnsName: "10.0.0.10",
				Hostname: "juju-d32b3c-0", Hardware: "arch=amd64 cores=2 availability-zone=zone-a",
				AgentStatus: si("started", ""), InstanceStatus: si("running", "Running"),
			},
			{
				Id: "0/lxd/0", Life: "alive", Base: jammy, InstanceId: "juju-d32b3c-0-lxd-0", DnsName: "10.0.3.2",
				AgentStatus: si("started", ""), InstanceStatus: si("running", "Container started"),
			},
			{
				Id: "1", Life: "dying", Base: jammy, InstanceId: "juju-d32b3c-1", DnsName: "10.0.0.11",
				AgentStatus: si("started", ""), InstanceStatus: si("running", "Running"),
				BlockedBy:  []string{"waiting for unit mysql/1 to be removed", "waiting for unit logging/1 to be removed"},
				ForceAfter: at.Add(90 * time.Minute).UnixNano(),
			},
			{
				Id: "2", Life: "alive", Base: jammy,
				AgentStatus: si("pending", ""), InstanceStatus: si("allocating", "starting"),
			},
		},
	}
}

func TestShowRun(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
	}{
		{name: "two", ids: []string{"1", "0"}},
		{name: "all"},
	}
	for _, tt := range tests {
		for _, f := range []output.Format{output.YAML, output.JSON, output.Tabular} {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				ios, out, errOut := output.TestStreams()
				fake := &fakeShowStatus{resp: showMachines()}
				opts := &showOptions{IO: ios, Format: f, Machines: tt.ids, UTC: true, ResolveModel: showTestModel,
					Client: func(context.Context) (showAPI, error) { return fake, nil }}
				if err := showRun(context.Background(), opts); err != nil {
					t.Fatal(err)
				}
				if fake.model != "uuid-default" || strings.Join(fake.patterns, " ") != strings.Join(tt.ids, " ") {
					t.Errorf("asked %s %q", fake.model, fake.patterns)
				}
				if errOut.Len() != 0 {
					t.Errorf("stderr = %q", errOut)
				}
				golden.Assert(t, out.String(), "show-machine/"+tt.name+"."+string(f)+".golden")
			})
		}
	}
}

func TestShowRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		fake    *fakeShowStatus
		ids     []string
		wantErr string
		wantIs  error
	}{
		{name: "not found", fake: &fakeShowStatus{resp: showMachines()}, ids: []string{"0", "7"},
			wantErr: "machine 7 not found", wantIs: apierr.NotFound},
		{name: "container not found", fake: &fakeShowStatus{resp: showMachines()}, ids: []string{"0/lxd/3"},
			wantErr: "machine 0/lxd/3 not found", wantIs: apierr.NotFound},
		{name: "failure", fake: &fakeShowStatus{err: apierr.Errorf(apierr.Unavailable, "controller unavailable")}, ids: []string{"0"},
			wantErr: `getting status of model "default": controller unavailable`, wantIs: apierr.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, _ := output.TestStreams()
			opts := &showOptions{IO: ios, Format: output.YAML, Machines: tt.ids, ResolveModel: showTestModel,
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

func showTestModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}
