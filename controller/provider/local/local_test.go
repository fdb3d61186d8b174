package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/controller/agent"
)

func TestCheckConstraintsAgainstHost_LM5(t *testing.T) {
	p := &Provider{host: Host{Arch: "amd64", Cores: 2, MemMB: 24000, RootDiskMB: 100000}}
	tests := []struct {
		cons, want string
	}{
		{"", ""},
		{"mem=2G cores=2 arch=amd64 root-disk=10G", ""},
		{"cores=4", "cannot satisfy constraints: cores=4 (host has 2)"},
		{"mem=100G", "cannot satisfy constraints: mem=102400M (host has 24000M)"},
		{"arch=arm64 root-disk=1T", "cannot satisfy constraints: arch=arm64 (host is amd64), root-disk=1048576M (host has 100000M)"},
		{"container=lxd", "cannot satisfy constraints: container=lxd (no containers on the local provider)"},
	}
	for _, tt := range tests {
		err := p.CheckConstraints(tt.cons)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckConstraints(%q) = %q, want %q", tt.cons, got, tt.want)
		}
	}
}

func TestDetectHost(t *testing.T) {
	h, err := DetectHost(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if h.Cores == 0 || h.MemMB == 0 || h.RootDiskMB == 0 || h.Arch == "" {
		t.Fatalf("host = %+v", h)
	}
	if !strings.HasPrefix(h.Hardware(), "arch="+h.Arch+" cores=") {
		t.Fatalf("hardware = %q", h.Hardware())
	}
}

func TestInstanceIDIsStable(t *testing.T) {
	if got := InstanceID("0a1b2c3d-aaaa-bbbb-cccc-d32b3c123456", "3"); got != "juju-123456-3" {
		t.Fatalf("got %q", got)
	}
}

// fakeLauncher records what the provider asks of the agent runner.
type fakeLauncher struct {
	started, stopped []string
}

func (l *fakeLauncher) StartMachineAgent(dir string) error {
	l.started = append(l.started, dir)
	return nil
}

func (l *fakeLauncher) StopTree(dir string) { l.stopped = append(l.stopped, dir) }

func TestStopInstanceStopsEveryAgentAndRemovesTheInstance_LM3(t *testing.T) {
	launcher := &fakeLauncher{}
	p, err := New(t.TempDir(), "127.0.0.1:1", []byte("ca"), launcher)
	if err != nil {
		t.Fatal(err)
	}
	inst, password, err := p.StartInstance(context.Background(), StartArgs{ModelUUID: "0a1b2c3d-aaaa-bbbb-cccc-d32b3c123456", MachineID: "3"})
	if err != nil || password == "" {
		t.Fatalf("StartInstance: %v", err)
	}
	dir := p.instanceDir(inst.ID)
	if err := p.StartAgent(inst.ID); err != nil {
		t.Fatal(err)
	}
	if len(launcher.started) != 1 || launcher.started[0] != dir {
		t.Fatalf("started %v", launcher.started)
	}

	// --keep-instance: the agents stop, the instance stays.
	if err := p.StopAgents(inst.ID); err != nil {
		t.Fatal(err)
	}
	if len(launcher.stopped) != 1 || launcher.stopped[0] != dir {
		t.Fatalf("stopped %v", launcher.stopped)
	}
	if _, err := os.Stat(filepath.Join(dir, agent.ConfFile)); err != nil {
		t.Fatalf("kept instance lost its configuration: %v", err)
	}

	// Released: the whole tree of agents stops (the machine's and its units'), the directory goes.
	if err := p.StopInstance(inst.ID); err != nil {
		t.Fatal(err)
	}
	if len(launcher.stopped) != 2 || launcher.stopped[1] != dir {
		t.Fatalf("stopped %v", launcher.stopped)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("instance directory still there: %v", err)
	}
	// Idempotent: the provisioner retries after a failure.
	if err := p.StopInstance(inst.ID); err != nil {
		t.Fatal(err)
	}
}

// Every machine has a loopback address of its own, kept when it is provisioned again and freed
// when its instance goes; a provider started afresh (a controller restart) sees those taken.
func TestEachInstanceHasItsOwnAddress(t *testing.T) {
	dir := t.TempDir()
	p, err := New(dir, "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := func(p *Provider, machine string) string {
		t.Helper()
		inst, _, err := p.StartInstance(ctx, StartArgs{ModelUUID: "0a1b2c3d-aaaa-bbbb-cccc-d32b3c123456", MachineID: machine})
		if err != nil {
			t.Fatal(err)
		}
		return inst.DNSName
	}
	a, b := start(p, "0"), start(p, "1")
	if a != "127.1.0.1" || b != "127.1.0.2" {
		t.Fatalf("addresses %s, %s; want 127.1.0.1, 127.1.0.2", a, b)
	}
	if again := start(p, "0"); again != a {
		t.Fatalf("provisioned again: %s, want %s", again, a)
	}
	restarted, err := New(dir, "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	if c := start(restarted, "2"); c != "127.1.0.3" {
		t.Fatalf("after a restart: %s, want 127.1.0.3", c)
	}
	if err := restarted.StopInstance(InstanceID("0a1b2c3d-aaaa-bbbb-cccc-d32b3c123456", "0")); err != nil {
		t.Fatal(err)
	}
	if d := start(restarted, "3"); d != a {
		t.Fatalf("after its instance went, %s was not reused: got %s", a, d)
	}
}
