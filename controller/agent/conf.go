// Package agent runs machine and unit agents. Each talks to the controller only through client/,
// with its own credential, and reacts to watched changes (rules L-S).
package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// ConfFile is the agent's configuration inside its directory; it holds a secret, so it is 0600.
const ConfFile = "agent.conf"

// Conf is what an agent needs to reach the controller as itself.
type Conf struct {
	Tag      string `json:"tag"`
	Password string `json:"password"`
	Model    string `json:"model"`
	APIAddr  string `json:"api_addr"`
	CACert   string `json:"ca_cert"`
	// ID is the machine id or unit name.
	ID string `json:"id"`
	// Address is the machine's own address (the local provider gives each machine a loopback
	// address of its own), and Zone its availability zone; a machine's units inherit both.
	Address string `json:"address,omitempty"`
	Zone    string `json:"zone,omitempty"`
}

// defaultAddress is the address of an agent configured before machines had addresses of
// their own.
const defaultAddress = "127.0.0.1"

// address is the machine's address, for its units' private and public addresses.
func (c Conf) address() string {
	if c.Address == "" {
		return defaultAddress
	}
	return c.Address
}

// WriteConf writes dir/agent.conf (dir is created 0700).
func WriteConf(dir string, c Conf) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating agent dir: %w", err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding agent conf: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, ConfFile), data, 0o600)
}

// ReadConf reads dir/agent.conf.
func ReadConf(dir string) (Conf, error) {
	var c Conf
	data, err := os.ReadFile(filepath.Join(dir, ConfFile))
	if err != nil {
		return c, fmt.Errorf("reading agent conf: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("decoding %s: %w", filepath.Join(dir, ConfFile), err)
	}
	return c, nil
}
