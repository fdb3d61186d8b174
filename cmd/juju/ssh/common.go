// Package ssh holds juju ssh and juju scp, which run OpenSSH's own ssh and scp against the ssh
// server of each machine, and the commands that manage the model's authorized keys
// (add-ssh-key, remove-ssh-key, ssh-keys).
package ssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/sshkey"
	"github.com/jujuclone/juju/internal/atomicfile"
)

// targetAPI is the part of the client juju ssh and juju scp use.
type targetAPI interface {
	EnsureClientSSHKey(ctx context.Context, model, key string) (*jujupb.EnsureClientKeyResponse, error)
	SSHTarget(ctx context.Context, model, target string, keysRevision int64) (*jujupb.SSHTargetResponse, error)
}

var _ targetAPI = (*client.Client)(nil)

// DefaultTargetWait bounds how long juju ssh and scp wait for a machine's ssh server (a machine
// just added, or one that has not yet taken up the client's key).
const DefaultTargetWait = 30 * time.Second

// Client key files under $JUJU_DATA, as Juju keeps its own under ~/.local/share/juju/ssh.
const (
	clientKeyDir  = "ssh"
	clientKeyFile = "juju_id_ed25519"
)

// ClientKey is the client's own key pair: juju ssh and scp log in with it, and it is
// authorized in every model they reach.
type ClientKey struct {
	// Path is the private key file; the public key is Path + ".pub".
	Path string
	// Public is the public key, authorized_keys form, comment "juju-client-key".
	Public string
}

// EnsureClientKey returns the client's key pair under dataDir, making it the first time
// (ed25519, no passphrase, 0600 in a 0700 directory). Two juju processes making it at once
// agree on one: the key file is linked into place only if absent.
func EnsureClientKey(dataDir string) (ClientKey, error) {
	dir := filepath.Join(dataDir, clientKeyDir)
	path := filepath.Join(dir, clientKeyFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := makeClientKey(dir, path); err != nil {
			return ClientKey{}, fmt.Errorf("creating the client's ssh key: %w", err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ClientKey{}, fmt.Errorf("reading the client's ssh key: %w", err)
	}
	signer, err := gossh.ParsePrivateKey(data)
	if err != nil {
		return ClientKey{}, fmt.Errorf("reading the client's ssh key %s: %w", path, err)
	}
	pub := sshkey.AuthorizedLine(signer.PublicKey(), sshkey.ClientKeyComment)
	// The public half is for the user's eyes (and ssh-keygen's); the private key is the truth.
	if have, err := os.ReadFile(path + ".pub"); err != nil || strings.TrimSpace(string(have)) != pub {
		if err := atomicfile.Write(path+".pub", []byte(pub+"\n"), 0o644); err != nil {
			return ClientKey{}, err
		}
	}
	return ClientKey{Path: path, Public: pub}, nil
}

// makeClientKey writes a new private key to path unless one appears there first.
func makeClientKey(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := gossh.MarshalPrivateKey(priv, sshkey.ClientKeyComment)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+clientKeyFile+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(pem.EncodeToMemory(block))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// target is one [user@]<machine|unit|application/leader> of the command line.
type target struct {
	user, entity string
}

// parseTarget splits "[user@]entity" and says whether entity names a machine or unit of the
// model; anything else is a host name, which is used as it is (as Juju does).
func parseTarget(s string) (target, bool) {
	var t target
	if i := strings.LastIndex(s, "@"); i >= 0 {
		t.user, t.entity = s[:i], s[i+1:]
	} else {
		t.entity = s
	}
	if names.IsValidMachine(t.entity) || names.IsValidUnit(t.entity) {
		return t, true
	}
	if app, ok := strings.CutSuffix(t.entity, "/leader"); ok && names.IsValidApplication(app) {
		return t, true
	}
	return t, false
}

// endpoint is a resolved target: where to connect and what host key to expect.
type endpoint struct {
	user, address string
	port          int
	hostKey       string
}

// userHost is user@address.
func (e endpoint) userHost() string {
	if e.user == "" {
		return e.address
	}
	return e.user + "@" + e.address
}

// knownHostsName is how a known_hosts line names the endpoint: [address]:port off port 22.
func (e endpoint) knownHostsName() string {
	if e.port == 0 || e.port == 22 {
		return e.address
	}
	return "[" + e.address + "]:" + strconv.Itoa(e.port)
}

// resolver turns targets into endpoints, authorizing the client's key in the model first.
type resolver struct {
	api     targetAPI
	model   string
	key     ClientKey
	wait    time.Duration
	rev     int64
	ensured bool
	cache   map[string]endpoint
}

func (r *resolver) resolve(ctx context.Context, t target) (endpoint, error) {
	ep, err := r.lookup(ctx, t.entity)
	if err != nil {
		return endpoint{}, err
	}
	// The machine's server logs in one account (AllowUsers): say so rather than let ssh fail
	// with "Permission denied".
	if t.user != "" && t.user != ep.user {
		return endpoint{}, fmt.Errorf("%s accepts ssh logins as %q only, not %q", t.entity, ep.user, t.user)
	}
	return ep, nil
}

func (r *resolver) lookup(ctx context.Context, entity string) (endpoint, error) {
	if ep, ok := r.cache[entity]; ok {
		return ep, nil
	}
	if !r.ensured {
		resp, err := r.api.EnsureClientSSHKey(ctx, r.model, r.key.Public)
		if err != nil {
			return endpoint{}, fmt.Errorf("authorizing the client's ssh key: %w", err)
		}
		r.rev, r.ensured = resp.GetKeysRevision(), true
	}
	wctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	resp, err := r.api.SSHTarget(wctx, r.model, entity, r.rev)
	if err != nil {
		return endpoint{}, err
	}
	ep := endpoint{user: resp.GetUser(), address: resp.GetAddress(), port: int(resp.GetPort()), hostKey: resp.GetHostKey()}
	if r.cache == nil {
		r.cache = map[string]endpoint{}
	}
	r.cache[entity] = ep
	return ep, nil
}

// knownHosts writes a temporary known_hosts file naming each endpoint's host key; the caller
// removes it.
func knownHosts(eps []endpoint) (string, error) {
	f, err := os.CreateTemp("", "juju-known-hosts-*")
	if err != nil {
		return "", fmt.Errorf("creating known hosts file: %w", err)
	}
	var b strings.Builder
	for _, ep := range eps {
		fmt.Fprintf(&b, "%s %s\n", ep.knownHostsName(), ep.hostKey)
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing known hosts file: %w", err)
	}
	return f.Name(), nil
}

// defaultIdentities are the user's own keys, offered after the client's (ssh offers its
// defaults only when no -i is given).
var defaultIdentities = []string{"id_rsa", "id_ecdsa", "id_ed25519"}

// commonOptions are the OpenSSH options of every ssh and scp run: host keys not checked at
// all (noChecks), or checked against knownHostsPath only, or (neither: hosts of the user's
// own) as the user's ssh configuration says; then Juju's (no passwords, keep long commands
// alive), and the client's key followed by the user's.
func commonOptions(noChecks bool, knownHostsPath string, key ClientKey) []string {
	var args []string
	switch {
	case noChecks:
		args = append(args, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null")
	case knownHostsPath != "":
		args = append(args, "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+knownHostsPath,
			"-o", "GlobalKnownHostsFile=/dev/null")
	}
	args = append(args, "-o", "PasswordAuthentication=no", "-o", "ServerAliveInterval=30", "-i", key.Path)
	if home, err := os.UserHomeDir(); err == nil {
		for _, name := range defaultIdentities {
			p := filepath.Join(home, ".ssh", name)
			if _, err := os.Stat(p); err == nil {
				args = append(args, "-i", p)
			}
		}
	}
	return args
}

// ExitCodeError carries the exit status of ssh (the remote command's, or 255 when ssh itself
// failed and said why on stderr) to juju's: root exits with it and prints nothing more.
type ExitCodeError struct {
	Code int
}

func (e *ExitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// PassthroughExitCode is the exit code juju exits with.
func (e *ExitCodeError) PassthroughExitCode() int { return e.Code }

// Runner runs an OpenSSH program (ssh or scp) with the given streams and returns its error
// (an *exec.ExitError when it exits non-zero).
type Runner func(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// RunOpenSSH runs the named program from $PATH; ending ctx (juju interrupted) sends it
// SIGTERM, and it gets its usual time to tear down its connection.
func RunOpenSSH(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("cannot run %s: %w (install the openssh-client package)", name, err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Args[0] = name // it names itself so in its messages ("scp: /x: No such file ...")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	return cmd.Run()
}

// refuseUnsupported rejects the Juju flags that mean nothing on this controller's models.
func refuseUnsupported(container string, proxy bool) error {
	if container != "" {
		return cmdutil.FlagErrorf("--container applies to Kubernetes models only; this model's units run on machines")
	}
	if proxy {
		return cmdutil.FlagErrorf("--proxy is not supported: the client reaches every machine's ssh server directly")
	}
	return nil
}
