// Package local is the local provider: an instance is a directory under the controller's data
// directory plus a machine agent, and constraints are checked against what this host really has.
package local

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/constraints"
)

// Host is what this machine offers every instance.
type Host struct {
	Arch       string
	Cores      uint64
	MemMB      uint64
	RootDiskMB uint64
	Hostname   string
}

// Hardware is the hardware characteristics string shown in status. The availability zone is
// the host's name, as on a one-host LXD cloud; units see it as JUJU_AVAILABILITY_ZONE.
func (h Host) Hardware() string {
	hw := fmt.Sprintf("arch=%s cores=%d mem=%dM root-disk=%dM", h.Arch, h.Cores, h.MemMB, h.RootDiskMB)
	if h.Hostname != "" {
		hw += " availability-zone=" + h.Hostname
	}
	return hw
}

// Launcher starts the agent of an instance directory and stops agents (agent.Runner).
type Launcher interface {
	StartMachineAgent(dir string) error
	// StopTree stops the agent of dir and every agent in a directory below it: an instance's
	// machine agent, its units' agents and their subordinates' agents.
	StopTree(dir string)
}

// Provider makes instances on this host.
type Provider struct {
	dir      string
	host     Host
	launcher Launcher
	apiAddr  string
	caCert   string
	// mu serialises address allocation between the provisioners' calls. used maps the
	// addresses taken (as numbers below 127.0.0.0/8) to their instances and byInstance the
	// other way; both are nil until first needed. Every address below free is taken, so an
	// allocation starts there and costs nothing in proportion to the instances (issue 16).
	mu         sync.Mutex
	used       map[int]string
	byInstance map[string]int
	free       int
	// uids gives machines uids of their own (uid.go); nil when this process cannot (not root).
	uids *uidAllocator
}

// New returns a provider keeping instances under dir/instances. When this process can give
// machines uids of their own (Isolation), it opens the way to the instances to them: the data
// directory and instances/ become 0711 and every directory above gains o+x, so that a
// machine's processes can pass through to what is theirs, and list and read nothing there.
func New(dir, apiAddr string, caCert []byte, launcher Launcher) (*Provider, error) {
	host, err := DetectHost(dir)
	if err != nil {
		return nil, err
	}
	p := &Provider{dir: filepath.Join(dir, "instances"), host: host, launcher: launcher, apiAddr: apiAddr, caCert: string(caCert)}
	if on, _ := Isolation(); on {
		if err := openPath(p.dir); err != nil {
			return nil, err
		}
		p.uids = &uidAllocator{dir: UIDClaimsDir}
	}
	return p, nil
}

// openPath makes the instances directory and the data directory 0711 and gives every directory
// above them o+x (search, never read): a machine uid must walk the path to its instance. What
// the data directory holds besides the instances loses every right of others (public
// certificates included): it was private behind the directory's 0700, and stays so.
func openPath(instances string) error {
	if err := os.MkdirAll(instances, 0o711); err != nil {
		return fmt.Errorf("making the instances directory: %w", err)
	}
	abs, err := filepath.Abs(instances)
	if err != nil {
		return err
	}
	for _, d := range []string{abs, filepath.Dir(abs)} {
		if err := os.Chmod(d, 0o711); err != nil {
			return fmt.Errorf("opening %s to the machines' uids: %w", d, err)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(abs))
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(filepath.Dir(abs), e.Name())
		fi, err := os.Lstat(p)
		if err != nil || p == abs || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm()&0o007 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&^0o007); err != nil {
			return fmt.Errorf("closing %s to the machines' uids: %w", p, err)
		}
	}
	for d := filepath.Dir(filepath.Dir(abs)); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("opening %s to the machines' uids: %w", d, err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				return fmt.Errorf("opening %s to the machines' uids: %w", d, err)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// StartArgs describe the machine an instance is for.
type StartArgs struct {
	ModelUUID   string
	MachineID   string
	Constraints string
}

// InstanceID names a machine's instance: stable, so a restarted controller finds it again.
func InstanceID(modelUUID, machineID string) string {
	short := modelUUID
	if len(short) > 6 {
		short = short[len(short)-6:]
	}
	return "juju-" + short + "-" + strings.ReplaceAll(machineID, "/", "-")
}

// CheckConstraints says why the host cannot satisfy cons, or nil.
func (p *Provider) CheckConstraints(cons string) error {
	v, err := constraints.Parse(cons)
	if err != nil {
		return err
	}
	var problems []string
	if v.Arch != nil && *v.Arch != "" && *v.Arch != p.host.Arch {
		problems = append(problems, fmt.Sprintf("arch=%s (host is %s)", *v.Arch, p.host.Arch))
	}
	if v.Cores != nil && *v.Cores > p.host.Cores {
		problems = append(problems, fmt.Sprintf("cores=%d (host has %d)", *v.Cores, p.host.Cores))
	}
	if v.Mem != nil && *v.Mem > p.host.MemMB {
		problems = append(problems, fmt.Sprintf("mem=%dM (host has %dM)", *v.Mem, p.host.MemMB))
	}
	if v.RootDisk != nil && *v.RootDisk > p.host.RootDiskMB {
		problems = append(problems, fmt.Sprintf("root-disk=%dM (host has %dM)", *v.RootDisk, p.host.RootDiskMB))
	}
	if v.Container != nil && *v.Container != "" && *v.Container != "none" {
		problems = append(problems, fmt.Sprintf("container=%s (no containers on the local provider)", *v.Container))
	}
	if len(problems) > 0 {
		return fmt.Errorf("cannot satisfy constraints: %s", strings.Join(problems, ", "))
	}
	return nil
}

// StartInstance checks the constraints and makes the instance directory with the agent's
// configuration (a fresh credential); StartAgent starts the agent once the instance is
// recorded. It returns the instance and the agent's password, whose hash the provisioner
// records.
func (p *Provider) StartInstance(ctx context.Context, args StartArgs) (state.Instance, string, error) {
	if err := p.CheckConstraints(args.Constraints); err != nil {
		return state.Instance{}, "", err
	}
	id := InstanceID(args.ModelUUID, args.MachineID)
	password, err := state.NewPassword()
	if err != nil {
		return state.Instance{}, "", err
	}
	// An instance started but never recorded (the controller's workers changed owner in
	// between) keeps its credential: the old owner's record may still land. The provisioner
	// starts a machine's instance once at a time, so its directory needs no lock.
	if c, err := agent.ReadConf(p.instanceDir(id)); err == nil && c.Password != "" && c.Tag == "machine-"+args.MachineID && c.Model == args.ModelUUID {
		password = c.Password
	}
	p.mu.Lock()
	addr, err := p.address(id)
	p.mu.Unlock()
	if err != nil {
		return state.Instance{}, "", err
	}
	conf := agent.Conf{
		Tag: "machine-" + args.MachineID, Password: password, Model: args.ModelUUID,
		APIAddr: p.apiAddr, CACert: p.caCert, ID: args.MachineID, Address: addr, Zone: p.host.Hostname,
	}
	if p.uids == nil {
		if err := agent.WriteConf(p.instanceDir(id), conf); err != nil {
			return state.Instance{}, "", err
		}
	} else if err := p.writeClaimedConf(id, conf); err != nil {
		return state.Instance{}, "", err
	}
	inst := state.Instance{ID: id, Hardware: p.host.Hardware(), DNSName: addr, Hostname: id}
	return inst, password, nil
}

// writeClaimedConf gives the instance a uid and writes its agent.conf naming it. The claim
// stays locked until agent.conf records the uid (see uidAllocator.claim), which every
// controller on the host waits for; the write reaches the disk after the lock is let go, so
// that the machines a provisioner starts side by side wait on the disk together, not one
// after another (issue 16). A crash before the sync leaves a claim whose instance has no
// agent.conf naming it: stale, as if never made, and the machine was not recorded yet.
func (p *Provider) writeClaimedConf(id string, conf agent.Conf) error {
	uid, unlock, err := p.uids.claim(p.instanceDir(id))
	if err != nil {
		return err
	}
	conf.UID, conf.GID = uid, uid
	err = agent.WriteConfUnsynced(p.instanceDir(id), conf)
	unlock()
	if err != nil {
		return err
	}
	return agent.SyncConf(p.instanceDir(id))
}

// StartAgent starts (or restarts, after a controller restart) the agent of an instance.
func (p *Provider) StartAgent(instanceID string) error {
	return p.launcher.StartMachineAgent(p.instanceDir(instanceID))
}

// StopAgents stops, for good, the machine agent of an instance and every unit agent it runs,
// and leaves the instance itself alone: a dead machine whose instance is kept (L-M3,
// remove-machine --keep-instance). Stopping agents that do not run is not an error.
func (p *Provider) StopAgents(instanceID string) error {
	p.launcher.StopTree(p.instanceDir(instanceID))
	return nil
}

// StopInstance releases an instance (L-M3): it stops every agent of the instance (StopAgents),
// then removes the instance directory. Stopping an instance already gone is not an error.
func (p *Provider) StopInstance(instanceID string) error {
	if err := p.StopAgents(instanceID); err != nil {
		return err
	}
	conf, confErr := agent.ReadConf(p.instanceDir(instanceID))
	if err := os.RemoveAll(p.instanceDir(instanceID)); err != nil {
		return fmt.Errorf("removing instance %s: %w", instanceID, err)
	}
	p.releaseAddress(instanceID)
	if p.uids != nil && confErr == nil && conf.UID != 0 {
		// What the machine's charm code left running (a daemon a hook started) goes with it:
		// the uid may be the next machine's. The claim goes after the directory: a claim
		// whose instance is gone is stale anyway, so a crash in between frees the uid too.
		killUID(conf.UID)
		if err := p.uids.release(p.instanceDir(instanceID), conf.UID); err != nil {
			return fmt.Errorf("removing instance %s: %w", instanceID, err)
		}
	}
	return nil
}

func (p *Provider) instanceDir(id string) string { return filepath.Join(p.dir, id) }

// address gives instance id a loopback address of its own (every 127.0.0.0/8 address reaches
// this host), so that units of one application on two machines can each bind the same port.
// An instance keeps the address in its agent configuration; a new one takes the lowest free
// address from 127.1.0.1 on (127.0.0.x is left to the host and the controller). The addresses
// in use are read from the instances once, then kept up to date here. Callers hold p.mu.
func (p *Provider) address(id string) (string, error) {
	if conf, err := agent.ReadConf(p.instanceDir(id)); err == nil && conf.Address != "" {
		return conf.Address, nil // provisioned again (retry-provisioning): same address
	}
	if p.used == nil {
		entries, err := os.ReadDir(p.dir)
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("listing instances: %w", err)
		}
		p.used, p.byInstance, p.free = map[int]string{}, map[string]int{}, firstAddress
		for _, e := range entries {
			if conf, err := agent.ReadConf(filepath.Join(p.dir, e.Name())); err == nil && conf.Address != "" {
				if n, ok := addressNumber(conf.Address); ok {
					p.used[n], p.byInstance[e.Name()] = e.Name(), n
				}
			}
		}
	}
	for n := p.free; n < 1<<24; n++ {
		if last := n & 0xff; last == 0 || last == 0xff {
			continue
		}
		if _, taken := p.used[n]; !taken {
			p.used[n], p.byInstance[id], p.free = id, n, n+1
			return fmt.Sprintf("127.%d.%d.%d", n>>16, (n>>8)&0xff, n&0xff), nil
		}
	}
	return "", fmt.Errorf("no loopback address left for instance %s", id)
}

// firstAddress is 127.1.0.0: 127.0.0.0/16 is left to the controller and the host.
const firstAddress = 1 << 16

// addressNumber is the inverse of the formatting in address: 127.a.b.c → a<<16 | b<<8 | c.
func addressNumber(addr string) (int, bool) {
	ip := net.ParseIP(addr).To4()
	if ip == nil || ip[0] != 127 {
		return 0, false
	}
	return int(ip[1])<<16 | int(ip[2])<<8 | int(ip[3]), true
}

// releaseAddress frees the address of a removed instance.
func (p *Provider) releaseAddress(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.byInstance[id]; ok {
		delete(p.used, n)
		delete(p.byInstance, id)
		p.free = min(p.free, n)
	}
}

// DetectHost reads the host's cores, memory, arch and the disk that holds dir.
func DetectHost(dir string) (Host, error) {
	h := Host{Arch: jujuArch(runtime.GOARCH), Cores: uint64(runtime.NumCPU())}
	mem, err := memTotalMB()
	if err != nil {
		return h, err
	}
	h.MemMB = mem
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return h, err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return h, fmt.Errorf("reading disk size: %w", err)
	}
	h.RootDiskMB = fs.Blocks * uint64(fs.Bsize) / (1 << 20)
	h.Hostname, _ = os.Hostname()
	return h, nil
}

func jujuArch(goarch string) string {
	switch goarch {
	case "ppc64le":
		return "ppc64el"
	}
	return goarch
}

func memTotalMB() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading memory size: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading memory size: %w", err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("reading memory size: no MemTotal in /proc/meminfo")
}
