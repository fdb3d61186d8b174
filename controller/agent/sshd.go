package agent

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/atomicfile"
	"github.com/jujuclone/juju/internal/timerslack"
)

// The ssh server of a machine, as Juju gives every machine one: Debian's OpenSSH sshd, bound to
// the machine's own address, accepting the model's authorized keys and no passwords. It logs
// in the account it runs as (the controller's), since the local provider's machines share this
// host's accounts; or, when the machine has a uid of its own, that uid, under an account only
// the server sees (machineAccount).
const (
	sshdDirName     = "sshd"
	sshdConfigFile  = "sshd_config"
	sshdHostKeyFile = "ssh_host_ed25519_key"
	sshdKeysFile    = "authorized_keys"
	sshdPidFile     = "sshd.pid"
	sshdPortFile    = "port"
	sshdLogFile     = "sshd.log"
	// sshdPasswdFile and sshdGroupFile are the account databases an isolated machine's server
	// sees as /etc/passwd and /etc/group: the host's, and the machine's account.
	sshdPasswdFile = "passwd"
	sshdGroupFile  = "group"
	// sshdPort is where ssh clients look first; a server that cannot bind it (not root, or
	// the address's port 22 is taken) takes a port of its own, which clients read from the store.
	sshdPort = 22
	// sshdPrivsepDir is where Debian's sshd, started as root, wants its empty privilege
	// separation directory (made at boot by the package's tmpfiles rule, absent in containers).
	sshdPrivsepDir = "/run/sshd"
	// sshdReadyTimeout bounds how long a starting server may take to listen.
	sshdReadyTimeout = 10 * time.Second
	// sshdLogMax is where the server's log is rotated (kept: the current one and one before).
	sshdLogMax = 1 << 20
)

// sshAPI is what the ssh server needs of the controller.
type sshAPI interface {
	WatchAuthorizedKeys(ctx context.Context, model, machine string, fn func(*pb.AuthorizedKeys) error) error
	SetSSHHost(ctx context.Context, req *pb.SetSSHHostRequest) error
}

// sshServer runs and supervises one machine's sshd (run returns when it stops; the Runner
// restarts it after a failure).
type sshServer struct {
	dir  string // the machine's sshd directory (0700)
	conf Conf
	api  sshAPI
	// sshd is the server binary ("" looks in binaryPaths, then $PATH); port is the preferred
	// port (sshdPort).
	sshd        string
	binaryPaths []string
	port        int
}

func newSSHServer(machineDir string, conf Conf, api sshAPI) *sshServer {
	return &sshServer{
		dir: filepath.Join(machineDir, sshdDirName), conf: conf, api: api, port: sshdPort,
		binaryPaths: []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"},
	}
}

// run serves until ctx ends (nil) or the server or the controller fails (an error). A host
// without sshd gets that recorded on the machine, so that juju ssh says why, and run stops
// for good. Nothing else is done until the model's first authorized key comes (juju ssh adds
// the client's own): a machine nobody ssh-es into costs no host key, no account files, no
// written file at all (issue 16: they were a sixth of the agents' deploy CPU).
func (s *sshServer) run(ctx context.Context) error {
	sshd, err := s.binary()
	if err != nil {
		return s.cannotServe(ctx, err)
	}
	stopStale(filepath.Join(s.dir, sshdPidFile), filepath.Join(s.dir, sshdConfigFile))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		proc    *sshdProcess
		setup   *sshdSetup
		refused error // why the server cannot serve, found when it was first needed
	)
	defer func() {
		if proc != nil {
			proc.stop()
		}
	}()
	reported := int64(-1)
	err = s.api.WatchAuthorizedKeys(ctx, s.conf.Model, s.conf.ID, func(keys *pb.AuthorizedKeys) error {
		if proc == nil && len(keys.Keys) == 0 {
			// Nobody could log in: the server starts with the model's first key, so models
			// nobody ssh-es into run no sshd at all.
			return nil
		}
		if setup == nil {
			var err error
			if setup, err = s.prepare(); err != nil {
				var cannot cannotServeError
				if errors.As(err, &cannot) {
					refused = cannot.err
					return errRefused
				}
				return err
			}
		}
		if err := writeAuthorizedKeys(filepath.Join(s.dir, sshdKeysFile), keys.Keys, s.conf); err != nil {
			return err
		}
		if proc == nil {
			started, err := s.start(sshd, setup.login, setup.account)
			if err != nil {
				return err
			}
			proc = started
			go func() {
				<-started.exited
				cancel() // the watch ends; run reports why the server stopped
			}()
		}
		if keys.Revision == reported {
			return nil
		}
		err := s.api.SetSSHHost(ctx, &pb.SetSSHHostRequest{
			Model: s.conf.Model, MachineId: s.conf.ID, Address: s.conf.address(), Port: int32(proc.port),
			User: setup.login, HostKey: setup.hostKey, KeysRevision: keys.Revision,
		})
		if err != nil {
			return fmt.Errorf("recording the ssh server: %w", err)
		}
		reported = keys.Revision
		return nil
	})
	if refused != nil {
		return s.cannotServe(ctx, refused)
	}
	if proc != nil {
		select {
		case <-proc.exited:
			return fmt.Errorf("ssh server of machine %s stopped: %v%s", s.conf.ID, proc.err, proc.lastLines())
		default:
		}
	}
	if err != nil {
		return fmt.Errorf("ssh server of machine %s: %w", s.conf.ID, err)
	}
	return nil
}

// sshdSetup is what a machine's server needs before it first starts: the public half of its
// host key, the account it logs in, and that account's files when the machine is isolated.
type sshdSetup struct {
	hostKey, login string
	account        *machineAccount
}

// cannotServeError is a reason the machine cannot have an ssh server (recorded, not retried).
type cannotServeError struct{ err error }

func (e cannotServeError) Error() string { return e.err.Error() }

// errRefused ends the keys' watch when the server cannot serve.
var errRefused = errors.New("the ssh server cannot serve")

// prepare readies the server's directory, host key and login account.
func (s *sshServer) prepare() (*sshdSetup, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("ssh server: %w", err)
	}
	hostKey, err := ensureHostKey(filepath.Join(s.dir, sshdHostKeyFile))
	if err != nil {
		return nil, fmt.Errorf("ssh server: %w", err)
	}
	current, err := user.Current()
	if err != nil {
		return nil, cannotServeError{fmt.Errorf("finding the account to log in: %w", err)}
	}
	setup := &sshdSetup{hostKey: hostKey, login: current.Username}
	if s.conf.isolated() {
		if setup.account, err = s.machineAccount(); err != nil {
			return nil, cannotServeError{err}
		}
		setup.login = setup.account.name
	}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll(sshdPrivsepDir, 0o755); err != nil {
			return nil, cannotServeError{fmt.Errorf("making sshd's privilege separation directory: %w", err)}
		}
	}
	return setup, nil
}

// binary finds sshd: it must be called by its absolute path (it re-executes itself).
func (s *sshServer) binary() (string, error) {
	if s.sshd != "" {
		return s.sshd, nil
	}
	for _, p := range s.binaryPaths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := lookPathSSHD(); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("no OpenSSH server (sshd) on this host: install openssh-server")
}

// lookPathSSHD is exec.LookPath("sshd"), its answer kept for a minute: every machine agent
// asks when it starts, and on a host without sshd the search stats every directory of $PATH
// (fifteen calls here) for each of thousands of machines. Installing sshd is seen a minute on;
// a different $PATH at once.
var lookPathSSHD = cachedLookPath("sshd", time.Minute)

func cachedLookPath(name string, keep time.Duration) func() (string, error) {
	var (
		mu       sync.Mutex
		at       time.Time
		pathEnv  string
		path     string
		notFound error
	)
	return func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if env := os.Getenv("PATH"); at.IsZero() || time.Since(at) > keep || env != pathEnv {
			path, notFound = exec.LookPath(name)
			at, pathEnv = time.Now(), env
		}
		return path, notFound
	}
}

// cannotServe records why the machine has no ssh server, and stops (the Runner does not
// restart a run that returns nil).
func (s *sshServer) cannotServe(ctx context.Context, why error) error {
	err := s.api.SetSSHHost(ctx, &pb.SetSSHHostRequest{Model: s.conf.Model, MachineId: s.conf.ID, Error: why.Error()})
	if err != nil {
		return fmt.Errorf("ssh server of machine %s: %v (and recording that failed: %w)", s.conf.ID, why, err)
	}
	return nil
}

// machineAccount is the account an isolated machine's sshd logs in: the machine's uid and gid
// under the machine's name (its instance id, juju-<model>-<machine>), with the machine's home
// directory and bash. The uid has no account on the host (see controller/provider/local), and
// sshd, sftp and scp want one; so the server runs in a mount namespace of its own, where
// /etc/passwd and /etc/group are bound to copies of the host's with the machine's account
// added (startSSHD). The host's own files are never written. sshd switches to the uid itself,
// so every session, command and copy runs as it, with the environment sshd gives a user.
type machineAccount struct{ name, passwd, group string }

// machineAccount readies the server of an isolated machine: its directory (root:<gid> 0710, so
// that sshd, reading authorized_keys as the user, can), the machine's home, and the account
// files.
func (s *sshServer) machineAccount() (*machineAccount, error) {
	if err := prepareAgentDir(s.dir, s.conf); err != nil {
		return nil, err
	}
	home, err := ensureHome(filepath.Dir(s.dir), s.conf)
	if err != nil {
		return nil, err
	}
	a := &machineAccount{name: machineUser(s.conf),
		passwd: filepath.Join(s.dir, sshdPasswdFile), group: filepath.Join(s.dir, sshdGroupFile)}
	// "*": no password (and not locked, which sshd would refuse).
	user := fmt.Sprintf("%s:*:%d:%d:juju machine %s:%s:/bin/bash", a.name, s.conf.UID, s.conf.GID, s.conf.ID, home)
	group := fmt.Sprintf("%s:x:%d:", a.name, s.conf.GID)
	for _, f := range []struct {
		host, copy, line string
		id               int
	}{{"/etc/passwd", a.passwd, user, s.conf.UID}, {"/etc/group", a.group, group, s.conf.GID}} {
		if err := withAccount(f.host, f.copy, a.name, f.id, f.line); err != nil {
			return nil, fmt.Errorf("ssh server: %w", err)
		}
	}
	return a, nil
}

// machineUser is an isolated machine's account name: its instance id, as the local provider
// names it (juju-<last 6 of the model's uuid>-<machine>, under 32 characters).
func machineUser(c Conf) string {
	short := c.Model
	if len(short) > 6 {
		short = short[len(short)-6:]
	}
	return "juju-" + short + "-" + strings.ReplaceAll(c.ID, "/", "-")
}

// withAccount writes copy (0644): the account database host without any entry of name or id,
// then line.
func withAccount(host, copy, name string, id int, line string) error {
	data, err := os.ReadFile(host)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		fields := strings.Split(l, ":")
		if len(fields) > 2 && (fields[0] == name || fields[2] == strconv.Itoa(id)) {
			continue
		}
		b.WriteString(l + "\n")
	}
	b.WriteString(line + "\n")
	return atomicfile.Write(copy, []byte(b.String()), 0o644)
}

// start starts sshd on the machine's address and returns once it listens.
func (s *sshServer) start(sshd, login string, account *machineAccount) (*sshdProcess, error) {
	addr := s.conf.address()
	saved, _ := readPort(filepath.Join(s.dir, sshdPortFile))
	port, err := choosePort(addr, s.port, saved)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(s.dir, sshdPortFile), []byte(strconv.Itoa(port)+"\n"), 0o600); err != nil {
		return nil, err
	}
	config, err := sshdConfig(s.dir, addr, port, login)
	if err != nil {
		return nil, err
	}
	configPath := filepath.Join(s.dir, sshdConfigFile)
	if err := atomicfile.Write(configPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	return startSSHD(sshd, configPath, filepath.Join(s.dir, sshdLogFile), port, account)
}

// choosePort picks the port the server binds on addr: preferred if free, else the port it
// had before (clients that remember it keep working), else a free one.
func choosePort(addr string, preferred, saved int) (int, error) {
	for _, p := range []int{preferred, saved} {
		if p <= 0 {
			continue
		}
		if l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(p))); err == nil {
			l.Close()
			return p, nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a port for the ssh server on %s: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func readPort(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// sshdConfig is the server's whole configuration: nothing is read from /etc/ssh.
func sshdConfig(dir, addr string, port int, login string) (string, error) {
	q := func(p string) (string, error) {
		if strings.ContainsAny(p, "\"\n\\") {
			return "", fmt.Errorf("ssh server: cannot use path %q in sshd_config", p)
		}
		return `"` + p + `"`, nil
	}
	var paths [3]string
	for i, name := range []string{sshdHostKeyFile, sshdKeysFile, sshdPidFile} {
		var err error
		if paths[i], err = q(filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by the machine agent each time it starts sshd.\n")
	fmt.Fprintf(&b, "ListenAddress %s\n", net.JoinHostPort(addr, strconv.Itoa(port)))
	fmt.Fprintf(&b, "HostKey %s\n", paths[0])
	fmt.Fprintf(&b, "AuthorizedKeysFile %s\n", paths[1])
	fmt.Fprintf(&b, "PidFile %s\n", paths[2])
	fmt.Fprintf(&b, "AllowUsers %s\n", login)
	b.WriteString(`PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
# The agent writes these files 0600 in a 0700 directory; the data directory itself may sit
# under a world-writable one (/tmp), which StrictModes would refuse.
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AcceptEnv LANG LC_*
Subsystem sftp internal-sftp
`)
	return b.String(), nil
}

// ensureHostKey returns the public half (authorized_keys form) of the machine's host key,
// making the key the first time: it stays the same across restarts, so what clients were told
// to expect stays true.
func ensureHostKey(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return "", fmt.Errorf("generating host key: %w", err)
		}
		block, err := ssh.MarshalPrivateKey(priv, "")
		if err != nil {
			return "", fmt.Errorf("encoding host key: %w", err)
		}
		data = pem.EncodeToMemory(block)
		if err := atomicfile.Write(path, data, 0o600); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", fmt.Errorf("reading host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return "", fmt.Errorf("reading host key %s: %w", path, err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), nil
}

// writeAuthorizedKeys replaces the server's authorized_keys; sshd reads it at each login, as
// the user who logs in: an isolated machine's uid reads it through its group (0640).
func writeAuthorizedKeys(path string, keys []string, c Conf) error {
	var b strings.Builder
	b.WriteString("# The model's authorized keys, written by the machine agent (juju add-ssh-key).\n")
	for _, k := range keys {
		b.WriteString(strings.TrimSpace(k))
		b.WriteByte('\n')
	}
	if !c.isolated() {
		return atomicfile.Write(path, []byte(b.String()), 0o600)
	}
	// Readable by the group before it is in place, so that no login finds it unreadable. The
	// directory is root's, so the uid cannot have put anything at tmp.
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	err := os.Chown(tmp, 0, c.GID)
	if err == nil {
		err = os.Chmod(tmp, 0o640)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// stopStale ends an sshd of this machine left by an agent that died without stopping it (its
// pid file names it, and its command line names this machine's configuration).
func stopStale(pidFile, configPath string) {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), configPath) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// sshdProcess is a running sshd.
type sshdProcess struct {
	cmd    *exec.Cmd
	port   int
	exited chan struct{} // closed when the process has ended; err says how
	err    error
	mu     sync.Mutex
	tail   []string // the last lines it logged, for errors
}

// startSSHD starts sshd in the foreground, logging to logPath, and waits until it says it
// listens (or fails to).
func startSSHD(sshd, configPath, logPath string, port int, account *machineAccount) (*sshdProcess, error) {
	cmd := exec.Command(sshd, "-D", "-e", "-f", configPath)
	// The server must not outlive the controller process that supervises it.
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if account != nil {
		// Its own mount namespace (made private, so nothing leaks to the host), where the
		// account files are bound over the host's before sshd starts in the same process.
		cmd = exec.Command("/bin/sh", "-c", `mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && exec "$3" -D -e -f "$4"`,
			"sh", account.passwd, account.group, sshd, configPath)
		attr.Unshareflags = syscall.CLONE_NEWNS
	}
	cmd.SysProcAttr = attr
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	logw, err := newRotatingLog(logPath, sshdLogMax)
	if err != nil {
		return nil, err
	}
	if err := timerslack.Start(cmd); err != nil {
		logw.Close()
		return nil, fmt.Errorf("starting %s: %w", sshd, err)
	}
	p := &sshdProcess{cmd: cmd, port: port, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer logw.Close()
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logw, line)
			p.remember(line)
			if !signalled && strings.HasPrefix(line, "Server listening on ") {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-ready:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("sshd did not start: %v%s", p.err, p.lastLines())
	case <-time.After(sshdReadyTimeout):
		p.stop()
		return nil, fmt.Errorf("sshd did not listen within %s%s", sshdReadyTimeout, p.lastLines())
	}
}

func (p *sshdProcess) remember(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail = append(p.tail, line)
	if len(p.tail) > 3 {
		p.tail = p.tail[len(p.tail)-3:]
	}
}

// lastLines is what the server said last, for an error message (": a; b" or "").
func (p *sshdProcess) lastLines() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tail) == 0 {
		return ""
	}
	return ": " + strings.Join(p.tail, "; ")
}

// stop ends the server: the listener goes; sessions already open carry on, as with any sshd.
func (p *sshdProcess) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// rotatingLog appends to a file and moves it to <file>.1 when it grows past max.
type rotatingLog struct {
	path    string
	max     int64
	f       *os.File
	written int64
}

func newRotatingLog(path string, max int64) (*rotatingLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &rotatingLog{path: path, max: max, f: f, written: fi.Size()}, nil
}

func (l *rotatingLog) Write(b []byte) (int, error) {
	if l.written+int64(len(b)) > l.max {
		l.f.Close()
		_ = os.Rename(l.path, l.path+".1")
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		l.f, l.written = f, 0
	}
	n, err := l.f.Write(b)
	l.written += int64(n)
	return n, err
}

func (l *rotatingLog) Close() error { return l.f.Close() }
