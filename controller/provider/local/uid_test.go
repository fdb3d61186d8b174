package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/agent"
)

const testModel = "0a1b2c3d-aaaa-bbbb-cccc-d32b3c123456"

// isolating skips the test unless machines get uids of their own here (root, ids mapped), and
// gives it a claims directory of its own.
func isolating(t *testing.T) string {
	t.Helper()
	if on, why := Isolation(); !on {
		t.Skipf("machines get no uid of their own here: %s", why)
	}
	claims := filepath.Join(t.TempDir(), "claims")
	old := UIDClaimsDir
	UIDClaimsDir = claims
	t.Cleanup(func() { UIDClaimsDir = old })
	return claims
}

func startMachine(t *testing.T, p *Provider, machine string) agent.Conf {
	t.Helper()
	inst, _, err := p.StartInstance(context.Background(), StartArgs{ModelUUID: testModel, MachineID: machine})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := agent.ReadConf(p.instanceDir(inst.ID))
	if err != nil {
		t.Fatal(err)
	}
	return conf
}

func ownerOf(t *testing.T, path string) (uid, gid uint32, perm os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode().Perm()
}

// As root, each machine gets a uid (and a gid of the same number) of its own from the reserved
// range; it keeps it when provisioned again and across a controller restart; its instance
// directory is root:<gid> 0710, and the way to it 0711.
func TestMachinesGetUIDsOfTheirOwn(t *testing.T) {
	claims := isolating(t)
	dir := filepath.Join(t.TempDir(), "controller")
	p, err := New(dir, "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	m0, m1 := startMachine(t, p, "0"), startMachine(t, p, "1")
	for _, c := range []agent.Conf{m0, m1} {
		if c.UID < UIDBase || c.UID >= UIDBase+UIDCount || c.GID != c.UID {
			t.Errorf("machine %s: uid %d gid %d, want one number from %d", c.ID, c.UID, c.GID, UIDBase)
		}
	}
	if m0.UID == m1.UID {
		t.Fatalf("machines 0 and 1 share uid %d", m0.UID)
	}
	inst0 := p.instanceDir(InstanceID(testModel, "0"))
	if uid, gid, perm := ownerOf(t, inst0); uid != 0 || gid != uint32(m0.GID) || perm != 0o710 {
		t.Errorf("instance directory %d:%d %o, want 0:%d 710", uid, gid, perm, m0.GID)
	}
	if uid, _, perm := ownerOf(t, filepath.Join(inst0, agent.ConfFile)); uid != 0 || perm != 0o600 {
		t.Errorf("agent.conf %d %o, want root's 600", uid, perm)
	}
	for _, d := range []string{dir, p.dir} {
		if _, _, perm := ownerOf(t, d); perm != 0o711 {
			t.Errorf("%s is %o, want 711", d, perm)
		}
	}
	for d := filepath.Dir(dir); d != "/"; d = filepath.Dir(d) {
		if _, _, perm := ownerOf(t, d); perm&0o001 == 0 {
			t.Errorf("%s is %o: the machines' uids cannot pass", d, perm)
		}
	}

	if again := startMachine(t, p, "0"); again.UID != m0.UID {
		t.Errorf("provisioned again: uid %d, want %d", again.UID, m0.UID)
	}
	restarted, err := New(dir, "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	if again := startMachine(t, restarted, "1"); again.UID != m1.UID {
		t.Errorf("after a restart: uid %d, want %d", again.UID, m1.UID)
	}
	m2 := startMachine(t, restarted, "2")
	if m2.UID == m0.UID || m2.UID == m1.UID {
		t.Errorf("after a restart machine 2 got uid %d, taken by machine 0 or 1", m2.UID)
	}

	// A released machine's uid is free again; its claim is gone.
	if err := restarted.StopInstance(InstanceID(testModel, "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(claims, strconv.Itoa(m1.UID))); !os.IsNotExist(err) {
		t.Errorf("claim on uid %d still there after its machine went: %v", m1.UID, err)
	}
}

// Controllers on one host share the claims: they never give two live machines one uid, and a
// claim whose instance is gone (a controller killed and its data directory deleted, as tests
// do) is taken again.
func TestUIDClaimsAreSharedAndStaleOnesReused(t *testing.T) {
	isolating(t)
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a, err := New(dirA, "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(dirB, "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, m := range []string{"0", "1", "2"} {
		for name, p := range map[string]*Provider{"a": a, "b": b} {
			c := startMachine(t, p, m)
			if other, taken := seen[c.UID]; taken {
				t.Fatalf("uid %d given to %s/%s and %s", c.UID, name, m, other)
			}
			seen[c.UID] = name + "/" + m
		}
	}
	// Controller a is killed and its directory deleted: nothing released its claims. b,
	// restarted, looks from the start of the range again.
	if err := os.RemoveAll(dirA); err != nil {
		t.Fatal(err)
	}
	if b, err = New(dirB, "127.0.0.1:1", []byte("ca"), &fakeLauncher{}); err != nil {
		t.Fatal(err)
	}
	reused := false
	for i := range 3 {
		c := startMachine(t, b, strconv.Itoa(10+i))
		if owner := seen[c.UID]; owner != "" && owner[0] == 'b' {
			t.Fatalf("uid %d of live machine %s given again", c.UID, owner)
		}
		reused = reused || seen[c.UID] != ""
	}
	if !reused {
		t.Error("no uid of the deleted controller's machines was taken again")
	}
}

// Releasing a machine kills what its charm code left running: the uid may be the next
// machine's.
func TestStopInstanceKillsTheMachinesProcesses(t *testing.T) {
	isolating(t)
	p, err := New(filepath.Join(t.TempDir(), "controller"), "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	c := startMachine(t, p, "0")
	// A daemon a hook started: its own session, nobody's child once its parent is gone.
	cmd := exec.Command("/bin/sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: uint32(c.UID), Gid: uint32(c.GID), Groups: []uint32{}}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	if err := p.StopInstance(InstanceID(testModel, "0")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the machine's process outlived its machine")
	}
}

// The uid range must be mapped in the controller's user namespace (a container may map only
// 65536 ids); else machines get no uid of their own, and status says why.
func TestIDsMapped(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		path := filepath.Join(dir, strconv.Itoa(len(content)))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		content string
		want    bool
	}{
		{"         0          0 4294967295\n", true},
		{"         0     100000      65536\n", false},
		{"         0     100000      65536\n1879048192 0 1048576\n", true},
		{"1879048192 0 1048575\n", false},
	} {
		if got := idsMapped(write(tc.content), UIDBase, UIDCount); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.content, got, tc.want)
		}
	}
	if !idsMapped(filepath.Join(dir, "missing"), UIDBase, UIDCount) {
		t.Error("no map file (no user namespaces) should map every id")
	}
}

// Machines started side by side (the provisioner starts up to 16 at once) each get an address
// and a uid of their own, and an agent.conf that names them.
func TestMachinesStartedSideBySideShareNothing(t *testing.T) {
	isolating(t)
	p, err := New(filepath.Join(t.TempDir(), "controller"), "127.0.0.1:1", []byte("ca"), &fakeLauncher{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 24
	confs := make([]agent.Conf, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, _, err := p.StartInstance(context.Background(), StartArgs{ModelUUID: testModel, MachineID: strconv.Itoa(i)})
			if err == nil {
				confs[i], err = agent.ReadConf(p.instanceDir(inst.ID))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	uids, addrs := map[int]string{}, map[string]string{}
	for i, c := range confs {
		if errs[i] != nil {
			t.Fatalf("machine %d: %v", i, errs[i])
		}
		if other, ok := uids[c.UID]; ok {
			t.Errorf("machines %s and %s share uid %d", other, c.ID, c.UID)
		}
		if other, ok := addrs[c.Address]; ok {
			t.Errorf("machines %s and %s share address %s", other, c.ID, c.Address)
		}
		uids[c.UID], addrs[c.Address] = c.ID, c.ID
	}
}
