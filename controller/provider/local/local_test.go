package local

import (
	"strings"
	"testing"
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
