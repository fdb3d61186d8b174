package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/internal/timerslack"
)

// DefaultHookTimeout is how long a hook may run before it is killed and reported as failed.
const DefaultHookTimeout = 5 * time.Minute

// errHookMissing: the charm has no such hook; Juju treats that as the hook having run.
var errHookMissing = errors.New("no such hook")

// hookError is a hook that ran and failed (non-zero exit, killed at its time limit).
type hookError struct {
	hook   string
	reason string
}

func (e *hookError) Error() string { return fmt.Sprintf("hook %q %s", e.hook, e.reason) }

// execHook runs the charm's hook as Juju 3.6 does: ./dispatch when the charm has one (it
// learns the hook from JUJU_DISPATCH_PATH), else hooks/<name>. It runs in the charm directory
// as a process in its own process group, with env, its output to the unit log, killed with its
// children at the time limit.
func (a *unitAgent) execHook(ctx context.Context, h *hookSpec, env func() []string) error {
	name := h.Name()
	path := filepath.Join(a.charmDir(), "hooks", name)
	if a.dispatch {
		path = filepath.Join(a.charmDir(), "dispatch")
	}
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return errHookMissing
	}
	if err != nil {
		return &hookError{hook: name, reason: fmt.Sprintf("cannot be read: %v", err)}
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		if a.dispatch {
			return &hookError{hook: name, reason: "cannot run: the charm's dispatch is not executable"}
		}
		return &hookError{hook: name, reason: "is not executable"}
	}
	if err := a.isolate(); err != nil {
		return err
	}
	module := "unit." + a.conf.ID + "." + name
	a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("running %q hook", name))
	hctx, cancel := context.WithTimeout(ctx, a.hookTimeout)
	defer cancel()
	defer slotOf(ctx).during(ctx)() // a hook's run holds no permit (workslots.go)
	cmd := exec.CommandContext(hctx, path)
	cmd.Dir = a.charmDir()
	cmd.Env = env()
	// Its own process group, so that the time limit kills what the hook started too; as the
	// machine's uid when it has one; killed if the agent dies (Conf.procAttr).
	cmd.SysProcAttr = a.conf.procAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A daemon the hook leaves behind may keep its output open: stop reading soon after the
	// hook itself exits.
	cmd.WaitDelay = 2 * time.Second
	stdout := &lineLogger{log: a.log, level: "DEBUG", module: module}
	stderr := &lineLogger{log: a.log, level: "WARNING", module: module}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = timerslack.Run(cmd)
	stdout.flush()
	stderr.flush()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(hctx.Err(), context.DeadlineExceeded):
		return &hookError{hook: name, reason: fmt.Sprintf("timed out after %s and was killed", a.hookTimeout)}
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		return nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &hookError{hook: name, reason: "failed: " + exit.ProcessState.String()}
	}
	return &hookError{hook: name, reason: fmt.Sprintf("could not run: %v", err)}
}

// lineLogger writes a hook's output to the unit log line by line.
type lineLogger struct {
	log           *unitLog
	level, module string
	buf           []byte
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.log.write(w.level, w.module, string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a very long line: log it in pieces
		w.flush()
	}
	return len(p), nil
}

func (w *lineLogger) flush() {
	if len(w.buf) > 0 {
		w.log.write(w.level, w.module, string(w.buf))
		w.buf = nil
	}
}

// JujuVersion is the Juju version hooks are told they run under (JUJU_VERSION): this controller
// implements Juju 3.6's hook environment and tools, and ops takes its modern paths from it. It
// is the version `juju version` prints.
const JujuVersion = version.Juju

// systemPath is the PATH of charm code, after the hook tools.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hookEnv is the environment of a hook, as Juju 3.6 gives it.
func (a *unitAgent) hookEnv(h *hookSpec, contextID string, snap *snapshot) []string {
	env := append(a.contextEnv(contextID, snap),
		"JUJU_HOOK_NAME="+h.Name(),
		"JUJU_DISPATCH_PATH=hooks/"+h.Name(),
	)
	if h.relation() {
		env = append(env,
			"JUJU_RELATION="+h.Endpoint,
			"JUJU_RELATION_ID="+relationTag(h.Endpoint, h.RelationID),
			"JUJU_REMOTE_APP="+h.RemoteApp,
		)
		if h.RemoteUnit != "" {
			env = append(env, "JUJU_REMOTE_UNIT="+h.RemoteUnit)
		}
		if h.Kind == hookDeparted {
			// The unit that departs: the remote unit, or this unit itself when it is the one
			// leaving (it departs from every counterpart before -broken).
			departing := h.RemoteUnit
			if h.SelfDeparting {
				departing = a.conf.ID
			}
			env = append(env, "JUJU_DEPARTING_UNIT="+departing)
		}
	}
	return env
}

// contextEnv is what every process run in the unit's context gets (hooks, actions, juju exec
// commands): the hook tools on PATH, the context id they present, and the unit's identity.
func (a *unitAgent) contextEnv(contextID string, snap *snapshot) []string {
	env := []string{
		"PATH=" + a.toolsDir() + string(os.PathListSeparator) + systemPath,
		"HOME=" + a.homeDir(),
		"LANG=C.UTF-8",
		"JUJU_VERSION=" + JujuVersion,
		"JUJU_CONTEXT_ID=" + contextID,
		"JUJU_AGENT_SOCKET=" + a.toolsAddr,
		"JUJU_UNIT_NAME=" + a.conf.ID,
		"JUJU_MODEL_UUID=" + a.conf.Model,
		"JUJU_MODEL_NAME=" + snap.app.GetModelName(),
		"JUJU_MACHINE_ID=" + snap.unit.GetMachine(),
		"JUJU_AVAILABILITY_ZONE=" + a.conf.Zone,
		"JUJU_API_ADDRESSES=" + a.conf.APIAddr,
		"JUJU_CHARM_DIR=" + a.charmDir(),
		"CHARM_DIR=" + a.charmDir(),
	}
	if a.principal != "" {
		env = append(env, "JUJU_PRINCIPAL_UNIT="+a.principal)
	}
	// The model's proxies (juju-http-proxy ... as JUJU_CHARM_HTTP_PROXY ...), as Juju gives them.
	return append(env, modelconfig.ProxyEnv(snap.app.GetModelConfig())...)
}

// homeDir is HOME for the unit's processes: the unit's directory, or, when they run as the
// machine's uid, the directory in it that the uid owns (the unit's directory is root's).
func (a *unitAgent) homeDir() string {
	if a.conf.isolated() {
		return filepath.Join(a.dir, homeDirName)
	}
	return a.dir
}

// toolsBinaryLink is the hook tools' binary inside the tools directory, when the machine's uid
// cannot reach the one the runner names (it sits under a directory only root may enter).
const toolsBinaryLink = ".hook-tools"

// installTools gives the unit its hook tools: the runner's shared directory when it has one
// the unit's charm code may use, else links in the unit's own tools directory. When the unit's charm code
// runs as its machine's uid, the directory is 0755 (it holds only the links) and the links go
// to a binary the uid can run: the runner's, or else a hard link (or copy) of it in the
// directory. The binary is chosen before the links are made, so that a restarted agent never
// points them, even for a moment, where a hook still running could not follow.
func (a *unitAgent) installTools() error {
	if dir, ok, err := a.runner.sharedTools(a.conf); err != nil {
		return err
	} else if ok {
		a.sharedToolsDir = dir
		return nil
	}
	binary := a.toolsBinary
	if a.conf.isolated() {
		if err := os.MkdirAll(a.toolsDir(), 0o755); err != nil {
			return err
		}
		if err := os.Chmod(a.toolsDir(), 0o755); err != nil {
			return fmt.Errorf("opening the hook tools to the machine's uid: %w", err)
		}
		if !a.conf.canRun(binary) {
			var err error
			if binary, err = linkBinary(a.toolsBinary, filepath.Join(a.toolsDir(), toolsBinaryLink)); err != nil {
				return fmt.Errorf("giving the hook tools to the machine's uid: %w", err)
			}
			if !a.conf.canRun(binary) {
				return fmt.Errorf("the hook tools binary %s cannot be run by uid %d", binary, a.conf.UID)
			}
		}
	}
	return hooktool.InstallTools(a.toolsDir(), binary)
}

// isolate readies the unit for charm code that runs as its machine's uid (nothing to do when it
// does not): the home directory. Its hooks' tools answer that uid alone (registerContext). It
// runs before each process the unit starts (hooks, actions, juju exec): a deploy of thousands of
// units without hooks makes no directory it would not use. Making it twice does no harm.
func (a *unitAgent) isolate() error {
	if !a.conf.isolated() || a.homeMade.Load() {
		return nil
	}
	if _, err := ensureHome(a.dir, a.conf); err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	a.homeMade.Store(true)
	return nil
}

// canRun reports whether the machine's processes may execute path: asked of the kernel, by a
// shell running as them, so that every directory on the way and every link counts.
func (c Conf) canRun(path string) bool {
	cmd := exec.Command("/bin/sh", "-c", `[ -x "$1" ]`, "sh", path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.credential()}
	return cmd.Run() == nil
}

// linkBinary puts binary at dst, a hard link when it can (same file system, executable by
// anyone), else a copy (0755); a dst that is that binary already is kept. It returns dst.
func linkBinary(binary, dst string) (string, error) {
	src, err := os.Stat(binary)
	if err != nil {
		return "", err
	}
	if cur, err := os.Stat(dst); err == nil && os.SameFile(src, cur) {
		return dst, nil
	}
	tmp := dst + ".tmp"
	_ = os.Remove(tmp)
	if src.Mode().Perm()&0o001 == 0 || os.Link(binary, tmp) != nil {
		if err := copyFile(binary, tmp, 0o755); err != nil {
			_ = os.Remove(tmp)
			return "", err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return dst, nil
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, perm) // the umask may have taken bits off
}

// installSharedTools installs the hook tools in a directory of root named by the binary's
// identity (path, size, time, inode), 0755 and root's: links to a hard link (or copy) of the
// binary inside it, so that a rebuilt binary gets a new directory while hooks started with the
// old one keep theirs, and the tools stay within reach of the machines' uids wherever the
// binary lies. Directories of other binaries are removed: they were a previous process's,
// whose hooks died with it. It returns the directory.
func installSharedTools(root, binary string) (string, error) {
	binary, err := filepath.Abs(binary)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(binary)
	if err != nil {
		return "", fmt.Errorf("installing hook tools: %w", err)
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d", binary, fi.Size(), fi.ModTime().UnixNano(), ino))
	name := "v-" + hex.EncodeToString(sum[:8])
	dir := filepath.Join(root, name)
	for _, d := range []string{root, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("installing hook tools: %w", err)
		}
		if err := os.Chmod(d, 0o755); err != nil { // whatever the umask took
			return "", fmt.Errorf("installing hook tools: %w", err)
		}
	}
	linked, err := linkBinary(binary, filepath.Join(dir, toolsBinaryLink))
	if err != nil {
		return "", fmt.Errorf("installing hook tools: %w", err)
	}
	if err := hooktool.InstallTools(dir, linked); err != nil {
		return "", err
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.Name() != name && strings.HasPrefix(e.Name(), "v-") {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
	return dir, nil
}
