package local

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// Machine uids. When the controller runs as root, every machine of the local provider gets a
// uid of its own, with a gid of the same number, and the processes its agents start for charm
// code (hooks, actions, juju exec, juju ssh sessions) run as them: charm code then reads
// nothing of the controller or of other machines, and no other machine's process can read its
// environment (/proc/<pid>/environ) or call its hook tools.
//
// The uids are bare numbers from a reserved range, with no account in /etc/passwd, rather than
// system users made with useradd: nothing is written to the host's account database, so
// nothing is left there by a controller that is killed (tests kill thousands) and no lock on
// /etc/passwd is fought over by controllers starting machines side by side; the range holds a
// million machines where useradd's system range (100-999) holds 900; and removing a machine
// cannot fail half way. The cost: `whoami` in a hook has no name to print, and ssh sessions
// cannot log in the uid itself (sshd wants an account), so they log in the agent's account and
// drop to the uid (agent/sshd.go).
const (
	// UIDBase is the first machine uid: 0x70000000, in the range systemd leaves unused
	// (systemd's UIDS-GIDS.md: above its container ranges, 524288-1879048191, and below the
	// signed 32-bit limit), above /etc/subuid's ranges (100000 on, 65536 a user) and LXD's
	// default (1000000-1001000000), below systemd's foreign range (0x7FFE0000).
	UIDBase = 0x70000000
	// UIDCount is how many machine uids there are.
	UIDCount = 1 << 20
)

// UIDClaimsDir is where this host records which machine uids are taken: a file per uid, named
// by it, holding the instance directory that has it. Every controller on the host shares it,
// so that two controllers (tests run dozens at once) never give two live machines one uid. A
// claim is live while that directory's agent.conf names the uid; a claim whose instance is gone
// (removed, or deleted with the data directory of a controller that was killed) is stale, and
// the uid is taken again. A variable so that tests may use a directory of their own.
var UIDClaimsDir = "/var/lib/jujud/machine-uids"

// claimsLock is the file every allocator holds (flock) while it reads and writes claims.
const claimsLock = ".lock"

// Isolation reports whether this process gives machines uids of their own, and if not, why.
// It is asked once (status asks on every call; a process's uid and namespace do not change).
func Isolation() (bool, string) { return isolation() }

// DataDirMode is the mode of the controller's data directory: 0711 when charm code runs under
// machine uids, which must pass through it to their instances (nothing in it can be listed or
// read), else 0700.
func DataDirMode() os.FileMode {
	if on, _ := Isolation(); on {
		return 0o711
	}
	return 0o700
}

var isolation = sync.OnceValues(func() (bool, string) {
	if uid := os.Geteuid(); uid != 0 {
		return false, fmt.Sprintf("the controller runs as uid %d, not root", uid)
	}
	for _, f := range []string{"/proc/self/uid_map", "/proc/self/gid_map"} {
		if !idsMapped(f, UIDBase, UIDCount) {
			return false, fmt.Sprintf("this host's user namespace does not map ids %d-%d (%s)", UIDBase, UIDBase+UIDCount-1, f)
		}
	}
	return true, ""
})

// IsolationWarning is the one line bootstrap and status show when machines get no uid of
// their own ("" when they do).
func IsolationWarning() string {
	on, why := Isolation()
	if on {
		return ""
	}
	return why + ": hooks run as the controller's user and can read its files"
}

// idsMapped reports whether the id map in path (/proc/self/uid_map: "inside outside count"
// lines) maps every id of [first, first+count). A file that cannot be read maps everything
// (no user namespaces).
func idsMapped(path string, first, count uint64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		inside, err1 := strconv.ParseUint(fields[0], 10, 64)
		n, err2 := strconv.ParseUint(fields[2], 10, 64)
		if err1 == nil && err2 == nil && inside <= first && first+count <= inside+n {
			return true
		}
	}
	return false
}

// uidAllocator hands out machine uids from the host's claims (UIDClaimsDir).
type uidAllocator struct {
	dir string
	// mu is held with the claims' lock: the file lock keeps other processes out, and mu this
	// process's other provisionings, which would otherwise each block a thread in flock.
	mu sync.Mutex
	// next is where the search for a free uid starts: just after the last one given.
	next int
}

// claim gives the instance whose directory is instDir a uid: the one its agent.conf names
// already (provisioned again, or a restarted controller), else a free one. It returns with the
// claims locked: unlock, once the instance's agent.conf records the uid, lets other
// allocators in (until then they would take the claim for stale).
func (a *uidAllocator) claim(instDir string) (uid int, unlock func(), err error) {
	instDir, err = filepath.Abs(instDir)
	if err != nil {
		return 0, nil, err
	}
	unlock, err = a.lock()
	if err != nil {
		return 0, nil, err
	}
	fail := func(err error) (int, func(), error) { unlock(); return 0, nil, err }
	if conf, err := agent.ReadConf(instDir); err == nil && conf.UID != 0 {
		owner, err := a.owner(conf.UID)
		if err != nil {
			return fail(err)
		}
		if owner != "" && owner != instDir {
			return fail(fmt.Errorf("uid %d of instance %s is claimed by %s", conf.UID, instDir, owner))
		}
		if owner == "" {
			if err := a.write(conf.UID, instDir); err != nil {
				return fail(err)
			}
		}
		return conf.UID, unlock, nil
	}
	if a.next < UIDBase || a.next >= UIDBase+UIDCount {
		a.next = UIDBase
	}
	for i := 0; i < UIDCount; i++ {
		uid := UIDBase + (a.next-UIDBase+i)%UIDCount
		owner, err := a.owner(uid)
		if err != nil {
			return fail(err)
		}
		if owner != "" {
			continue
		}
		if err := a.write(uid, instDir); err != nil {
			return fail(err)
		}
		a.next = uid + 1
		return uid, unlock, nil
	}
	return fail(fmt.Errorf("no machine uid left: all %d from %d are taken (%s)", UIDCount, UIDBase, a.dir))
}

// release gives up the uid of the instance whose directory is instDir, if it holds one.
func (a *uidAllocator) release(instDir string, uid int) error {
	instDir, err := filepath.Abs(instDir)
	if err != nil {
		return err
	}
	unlock, err := a.lock()
	if err != nil {
		return err
	}
	defer unlock()
	data, err := atomicfile.Read(a.path(uid))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the claim on uid %d: %w", uid, err)
	}
	if strings.TrimSpace(string(data)) != instDir {
		return nil // someone else's, since this instance's claim went stale
	}
	if err := os.Remove(a.path(uid)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("releasing uid %d: %w", uid, err)
	}
	return nil
}

// owner is the instance directory that holds uid ("" when the uid is free: no claim, or a
// stale one). Callers hold the lock.
func (a *uidAllocator) owner(uid int) (string, error) {
	data, err := atomicfile.Read(a.path(uid))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the claim on uid %d: %w", uid, err)
	}
	dir := strings.TrimSpace(string(data))
	if conf, err := agent.ReadConf(dir); err == nil && conf.UID == uid {
		return dir, nil
	}
	return "", nil
}

func (a *uidAllocator) write(uid int, instDir string) error {
	// Written in place: readers hold the lock, and a claim cut short by a crash names no
	// instance whose agent.conf has the uid, so it reads as stale.
	f, err := atomicfile.Open(a.path(uid), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("claiming uid %d: %w", uid, err)
	}
	_, err = f.WriteString(instDir + "\n")
	if err := errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("claiming uid %d: %w", uid, err)
	}
	return nil
}

func (a *uidAllocator) path(uid int) string { return filepath.Join(a.dir, strconv.Itoa(uid)) }

// lock takes the claims' lock, shared with every controller on the host.
func (a *uidAllocator) lock() (func(), error) {
	a.mu.Lock()
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("making the machine uid claims directory: %w", err)
	}
	f, err := atomicfile.Open(filepath.Join(a.dir, claimsLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("locking the machine uid claims: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		a.mu.Unlock()
		return nil, fmt.Errorf("locking the machine uid claims: %w", err)
	}
	return func() { f.Close(); a.mu.Unlock() }, nil // closing the file releases the lock
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// killUID kills every process of uid: a shell running as uid sends SIGKILL to every process it
// may signal (kill -1), which is every process of uid but itself. Twice, for what was being
// forked the first time.
func killUID(uid int) {
	if uid < UIDBase || uid >= UIDBase+UIDCount {
		return // not a machine uid: never anyone else's processes
	}
	for range 2 {
		cmd := exec.Command("/bin/sh", "-c", "kill -KILL -1 2>/dev/null")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
		_ = cmd.Run()
	}
}
