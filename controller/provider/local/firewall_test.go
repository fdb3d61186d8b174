package local

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The rules are recorded in the instance directory, rewritten only when they change; an
// instance that never had one has no record, one whose rules went an empty one, and an
// instance already released records nothing.
func TestSetIngressRules(t *testing.T) {
	p := &Provider{dir: t.TempDir()}
	dir := p.instanceDir("juju-abc-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FirewallFile)
	if err := p.SetIngressRules("juju-abc-0", "0", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an instance that never had a rule has a firewall.json: %v", err)
	}
	rules := []IngressRule{{PortRange: "80/tcp", SourceCIDRs: []string{"0.0.0.0/0", "::/0"}}}
	if err := p.SetIngressRules("juju-abc-0", "0", rules); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := `{
  "note": "` + firewallNote + `",
  "machine": "0",
  "ingress-rules": [
    {
      "port-range": "80/tcp",
      "source-cidrs": [
        "0.0.0.0/0",
        "::/0"
      ]
    }
  ]
}
`
	if string(data) != want {
		t.Fatalf("firewall.json %s\nwant %s", data, want)
	}
	old := time.Unix(1_000_000, 0)
	_ = os.Chtimes(path, old, old)
	if err := p.SetIngressRules("juju-abc-0", "0", rules); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Error("unchanged rules were written again")
	}
	// Its rules gone (unexpose, close-port), the instance records that it has none.
	if err := p.SetIngressRules("juju-abc-0", "0", nil); err != nil {
		t.Fatal(err)
	}
	want = `{
  "note": "` + firewallNote + `",
  "machine": "0",
  "ingress-rules": []
}
`
	if data, err := os.ReadFile(path); err != nil || string(data) != want {
		t.Fatalf("firewall.json %q %v\nwant %q", data, err, want)
	}
	if err := p.SetIngressRules("juju-gone-1", "1", rules); err != nil {
		t.Errorf("released instance: %v", err)
	}
	if _, err := os.Stat(p.instanceDir("juju-gone-1")); !os.IsNotExist(err) {
		t.Error("a released instance's directory was made again")
	}
}
