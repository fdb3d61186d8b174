package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// There is no firewall on the local provider: every instance is a directory of this host,
// whose ports are open to whoever can reach the host. What a cloud's firewall would open for an
// instance (juju expose, open-port) is recorded in FirewallFile in the instance directory, and
// nothing is opened or closed.

// FirewallFile records an instance's ingress rules: what the provider would open.
const FirewallFile = "firewall.json"

// SubnetCIDR is the local provider's one subnet, that of its one space (state.DefaultSpace):
// every instance has a loopback address of its own in it.
const SubnetCIDR = "127.0.0.0/8"

// IngressRule is one port range an instance would accept connections on, and from where.
type IngressRule struct {
	// PortRange is as open-port gives it: "80/tcp", "8000-8005/udp", "icmp".
	PortRange string `json:"port-range"`
	// SourceCIDRs are sorted.
	SourceCIDRs []string `json:"source-cidrs"`
}

// firewallRecord is FirewallFile's content.
type firewallRecord struct {
	Note         string        `json:"note"`
	Machine      string        `json:"machine"`
	IngressRules []IngressRule `json:"ingress-rules"`
}

const firewallNote = "no firewall on the local provider: these are the ingress rules a cloud firewall would have; nothing is opened or closed"

// SetIngressRules records the ingress rules of a machine's instance in its FirewallFile,
// rewriting it only when they changed. An instance that has never had a rule has no file (a
// deploy of thousands of machines makes no file per machine to say so, issue 16); one whose
// rules all went records an empty list. An instance whose directory is gone (released) has
// nothing to record.
func (p *Provider) SetIngressRules(instanceID, machineID string, rules []IngressRule) error {
	dir := p.instanceDir(instanceID)
	path := filepath.Join(dir, FirewallFile)
	old, readErr := os.ReadFile(path)
	if errors.Is(readErr, os.ErrNotExist) {
		if len(rules) == 0 {
			return nil
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	if rules == nil {
		rules = []IngressRule{}
	}
	data, err := json.MarshalIndent(firewallRecord{Note: firewallNote, Machine: machineID, IngressRules: rules}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the ingress rules of instance %s: %w", instanceID, err)
	}
	data = append(data, '\n')
	if readErr == nil && bytes.Equal(old, data) {
		return nil
	}
	// Unsynced: the firewaller's first pass after a restart writes what the store says again
	// (the file is rewritten whenever it differs), and a deploy of 10,000 machines spares
	// 10,000 syncs.
	return atomicfile.WriteUnsynced(path, data, 0o644)
}
