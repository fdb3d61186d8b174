package machine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

func TestNewCmdList(t *testing.T) {
	tests := []struct {
		args, wantErr string
		check         func(t *testing.T, o *listOptions)
	}{
		{args: "", check: func(t *testing.T, o *listOptions) {
			if o.Format != output.Tabular || o.Color || o.NoColor || o.Output != "" {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--format json -o m.json --utc -m other --no-color", check: func(t *testing.T, o *listOptions) {
			if o.Format != output.JSON || o.Output != "m.json" || !o.UTC || o.Model != "other" || !o.NoColor {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "--color", check: func(t *testing.T, o *listOptions) {
			if !o.Color {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "0", wantErr: `unrecognized args: ["0"]`},
		{args: "--color --no-color", wantErr: "cannot mix --no-color and --color"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *listOptions
			cmd := NewCmdList(cmdutil.TestFactory(), func(o *listOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if tt.wantErr == "" {
				tt.check(t, got)
			}
		})
	}
	cmd := NewCmdList(cmdutil.TestFactory(), func(*listOptions) error { return nil })
	if err := execute(cmd, "--format summary"); err == nil ||
		err.Error() != `invalid value "summary" for --format: expected one of json, tabular, yaml` {
		t.Errorf("--format summary: %v", err)
	}
	if cmd.Name() != "machines" || strings.Join(cmd.Aliases, " ") != "list-machines" {
		t.Errorf("name %q aliases %q", cmd.Name(), cmd.Aliases)
	}
}

// listMachines: showMachines plus machines 10 and 3, to show the natural order (2, 3, 10), and a
// message too long for the table.
func listMachines() *jujupb.FullStatusResponse {
	fs := showMachines()
	long := strings.Repeat("cannot start instance: no room on the host for the requested memory; ", 3)
	fs.Machines = append(fs.Machines,
		&jujupb.MachineStatus{Id: "10", Life: "alive", Base: fs.Machines[0].Base, InstanceId: "juju-d32b3c-10", DnsName: "10.0.0.20",
			AgentStatus: &jujupb.StatusInfo{Status: "started"}, InstanceStatus: &jujupb.StatusInfo{Status: "running", Message: "Running"}},
		&jujupb.MachineStatus{Id: "3", Life: "alive", Base: fs.Machines[0].Base,
			AgentStatus:    &jujupb.StatusInfo{Status: "error", Message: long},
			InstanceStatus: &jujupb.StatusInfo{Status: "provisioning error", Message: long}},
	)
	return fs
}

func runList(t *testing.T, fake *fakeShowStatus, opts *listOptions) (string, string, error) {
	t.Helper()
	ios, out, errOut := output.TestStreams()
	opts.IO = ios
	opts.UTC = true
	opts.ResolveModel = showTestModel
	opts.Client = func(context.Context) (listAPI, error) { return fake, nil }
	err := listRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestListRun(t *testing.T) {
	for _, f := range []output.Format{output.Tabular, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			fake := &fakeShowStatus{resp: listMachines()}
			out, errOut, err := runList(t, fake, &listOptions{Format: f})
			if err != nil {
				t.Fatal(err)
			}
			if fake.model != "uuid-default" || len(fake.patterns) != 0 {
				t.Errorf("asked %s %q", fake.model, fake.patterns)
			}
			if errOut != "" {
				t.Errorf("stderr = %q", errOut)
			}
			golden.Assert(t, out, "machines/all."+string(f)+".golden")
		})
	}
}

func TestListRunColor(t *testing.T) {
	out, _, err := runList(t, &fakeShowStatus{resp: listMachines()}, &listOptions{Format: output.Tabular, Color: true})
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, out, "machines/all-color.tabular.golden")

	// Colour on the terminal, but not with --no-color, into a file, or in json.
	for _, o := range []*listOptions{{Format: output.Tabular, NoColor: true}, {Format: output.JSON, Color: true}} {
		fake := &fakeShowStatus{resp: listMachines()}
		ios, stdout, _ := output.TestStreams()
		ios.Color, ios.IsTerminal = true, true
		o.IO, o.ResolveModel = ios, showTestModel
		o.Client = func(context.Context) (listAPI, error) { return fake, nil }
		if err := listRun(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stdout.String(), "\x1b") {
			t.Errorf("%+v: coloured", o)
		}
	}
}

func TestListRunEmpty(t *testing.T) {
	empty := &jujupb.FullStatusResponse{Model: &jujupb.ModelStatus{Name: "default", Type: "iaas"}}
	out, errOut, err := runList(t, &fakeShowStatus{resp: empty}, &listOptions{Format: output.Tabular})
	if err != nil || out != "" || errOut != "No machines to display.\n" {
		t.Errorf("empty: %v, stdout %q, stderr %q", err, out, errOut)
	}
	out, errOut, err = runList(t, &fakeShowStatus{resp: empty}, &listOptions{Format: output.JSON})
	if err != nil || out != `{"model":"default","machines":{}}`+"\n" || errOut != "" {
		t.Errorf("empty json: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

func TestListRunError(t *testing.T) {
	_, _, err := runList(t, &fakeShowStatus{err: apierr.Errorf(apierr.NotFound, `model "x" not found`)}, &listOptions{Format: output.Tabular})
	if !errors.Is(err, apierr.NotFound) || err.Error() != `getting status of model "default": model "x" not found` {
		t.Errorf("err = %v", err)
	}
}
