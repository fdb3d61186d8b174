package state_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

func TestParsePortRange(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"80/tcp", "80/tcp", ""},
		{"80", "80/tcp", ""},
		{"53/UDP", "53/udp", ""},
		{"8000-8005/udp", "8000-8005/udp", ""},
		{"8000-8000/tcp", "8000/tcp", ""},
		{"icmp", "icmp", ""},
		{"ICMP", "icmp", ""},
		{"0/tcp", "", `invalid port range "0/tcp": ports must be between 1 and 65535`},
		{"65536", "", `invalid port range "65536": ports must be between 1 and 65535`},
		{"90-80/tcp", "", `invalid port range "90-80/tcp": the first port is greater than the last`},
		{"80/sctp", "", `invalid port range "80/sctp": protocol must be "tcp", "udp" or "icmp"`},
		{"http", "", `invalid port range "http": expected <port>[/<protocol>] or <from>-<to>[/<protocol>]`},
		{"icmp/tcp", "", `invalid port range "icmp/tcp": expected <port>[/<protocol>] or <from>-<to>[/<protocol>]`},
	}
	for _, tt := range tests {
		p, err := state.ParsePortRange(tt.in)
		if tt.err != "" {
			if !errors.Is(err, apierr.NotValid) || err.Error() != tt.err {
				t.Errorf("ParsePortRange(%q) = %v, want %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || p.String() != tt.want {
			t.Errorf("ParsePortRange(%q) = %v %v, want %s", tt.in, p, err, tt.want)
		}
	}
}

func TestSetUnitPorts(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	unit := units[0]
	set := func(open, close []string) string {
		t.Helper()
		got, err := st.SetUnitPorts(ctx, uuid, unit, open, close)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	// Sorted by protocol, then numerically by port.
	if got := set([]string{"8080/tcp", "443", "80/tcp", "53/udp", "icmp", "9000-9005/tcp"}, nil); got != "icmp 80/tcp 443/tcp 8080/tcp 9000-9005/tcp 53/udp" {
		t.Fatalf("opened: %s", got)
	}
	u, _ := st.Unit(ctx, uuid, unit)
	if strings.Join(u.OpenPorts, " ") != "icmp 80/tcp 443/tcp 8080/tcp 9000-9005/tcp 53/udp" {
		t.Fatalf("stored: %v", u.OpenPorts)
	}
	// Opening what is open and closing what is closed change nothing, and write nothing.
	key := state.ModelPrefix(uuid) + "units/" + unit
	before, _ := st.Client().Get(ctx, key)
	if got := set([]string{"80/tcp"}, []string{"81/tcp"}); got != "icmp 80/tcp 443/tcp 8080/tcp 9000-9005/tcp 53/udp" {
		t.Fatalf("no change: %s", got)
	}
	after, _ := st.Client().Get(ctx, key)
	if before.Kvs[0].ModRevision != after.Kvs[0].ModRevision {
		t.Error("an unchanged port list was written")
	}
	if got := set([]string{"22"}, []string{"icmp", "8080", "53/udp"}); got != "22/tcp 80/tcp 443/tcp 9000-9005/tcp" {
		t.Fatalf("open and close: %s", got)
	}
	for _, tt := range []struct {
		open, close []string
		want        string
	}{
		{[]string{"9003/tcp"}, nil, `cannot open 9003/tcp on unit "wordpress/0": it conflicts with open port range 9000-9005/tcp`},
		{nil, []string{"9000-9001/tcp"}, `cannot close 9000-9001/tcp on unit "wordpress/0": it overlaps open port range 9000-9005/tcp`},
		{[]string{"25"}, []string{"25/tcp"}, `port range 25/tcp both opened and closed`},
		{[]string{"bad"}, nil, `invalid port range "bad": expected <port>[/<protocol>] or <from>-<to>[/<protocol>]`},
	} {
		if _, err := st.SetUnitPorts(ctx, uuid, unit, tt.open, tt.close); !errors.Is(err, apierr.NotValid) || err.Error() != tt.want {
			t.Errorf("open %v close %v: %v, want %s", tt.open, tt.close, err, tt.want)
		}
	}
	// The same range on another protocol does not conflict.
	if got := set([]string{"9003/udp"}, nil); got != "22/tcp 80/tcp 443/tcp 9000-9005/tcp 9003/udp" {
		t.Fatalf("udp beside tcp: %s", got)
	}
	if got := set(nil, []string{"22", "80", "443", "9000-9005/tcp", "9003/udp"}); got != "" {
		t.Fatalf("all closed: %q", got)
	}
	if u, _ := st.Unit(ctx, uuid, unit); len(u.OpenPorts) != 0 {
		t.Fatalf("stored after closing all: %v", u.OpenPorts)
	}
	if _, err := st.SetUnitPorts(ctx, uuid, "wordpress/9", []string{"80"}, nil); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unknown unit: %v", err)
	}
}

func TestSetApplicationVersion(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	if err := st.SetApplicationVersion(ctx, uuid, units[0], "6.4.1"); err != nil {
		t.Fatal(err)
	}
	app, _ := st.Application(ctx, uuid, "wordpress")
	if app.WorkloadVersion != "6.4.1" {
		t.Fatalf("version = %q", app.WorkloadVersion)
	}
	key := state.ModelPrefix(uuid) + "applications/wordpress"
	before, _ := st.Client().Get(ctx, key)
	if err := st.SetApplicationVersion(ctx, uuid, units[0], "6.4.1"); err != nil {
		t.Fatal(err)
	}
	after, _ := st.Client().Get(ctx, key)
	if before.Kvs[0].ModRevision != after.Kvs[0].ModRevision {
		t.Error("an unchanged version was written")
	}
	if err := st.SetApplicationVersion(ctx, uuid, "wordpress/7", "1"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unknown unit: %v", err)
	}
}
