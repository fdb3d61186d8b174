package apiserver

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/sshkey"
)

func newPublicKey(t *testing.T, comment string) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshkey.AuthorizedLine(sp, comment)
}

// sshMachineAgent provisions machine id and returns a client acting as its agent.
func (e *testEnv) sshMachineAgent(t *testing.T, id string) *client.Client {
	t.Helper()
	password := "ssh-agent-of-machine-" + id
	if err := e.st.SetProvisioned(context.Background(), e.model, id, state.Instance{ID: "i-" + id}, state.HashPassword(password)); err != nil {
		t.Fatal(err)
	}
	return e.dial(t, "machine-"+id, password, e.model)
}

func TestKeyServiceAddListRemove(t *testing.T) {
	ctx := context.Background()
	env := startTestEnv(t)
	alice, bob := newPublicKey(t, "alice@host"), newPublicKey(t, "bob@host")
	if err := env.admin.AddSSHKeys(ctx, "default", []string{alice, bob}); err != nil {
		t.Fatal(err)
	}
	resp, err := env.admin.EnsureClientSSHKey(ctx, "default", newPublicKey(t, sshkey.ClientKeyComment))
	if err != nil || !resp.Added || resp.KeysRevision == 0 {
		t.Fatalf("ensure client key: %v %v", resp, err)
	}
	keys, err := env.admin.ListSSHKeys(ctx, "default")
	if err != nil || len(keys) != 2 || keys[0].Comment != "alice@host" || keys[1].Key != bob {
		t.Fatalf("list = %v, %v (the client's key must not show)", keys, err)
	}
	err = env.admin.AddSSHKeys(ctx, "default", []string{newPublicKey(t, "carol@host"), alice})
	if !errors.Is(err, apierr.AlreadyExists) || !strings.Contains(err.Error(), "duplicate ssh key: "+alice) {
		t.Errorf("duplicate: %v", err)
	}
	err = env.admin.AddSSHKeys(ctx, "default", []string{"not a key"})
	if !errors.Is(err, apierr.NotValid) || err.Error() != `cannot add key "not a key": invalid ssh key: not a key` {
		t.Errorf("not a key: %v", err)
	}
	if err := env.admin.RemoveSSHKeys(ctx, "default", []string{"alice@host", "nobody"}); !errors.Is(err, apierr.NotFound) {
		t.Errorf("removing an unknown id: %v", err)
	}
	if err := env.admin.RemoveSSHKeys(ctx, "default", []string{keys[0].Fingerprint}); err != nil {
		t.Fatal(err)
	}
	if keys, _ := env.admin.ListSSHKeys(ctx, "default"); len(keys) != 1 || keys[0].Comment != "bob@host" {
		t.Errorf("after removal: %v", keys)
	}
	if _, err := env.admin.EnsureClientSSHKey(ctx, "default", newPublicKey(t, "me@host")); !errors.Is(err, apierr.NotValid) {
		t.Errorf("a client key without juju's comment: %v", err)
	}
	if _, err := env.admin.ListSSHKeys(ctx, "nope"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown model: %v", err)
	}
}

// Agents may not manage keys, and a machine agent serves and records only its own machine.
func TestSSHServicesAreConfined(t *testing.T) {
	ctx := context.Background()
	env := startTestEnv(t)
	m1, err := env.st.AddMachine(ctx, env.model, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := env.st.AddMachine(ctx, env.model, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	agent := env.sshMachineAgent(t, m1)
	env.sshMachineAgent(t, m2)
	if _, err := agent.ListSSHKeys(ctx, env.model); !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("an agent listing keys: %v", err)
	}
	if err := agent.AddSSHKeys(ctx, env.model, []string{newPublicKey(t, "x")}); !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("an agent adding keys: %v", err)
	}
	err = agent.SetSSHHost(ctx, &pb.SetSSHHostRequest{MachineId: m2, Address: "127.1.0.9", Port: 22, User: "root", HostKey: newPublicKey(t, "")})
	if !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("recording another machine's server: %v", err)
	}
	err = agent.WatchAuthorizedKeys(ctx, "", m2, func(*pb.AuthorizedKeys) error { return nil })
	if !errors.Is(err, apierr.PermissionDenied) {
		t.Errorf("watching as another machine: %v", err)
	}
	err = agent.SetSSHHost(ctx, &pb.SetSSHHostRequest{MachineId: m1, Address: "127.1.0.9", Port: 22, User: "root", HostKey: "nonsense"})
	if !errors.Is(err, apierr.NotValid) {
		t.Errorf("a bad host key: %v", err)
	}
}

func TestSSHTargetWaitsForTheMachinesServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	env := startTestEnv(t)
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nprovides:\n  db: mysql\n", 1)
	env.deploy(t, "logging", "name: logging\nsummary: logs\nsubordinate: true\nrequires:\n  juju-info:\n    interface: juju-info\n    scope: container\n", 0)
	u, err := env.st.Unit(ctx, env.model, "mysql/0")
	if err != nil {
		t.Fatal(err)
	}
	agent := env.sshMachineAgent(t, u.MachineId)
	hostKey := newPublicKey(t, "")
	ensured, err := env.admin.EnsureClientSSHKey(ctx, "default", newPublicKey(t, sshkey.ClientKeyComment))
	if err != nil {
		t.Fatal(err)
	}

	// The agent's watch sends the keys, the client's among them.
	got := make(chan *pb.AuthorizedKeys, 4)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go agent.WatchAuthorizedKeys(watchCtx, "", u.MachineId, func(k *pb.AuthorizedKeys) error { got <- k; return nil })
	if k := <-got; k.Revision != ensured.KeysRevision || len(k.Keys) != 1 {
		t.Fatalf("watched keys = %v, want revision %d", k, ensured.KeysRevision)
	}

	// Before the agent records its server, a short call ends saying so.
	short, stop := context.WithTimeout(ctx, time.Second)
	_, err = env.admin.SSHTarget(short, "default", "mysql/0", ensured.KeysRevision)
	stop()
	if !errors.Is(err, apierr.Unavailable) || !strings.Contains(err.Error(), "has no ssh server yet") {
		t.Errorf("before the server: %v", err)
	}
	// Leadership is claimed by the unit's agent; here, straight through state.
	if _, err := env.st.ClaimLeadership(ctx, env.model, "mysql/0", 60); err != nil {
		t.Fatal(err)
	}
	// A server serving older keys is not enough; the call returns once it serves the client's.
	answer := make(chan *pb.SSHTargetResponse, 1)
	go func() {
		resp, err := env.admin.SSHTarget(ctx, "default", "mysql/leader", ensured.KeysRevision)
		if err != nil {
			t.Error(err)
		}
		answer <- resp
	}()
	set := func(rev int64) {
		t.Helper()
		if err := agent.SetSSHHost(ctx, &pb.SetSSHHostRequest{MachineId: u.MachineId, Address: "127.1.0.7", Port: 2222, User: "root", HostKey: hostKey, KeysRevision: rev}); err != nil {
			t.Fatal(err)
		}
	}
	set(ensured.KeysRevision - 1)
	select {
	case r := <-answer:
		t.Fatalf("answered before the server took up the key: %v", r)
	case <-time.After(200 * time.Millisecond):
	}
	set(ensured.KeysRevision)
	select {
	case r := <-answer:
		if r.GetMachineId() != u.MachineId || r.GetAddress() != "127.1.0.7" || r.GetPort() != 2222 || r.GetUser() != "root" || r.GetHostKey() != hostKey {
			t.Errorf("target = %v", r)
		}
	case <-ctx.Done():
		t.Fatal("SSHTarget did not return once the server served the key")
	}

	// By machine id, and as the model is named by UUID.
	if r, err := env.admin.SSHTarget(ctx, env.model, u.MachineId, 0); err != nil || r.GetPort() != 2222 {
		t.Errorf("by machine: %v %v", r, err)
	}
	for target, want := range map[string]string{
		"mysql/9":      `unit "mysql/9" not found`,
		"42":           "machine 42 not found",
		"nope/leader":  `application "nope" not found`,
		"logging/0":    `unit "logging/0" not found`,
		"not a target": `invalid target "not a target"`,
	} {
		if _, err := env.admin.SSHTarget(ctx, "default", target, 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SSHTarget(%q) = %v, want %q", target, err, want)
		}
	}
	// A machine that cannot serve says why at once.
	if err := agent.SetSSHHost(ctx, &pb.SetSSHHostRequest{MachineId: u.MachineId, Error: "no OpenSSH server (sshd) on this host: install openssh-server"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.admin.SSHTarget(ctx, "default", "mysql/0", 0); !errors.Is(err, apierr.Unavailable) ||
		err.Error() != "machine "+u.MachineId+" cannot serve ssh: no OpenSSH server (sshd) on this host: install openssh-server" {
		t.Errorf("no sshd: %v", err)
	}
}
