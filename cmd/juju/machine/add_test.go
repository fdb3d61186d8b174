package machine

import (
	"bytes"
	"context"
	"errors"
	"testing"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

func TestNewCmdAdd(t *testing.T) {
	tests := []struct {
		args, wantErr, wantStderr string
		check                     func(t *testing.T, o *addOptions)
	}{
		{args: "", check: func(t *testing.T, o *addOptions) {
			if o.NumMachines != 1 || o.place != nil || !o.base.IsZero() || o.cons.String() != "" {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "-n 2 --base ubuntu@22.04 --constraints cores=1 --constraints mem=1G", check: func(t *testing.T, o *addOptions) {
			if o.NumMachines != 2 || o.base.String() != "ubuntu@22.04/stable" || o.cons.String() != "cores=1 mem=1024M" {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "lxd:0", check: func(t *testing.T, o *addOptions) {
			if o.place.GetScope() != "lxd" || o.place.GetDirective() != "0" {
				t.Errorf("placement = %v", o.place)
			}
		}},
		{args: "kvm", check: func(t *testing.T, o *addOptions) {
			if o.place.GetScope() != "kvm" || o.place.GetDirective() != "" {
				t.Errorf("placement = %v", o.place)
			}
		}},
		{args: "--series jammy", wantStderr: "WARNING series flag is deprecated, use --base instead\n", check: func(t *testing.T, o *addOptions) {
			if o.base.String() != "ubuntu@22.04/stable" {
				t.Errorf("base = %s", o.base)
			}
		}},
		{args: "a b", wantErr: `unrecognized args: ["b"]`},
		{args: "--series jammy --base ubuntu@22.04", wantErr: "--series and --base cannot be specified together"},
		{args: "-n 0", wantErr: "-n must be a positive integer"},
		{args: "-n -1", wantErr: "-n must be a positive integer"},
		{args: "-n 10001", wantErr: "-n 10001: at most 10000 machines per call"},
		{args: "-n 100000000", wantErr: "-n 100000000: at most 10000 machines per call"},
		{args: "-n 4294967297", wantErr: "-n 4294967297: at most 10000 machines per call"},
		{args: "-n 1000", check: func(t *testing.T, o *addOptions) {
			if o.NumMachines != 1000 {
				t.Errorf("opts = %+v", o)
			}
		}},
		{args: "-n 2 lxd", wantErr: "cannot use -n when specifying a placement directive"},
		{args: "3", wantErr: "machine-id cannot be specified when adding machines"},
		{args: "ssh:ubuntu@10.0.0.1", wantErr: `manual provisioning ("ssh:ubuntu@10.0.0.1") is not supported by the local provider: add a machine with "juju add-machine"`},
		{args: "zone=a", wantErr: `placement directive "zone=a" is not supported by the local provider`},
		{args: "docker:1", wantErr: `invalid placement directive "docker:1"`},
		{args: "--base ubuntu", wantErr: "expected base string to contain os and channel separated by '@'"},
		{args: "--base centos@7", wantErr: `base "centos@7" is not supported, the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04`},
		{args: "--base ubuntu@19.07", wantErr: `base "ubuntu@19.07" is not supported, the local provider runs any Ubuntu release from ubuntu@12.04 to ubuntu@26.04`},
		{args: "--series nope", wantErr: `attempting to convert "nope" to a base: series "nope" not valid`, wantStderr: "WARNING series flag is deprecated, use --base instead\n"},
		{args: "--constraints container=lxd", wantErr: `container constraint "lxd" not allowed when adding a machine`},
		{args: "--constraints mem", wantErr: `malformed constraint "mem"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got *addOptions
			f := cmdutil.TestFactory()
			cmd := NewCmdAdd(f, func(o *addOptions) error { got = o; return nil })
			checkErr(t, execute(cmd, tt.args), tt.wantErr, true)
			if stderr := f.IO.ErrOut.(*bytes.Buffer).String(); stderr != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr, tt.wantStderr)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

type fakeAddMachines struct {
	req     *jujupb.AddMachinesRequest
	results []*jujupb.AddMachineResult
	err     error
}

func (f *fakeAddMachines) AddMachines(_ context.Context, req *jujupb.AddMachinesRequest) ([]*jujupb.AddMachineResult, error) {
	f.req = req
	return f.results, f.err
}

func runAdd(t *testing.T, fake *fakeAddMachines, args string) (string, error) {
	t.Helper()
	f := cmdutil.TestFactory()
	cmd := NewCmdAdd(f, func(o *addOptions) error {
		o.ResolveModel = func(context.Context) (*cmdutil.ModelRef, error) {
			return &cmdutil.ModelRef{Name: "default", UUID: "uuid-default"}, nil
		}
		o.Client = func(context.Context) (addAPI, error) { return fake, nil }
		return addRun(context.Background(), o)
	})
	err := execute(cmd, args)
	return f.IO.ErrOut.(*bytes.Buffer).String(), err
}

func TestAddRun(t *testing.T) {
	fake := &fakeAddMachines{results: []*jujupb.AddMachineResult{{MachineId: "3"}, {MachineId: "4"}}}
	stderr, err := runAdd(t, fake, "-n 2 --base ubuntu@22.04 --constraints cores=1")
	if err != nil {
		t.Fatal(err)
	}
	if stderr != "created machine 3\ncreated machine 4\n" {
		t.Errorf("stderr = %q", stderr)
	}
	if len(fake.req.GetParams()) != 2 || fake.req.GetModel() != "uuid-default" {
		t.Fatalf("request = %v", fake.req)
	}
	p := fake.req.GetParams()[0]
	if p.GetBase().GetName() != "ubuntu" || p.GetBase().GetChannel() != "22.04/stable" || p.GetConstraints() != "cores=1" || p.GetPlacement() != nil {
		t.Errorf("params = %v", p)
	}

	fake = &fakeAddMachines{results: []*jujupb.AddMachineResult{{MachineId: "0/lxd/2"}}}
	stderr, err = runAdd(t, fake, "lxd:0")
	if err != nil || stderr != "created container 0/lxd/2\n" {
		t.Errorf("container: %q, %v", stderr, err)
	}
	if pl := fake.req.GetParams()[0].GetPlacement(); pl.GetScope() != "lxd" || pl.GetDirective() != "0" {
		t.Errorf("placement = %v", pl)
	}
}

func TestAddRunFailures(t *testing.T) {
	fake := &fakeAddMachines{results: []*jujupb.AddMachineResult{
		{MachineId: "5"},
		{Error: `machine 9 not found`},
		{Error: `cannot add a container to dying machine 1`},
	}}
	stderr, err := runAdd(t, fake, "-n 3")
	if stderr != "created machine 5\nfailed to create 2 machines\n" {
		t.Errorf("stderr = %q", stderr)
	}
	checkErr(t, err, "machine 9 not found, cannot add a container to dying machine 1", false)

	fake = &fakeAddMachines{results: []*jujupb.AddMachineResult{{Error: "boom"}}}
	stderr, err = runAdd(t, fake, "")
	if stderr != "failed to create 1 machine\n" || err == nil || err.Error() != "boom" {
		t.Errorf("one failure: %q, %v", stderr, err)
	}
}

// A call the controller refuses as a whole added nothing: its error is the one line shown.
func TestAddRunRefusedWhole(t *testing.T) {
	fake := &fakeAddMachines{err: errors.New(`cannot add machine: model "default" is being destroyed`)}
	stderr, err := runAdd(t, fake, "-n 3")
	if stderr != "" {
		t.Errorf("stderr = %q", stderr)
	}
	checkErr(t, err, `cannot add machine: model "default" is being destroyed`, false)
}
