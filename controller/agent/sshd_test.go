package agent

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/sshkey"
)

// testAddress is a loopback address no machine of a local controller takes (they count up
// from 127.1.0.1), different in each run.
func testAddress() string {
	return fmt.Sprintf("127.3.%d.%d", mrand.IntN(250)+1, mrand.IntN(250)+1)
}

func TestChoosePortPrefersThenRemembers(t *testing.T) {
	addr := testAddress()
	taken, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().(*net.TCPAddr).Port
	free, err := choosePort(addr, 0, 0)
	if err != nil || free == 0 || free == busy {
		t.Fatalf("a free port: %d, %v", free, err)
	}
	if p, err := choosePort(addr, free, busy); err != nil || p != free {
		t.Errorf("preferred free port: %d, %v", p, err)
	}
	if p, err := choosePort(addr, busy, free); err != nil || p != free {
		t.Errorf("preferred port taken: want the saved one %d, got %d, %v", free, p, err)
	}
	if p, err := choosePort(addr, busy, busy); err != nil || p == busy || p == 0 {
		t.Errorf("both taken: want another port, got %d, %v", p, err)
	}
}

func TestHostKeyIsMadeOnceAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), sshdHostKeyFile)
	first, err := ensureHostKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sshkey.Parse(first); err != nil || !strings.HasPrefix(first, "ssh-ed25519 ") {
		t.Fatalf("host key %q: %v", first, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key file: %v %v", fi, err)
	}
	again, err := ensureHostKey(path)
	if err != nil || again != first {
		t.Errorf("second call: %q, %v (first %q)", again, err, first)
	}
}

func TestSSHDConfigRefusesUnquotablePaths(t *testing.T) {
	cfg, err := sshdConfig("/var/lib/juju dir", "127.1.0.1", 22, "root")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ListenAddress 127.1.0.1:22\n", `AuthorizedKeysFile "/var/lib/juju dir/authorized_keys"`, "AllowUsers root\n", "PasswordAuthentication no\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if _, err := sshdConfig(`/tmp/a"b`, "127.1.0.1", 22, "root"); err == nil {
		t.Error("a path with a quote was accepted")
	}
}

// fakeSSHAPI plays the controller: it sends the keys it is given and records what the server
// reports.
type fakeSSHAPI struct {
	keys     chan *pb.AuthorizedKeys
	reported chan *pb.SetSSHHostRequest
}

func (f *fakeSSHAPI) WatchAuthorizedKeys(ctx context.Context, _, _ string, fn func(*pb.AuthorizedKeys) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case k := <-f.keys:
			if err := fn(k); err != nil {
				return err
			}
		}
	}
}

func (f *fakeSSHAPI) SetSSHHost(_ context.Context, req *pb.SetSSHHostRequest) error {
	f.reported <- req
	return nil
}

// clientKey makes a key pair: the private key file for ssh -i and the public line.
func clientKey(t *testing.T, dir, comment string) (string, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, comment)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	return path, sshkey.AuthorizedLine(sp, comment)
}

// TestSSHServerServesTheModelKeys runs a machine's real sshd and logs in with real ssh: with a
// key of the model, then, once the model has dropped it, not.
func TestSSHServerServesTheModelKeys(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sshd logs in only unlocked accounts; as root it serves root")
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("no /usr/sbin/sshd")
	}
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("no ssh client")
	}
	machineDir, keyDir := t.TempDir(), t.TempDir()
	idFile, pubLine := clientKey(t, keyDir, "juju-client-key")
	_, otherLine := clientKey(t, keyDir, "other")
	api := &fakeSSHAPI{keys: make(chan *pb.AuthorizedKeys, 1), reported: make(chan *pb.SetSSHHostRequest, 4)}
	srv := newSSHServer(machineDir, Conf{Model: "uuid", ID: "3", Address: testAddress()}, api)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	report := func() *pb.SetSSHHostRequest {
		t.Helper()
		select {
		case r := <-api.reported:
			return r
		case err := <-done:
			t.Fatalf("server stopped: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no report from the ssh server")
		}
		return nil
	}
	api.keys <- &pb.AuthorizedKeys{Keys: []string{otherLine, pubLine}, Revision: 5}
	r := report()
	if r.Error != "" || r.Address != srv.conf.Address || r.Port == 0 || r.User != "root" || r.KeysRevision != 5 || r.MachineId != "3" {
		t.Fatalf("report = %+v", r)
	}
	known := filepath.Join(keyDir, "known_hosts")
	host := r.Address
	if r.Port != 22 {
		host = "[" + r.Address + "]:" + strconv.Itoa(int(r.Port))
	}
	if err := os.WriteFile(known, []byte(host+" "+r.HostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	login := func() (string, error) {
		cmd := exec.Command(sshBin, "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+known,
			"-o", "GlobalKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-F", "/dev/null",
			"-i", idFile, "-p", strconv.Itoa(int(r.Port)), "root@"+r.Address, "echo", "hi")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := login(); err != nil || out != "hi\n" {
		t.Fatalf("ssh with a model key: %q, %v", out, err)
	}
	// The model drops the key: the server's file follows before the next report.
	api.keys <- &pb.AuthorizedKeys{Keys: []string{otherLine}, Revision: 9}
	if r := report(); r.KeysRevision != 9 || r.Port == 0 {
		t.Fatalf("second report = %+v", r)
	}
	if out, err := login(); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("ssh with a removed key: %q, %v", out, err)
	}
	// Stopping the agent stops the server: its port is free again.
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
	done <- nil
	l, err := net.Listen("tcp", net.JoinHostPort(r.Address, strconv.Itoa(int(r.Port))))
	if err != nil {
		t.Errorf("port still taken after stop: %v", err)
	} else {
		l.Close()
	}
}

func TestSSHServerWithoutSSHDSaysWhy(t *testing.T) {
	api := &fakeSSHAPI{keys: make(chan *pb.AuthorizedKeys, 1), reported: make(chan *pb.SetSSHHostRequest, 1)}
	srv := newSSHServer(t.TempDir(), Conf{Model: "uuid", ID: "3", Address: testAddress()}, api)
	srv.sshd = ""
	srv.binaryPaths = []string{filepath.Join(t.TempDir(), "no-sshd")}
	t.Setenv("PATH", t.TempDir())
	if err := srv.run(context.Background()); err != nil {
		t.Fatalf("run = %v, want nil (stopped for good)", err)
	}
	if r := <-api.reported; !strings.Contains(r.Error, "install openssh-server") || r.Port != 0 {
		t.Errorf("report = %+v", r)
	}
}

func TestCachedLookPathFollowsPATH(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	look := cachedLookPath("some-tool", time.Hour)
	if _, err := look(); err == nil {
		t.Fatal("found a tool that is not there")
	}
	tool := filepath.Join(dir, "some-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := look(); err == nil {
		t.Fatal("the answer was not kept")
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "some-tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", other)
	if p, err := look(); err != nil || p != filepath.Join(other, "some-tool") {
		t.Fatalf("after PATH changed: %q, %v", p, err)
	}
}
