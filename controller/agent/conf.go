// Package agent runs machine and unit agents. Each talks to the controller only through client/,
// with its own credential, and reacts to watched changes (rules L-S).
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unique"

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
	// UID and GID are the machine's own user and group (0: none), given by the local provider
	// when the controller runs as root: the processes the machine's agents start for charm
	// code (hooks, actions, juju exec, juju ssh sessions) run as them, so that charm code can
	// read nothing of the controller or of other machines. A machine's units inherit them.
	UID int `json:"uid,omitempty"`
	GID int `json:"gid,omitempty"`
	// Charm is, for a unit, the charm its deployer unpacked in its directory: the unit's
	// record starts with it (readUnitRecord), which spares a deploy a second file to write
	// and sync per unit.
	Charm string `json:"charm,omitempty"`
}

// isolated reports whether the machine's charm code runs as the machine's own uid: the machine
// has one and this process may switch to it (a controller restarted without root cannot).
func (c Conf) isolated() bool { return c.UID > 0 && runsAsRoot }

// runsAsRoot is read once: agents never change their process's user, and isolated is asked
// several times for every unit deployed.
var runsAsRoot = os.Geteuid() == 0

// credential is who processes for charm code run as: nil (this process's own user) unless
// isolated. Groups is empty, not nil, so that the process drops the agent's groups.
func (c Conf) credential() *syscall.Credential {
	if !c.isolated() {
		return nil
	}
	return &syscall.Credential{Uid: uint32(c.UID), Gid: uint32(c.GID), Groups: []uint32{}}
}

// procAttr is how a process for charm code starts: in its own process group, so that a time
// limit or a cancel kills what it started too; killed with SIGKILL when the agent's process
// dies, so that no hook outlives its agent (a restarted agent would run it again beside it);
// and as the machine's uid when isolated (the kernel sets the death signal after the switch,
// which would otherwise clear it).
func (c Conf) procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: c.credential()}
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

// WriteConf writes dir/agent.conf (dir is created 0700). When the conf names a machine uid,
// dir becomes root:<gid> 0710: the machine's processes may pass through it to what is theirs
// below (the charm, the home directory), but not list it, and nothing in it (agent.conf, the
// logs, the uniter's record, all root's and 0600) is open to them. Other uids may not enter it.
func WriteConf(dir string, c Conf) error {
	return writeConf(dir, c, atomicfile.Write)
}

// WriteConfUnsynced is WriteConf without waiting for the disk: for a caller that holds a lock
// while it writes (the local provider's uid claims), which calls SyncConf once it has let go,
// or one that writes the file again when a crash lost it (a unit's, deployer.deploy).
func WriteConfUnsynced(dir string, c Conf) error {
	return writeConf(dir, c, atomicfile.WriteUnsynced)
}

// SyncConf makes dir/agent.conf, written by WriteConfUnsynced, durable.
func SyncConf(dir string) error { return atomicfile.Sync(filepath.Join(dir, ConfFile)) }

func writeConf(dir string, c Conf, write func(string, []byte, os.FileMode) error) error {
	if err := prepareAgentDir(dir, c); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding agent conf: %w", err)
	}
	return write(filepath.Join(dir, ConfFile), data, 0o600)
}

// prepareAgentDir makes dir (0700), or, when c names a machine uid, root:<gid> 0710 (see
// WriteConf): an agent's directory, or the units/ and subordinates/ directories that hold them.
// A directory that is already as it should be costs one stat: a deploy prepares the same
// directories more than once, and the agent host deploys thousands.
func prepareAgentDir(dir string, c Conf) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) && preparedAlready(dir, c) {
		return nil
	}
	if err != nil {
		err = os.MkdirAll(dir, 0o700) // its parents missing, or something else in its place
	}
	if err != nil {
		return fmt.Errorf("creating agent dir: %w", err)
	}
	if c.isolated() {
		if err := errors.Join(os.Chown(dir, 0, c.GID), os.Chmod(dir, 0o710)); err != nil {
			return fmt.Errorf("opening agent dir to its machine's uid: %w", err)
		}
	}
	return nil
}

// preparedAlready reports whether dir is a directory (not a link) that prepareAgentDir made
// for c: when c is isolated, root:<gid> 0710.
func preparedAlready(dir string, c Conf) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if !c.isolated() {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().Perm() == 0o710 && st.Uid == 0 && int(st.Gid) == c.GID
}

// homeDirName is the home directory of an isolated machine's charm code, in a unit's directory
// (hooks, actions, juju exec) and in a machine's (juju exec --machine, juju ssh sessions).
const homeDirName = "home"

// ensureHome makes dir/home, the machine uid's own (0700), and returns it. It is made by root
// in dir, which the uid cannot write, so the uid cannot have put anything in its place.
func ensureHome(dir string, c Conf) (string, error) {
	home := filepath.Join(dir, homeDirName)
	if err := os.Mkdir(home, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("making the home directory: %w", err)
	}
	if c.isolated() {
		if err := errors.Join(os.Lchown(home, c.UID, c.GID), os.Chmod(home, 0o700)); err != nil {
			return "", fmt.Errorf("giving the home directory to the machine's uid: %w", err)
		}
	}
	return home, nil
}

// ReadConf reads dir/agent.conf.
func ReadConf(dir string) (Conf, error) {
	var c Conf
	data, err := atomicfile.Read(filepath.Join(dir, ConfFile))
	if err != nil {
		return c, fmt.Errorf("reading agent conf: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("decoding %s: %w", filepath.Join(dir, ConfFile), err)
	}
	// Every agent of a controller has the same CA certificate, address and (mostly) model: one
	// copy each for all of them, where a copy per agent was a tenth of the agent host's heap of
	// 100,000 units (issue 16).
	c.CACert, c.APIAddr, c.Model = unique.Make(c.CACert).Value(), unique.Make(c.APIAddr).Value(), unique.Make(c.Model).Value()
	return c, nil
}
