package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// A machine's execution locks, as Juju's machine lock and its groups: a task that is not
// parallel, or that has an execution group, holds one while it runs, so that the tasks holding
// the same lock on one machine run one after another. Which lock is Juju's choice:
//
//   - a unit's task takes "machine-lock" (Juju's hook lock) when it is not parallel, and
//     "machine-lock-<group>" when it has an execution group;
//   - a machine's exec task takes "machine-lock-exec-command", or
//     "machine-lock-exec-command-<group>".
//
// A parallel task without a group takes none. Unlike Juju, this controller runs the hooks of a
// machine's units side by side, without "machine-lock": a task that is not parallel waits for
// its own unit's hooks (a unit runs one thing at a time) and for the other tasks holding the
// lock, not for other units' hooks.
//
// Each lock is a file in <machine>/locks/, held with flock(2), so that it holds between agents
// whether they are goroutines of one process (today) or processes of their own; within one
// process the waiters queue in order first, so that a group's tasks run in the order they
// were queued.

// lockPoll is how often a waiter tries again for a lock that another process holds.
const lockPoll = 50 * time.Millisecond

// errLockAbandoned is the end of a wait for a lock whose task was cancelled meanwhile.
var errLockAbandoned = errors.New("task cancelled while waiting for the machine's execution lock")

// processLocks holds, per lock file, this process's turn: a channel with room for one.
var processLocks sync.Map

// unitTaskLock is the lock a unit's task takes, "" for none.
func unitTaskLock(t *pb.Task) string {
	switch {
	case t.GetExecutionGroup() != "":
		return "machine-lock-" + t.GetExecutionGroup()
	case !t.GetParallel():
		return "machine-lock"
	}
	return ""
}

// machineTaskLock is the lock a machine's exec task takes, "" for none.
func machineTaskLock(t *pb.Task) string {
	switch {
	case t.GetExecutionGroup() != "":
		return "machine-lock-exec-command-" + t.GetExecutionGroup()
	case !t.GetParallel():
		return "machine-lock-exec-command"
	}
	return ""
}

// lockFile is where a lock lives: its name, escaped for a file name (a group is any string),
// or a digest of it when that would be too long.
func lockFile(machineDir, name string) string {
	file := url.PathEscape(name)
	if len(file) > 200 {
		sum := sha256.Sum256([]byte(name))
		file = "machine-lock-" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(machineDir, "locks", file)
}

// machineDirOf is the directory of the machine a unit's agent runs on: its deployers put a
// principal in <machine>/units/<unit> and a subordinate in <principal>/subordinates/<unit>. A
// unit directory laid out otherwise (a test's) has its locks to itself.
func machineDirOf(unitDir string) string {
	d := filepath.Dir(unitDir)
	for filepath.Base(d) == "subordinates" {
		d = filepath.Dir(filepath.Dir(d))
	}
	if filepath.Base(d) == "units" {
		return filepath.Dir(d)
	}
	return unitDir
}

// acquireLock waits for the named lock of the machine in machineDir and returns its release.
// It gives up when abort is closed (errLockAbandoned) or ctx ends.
func acquireLock(ctx context.Context, abort <-chan struct{}, machineDir, name string) (release func(), err error) {
	path := lockFile(machineDir, name)
	v, _ := processLocks.LoadOrStore(path, make(chan struct{}, 1))
	turn := v.(chan struct{})
	select {
	case turn <- struct{}{}: // blocked senders are served in order: FIFO
	case <-abort:
		return nil, errLockAbandoned
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f, err := openLockFile(path)
	if err != nil {
		<-turn
		return nil, err
	}
	giveUp := func(err error) (func(), error) {
		f.Close()
		<-turn
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return giveUp(fmt.Errorf("locking %s: %w", path, err))
		}
		// Another process holds it; flock has no wait that a cancellation could end.
		select {
		case <-time.After(lockPoll):
		case <-abort:
			return giveUp(errLockAbandoned)
		case <-ctx.Done():
			return giveUp(ctx.Err())
		}
	}
	return func() {
		f.Close() // drops the flock
		<-turn
	}, nil
}

func openLockFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the machine's lock directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the machine's lock: %w", err)
	}
	return f, nil
}
