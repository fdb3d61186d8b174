package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jujuclone/juju/core/sshkey"
)

// TestSSHJourney drives juju ssh, juju scp and the key commands through the real binaries
// against each machine's real sshd (Debian's OpenSSH on both sides): commands and their exit
// status, copies both ways and recursive, keys that start and stop working as they are added
// and removed, and bad input that changes nothing.
func TestSSHJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	for _, bin := range []string{"ssh", "scp"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s (install openssh-client)", bin)
		}
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("no /usr/sbin/sshd (install openssh-server)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the machines' sshd logs in the controller's account, which sshd accepts only unlocked; CI runs as root")
	}
	e := build(t)
	e.ok("bootstrap")
	t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })
	e.ok("deploy", "./testdata/charms/mysql")
	e.waitUntil("mysql ready", workloadIs("mysql/0", "active", "ready"))

	// A command, its output and its exit status; options after the target go to ssh.
	if r := e.ok("ssh", "mysql/0", "echo hi"); r.stdout != "hi\n" {
		t.Errorf("juju ssh mysql/0 'echo hi' printed %q, %q", r.stdout, r.stderr)
	}
	if r := e.ok("ssh", "mysql/leader", "-o", "LogLevel=ERROR", "echo", "$((6*7))"); r.stdout != "42\n" {
		t.Errorf("juju ssh mysql/leader printed %q, %q", r.stdout, r.stderr)
	}
	if r := e.juju("ssh", "0", "echo oops >&2; exit 3"); r.code != 3 || r.stdout != "" || r.stderr != "oops\n" {
		t.Errorf("a failing remote command: exit %d, stdout %q, stderr %q; want exit 3 and only its stderr", r.code, r.stdout, r.stderr)
	}
	if r := e.ok("ssh", "--no-host-key-checks", "0", "-q", "true"); r.stdout != "" {
		t.Errorf("--no-host-key-checks printed %q", r.stdout)
	}

	// Copies both ways, a file and a tree; remote paths are this host's (the machine is a
	// directory of it).
	local := t.TempDir()
	remote := machineWritable(t) // the sessions run as the machine's uid when the tests run as root
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("reading %s: %v", path, err)
		}
		return string(data)
	}
	write(filepath.Join(local, "file.txt"), "hello\n")
	write(filepath.Join(local, "tree", "a", "b.txt"), "deep\n")
	e.ok("scp", filepath.Join(local, "file.txt"), "mysql/0:"+filepath.Join(remote, "up.txt"))
	if got := read(filepath.Join(remote, "up.txt")); got != "hello\n" {
		t.Errorf("copied up: %q", got)
	}
	e.ok("scp", "mysql/0:"+filepath.Join(remote, "up.txt"), filepath.Join(local, "down.txt"))
	if got := read(filepath.Join(local, "down.txt")); got != "hello\n" {
		t.Errorf("copied down: %q", got)
	}
	e.ok("scp", "--", "-r", filepath.Join(local, "tree"), "0:"+filepath.Join(remote, "tree"))
	e.ok("scp", "--", "-r", "mysql/0:"+filepath.Join(remote, "tree"), filepath.Join(local, "back"))
	if got := read(filepath.Join(local, "back", "a", "b.txt")); got != "deep\n" {
		t.Errorf("tree copied there and back: %q", got)
	}
	e.fails(1, "No such file or directory", "scp", "mysql/0:"+filepath.Join(remote, "nope"), local)

	// Keys: one of the user's own opens the machine once added, and no more once removed.
	keyFile, pub := newKeyPair(t)
	e.ok("add-ssh-key", pub)
	k, err := sshkey.Parse(pub)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.ok("ssh-keys"); r.stdout != "Keys used in model: admin/default\n"+k.Fingerprint+" (alice@example)\n" {
		t.Errorf("ssh-keys printed %q", r.stdout)
	}
	if r := e.ok("ssh-keys", "--full"); !strings.Contains(r.stdout, pub+"\n") {
		t.Errorf("ssh-keys --full printed %q", r.stdout)
	}
	addr, login := e.sshdAddress("0"), e.sshdLogin("0")
	loginWith := func() (string, error) {
		host, port, _ := strings.Cut(addr, ":")
		out, err := exec.Command("ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
			"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
			"-i", keyFile, "-p", port, login+"@"+host, "echo in").CombinedOutput()
		return string(out), err
	}
	eventually(t, "the added key opens machine 0", func() bool { out, err := loginWith(); return err == nil && out == "in\n" })
	e.fails(1, "duplicate ssh key", "add-ssh-key", pub)
	e.ok("remove-ssh-key", k.Fingerprint)
	eventually(t, "the removed key no longer opens machine 0", func() bool {
		out, err := loginWith()
		return err != nil && strings.Contains(out, "Permission denied")
	})
	if r := e.juju("ssh-keys"); r.code != 0 || r.stdout != "" || r.stderr != "No keys to display.\n" {
		t.Errorf("ssh-keys with no key of the user: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// juju ssh still works: its own key is there, unlisted and not removable by name.
	e.fails(1, "may not delete internal key: juju-client-key", "remove-ssh-key", "juju-client-key")
	e.ok("ssh", "0", "true")

	// Bad input: one ERROR line, the right code, nothing changed.
	e.fails(1, `unit "mysql/9" not found`, "ssh", "mysql/9", "true")
	e.fails(1, "machine 42 not found", "scp", "42:/etc/hostname", local)
	e.fails(2, "no target name specified", "ssh")
	e.fails(2, "--container applies to Kubernetes models only", "ssh", "--container", "charm", "mysql/0")
	e.fails(2, "scp's own options go after --", "scp", "-r", local, "0:")
	e.fails(2, `cannot add key "not a key": invalid ssh key: not a key`, "add-ssh-key", "not a key")
	e.fails(1, `cannot remove key id "nobody": invalid ssh key: nobody`, "remove-ssh-key", "nobody")
	if r := e.juju("ssh-keys"); r.stdout != "" {
		t.Errorf("refused key commands changed the keys: %q", r.stdout)
	}

	// The servers go with the controller.
	pids := e.sshdPIDs()
	if len(pids) == 0 {
		t.Fatal("no sshd pid files")
	}
	e.ok("kill-controller", "local", "--no-prompt")
	eventually(t, "every sshd stopped with the controller", func() bool {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				return false
			}
		}
		return true
	})
}

// sshdAddress is address:port of the ssh server of machine id of the current model, as its
// agent configured it.
func (e *env) sshdAddress(id string) string { return e.sshdSetting(id, "ListenAddress") }

// sshdLogin is the account the ssh server of machine id logs in: the controller's (root), or
// the machine's own when it has a uid of its own.
func (e *env) sshdLogin(id string) string { return e.sshdSetting(id, "AllowUsers") }

// sshdSetting is a setting of the ssh server of machine id of the current model.
func (e *env) sshdSetting(id, key string) string {
	e.t.Helper()
	s := e.status()
	m, ok := s.Machines[id]
	if !ok {
		e.t.Fatalf("no machine %s", id)
	}
	config := filepath.Join(e.data, "controllers", "local", "instances", m.InstanceID, "sshd", "sshd_config")
	data, err := os.ReadFile(config)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			return v
		}
	}
	e.t.Fatalf("no %s in %s", key, config)
	return ""
}

// sshdPIDs are the pids of the controller's ssh servers (one per machine of every model).
func (e *env) sshdPIDs() []int {
	e.t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.data, "controllers", "local", "instances", "*", "sshd", "sshd.pid"))
	var pids []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			e.t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			e.t.Fatalf("%s: %v", f, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// newKeyPair writes a fresh private key for ssh -i and returns it with its public line.
func newKeyPair(t *testing.T) (string, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "alice@example")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_alice")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return path, sshkey.AuthorizedLine(sp, "alice@example")
}

// eventually polls cond until it holds (the test's own wait; agents follow the store's watch).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// machineWritable is a directory a machine's processes may write, whatever uid they run as
// (a test's own temporary directories are root's alone).
func machineWritable(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "e2e-machine-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}
