package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// lockWait bounds a wait for a lock call that should return; only a hang reaches it.
const lockWait = 30 * time.Second

func TestTaskLockNames(t *testing.T) {
	tests := []struct {
		parallel      bool
		group         string
		unit, machine string
	}{
		{true, "", "", ""},
		{false, "", "machine-lock", "machine-lock-exec-command"},
		{true, "db", "machine-lock-db", "machine-lock-exec-command-db"},
		{false, "db", "machine-lock-db", "machine-lock-exec-command-db"},
	}
	for _, tt := range tests {
		task := &pb.Task{Parallel: tt.parallel, ExecutionGroup: tt.group}
		if got := unitTaskLock(task); got != tt.unit {
			t.Errorf("unit task parallel=%v group=%q: lock %q, want %q", tt.parallel, tt.group, got, tt.unit)
		}
		if got := machineTaskLock(task); got != tt.machine {
			t.Errorf("machine task parallel=%v group=%q: lock %q, want %q", tt.parallel, tt.group, got, tt.machine)
		}
	}
	// Any group is a file name of the machine's lock directory.
	for _, group := range []string{"../../x", "a/b", strings.Repeat("é", 150)} {
		path := lockFile("/m", "machine-lock-"+group)
		if filepath.Dir(path) != "/m/locks" || len(filepath.Base(path)) > 255 {
			t.Errorf("group %q: lock file %s", group, path)
		}
	}
}

func TestMachineDirOf(t *testing.T) {
	for dir, want := range map[string]string{
		"/i/0/units/unit-db-0":                         "/i/0",
		"/i/0/units/unit-db-0/subordinates/unit-log-0": "/i/0",
		"/tmp/unit": "/tmp/unit",
	} {
		if got := machineDirOf(dir); got != want {
			t.Errorf("machineDirOf(%s) = %s, want %s", dir, got, want)
		}
	}
}

// acquireAsync calls acquireLock in a goroutine.
func acquireAsync(ctx context.Context, abort <-chan struct{}, dir, name string) <-chan error {
	done := make(chan error, 1)
	go func() {
		release, err := acquireLock(ctx, abort, dir, name)
		if err == nil {
			release()
		}
		done <- err
	}()
	return done
}

func lockResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(lockWait):
		t.Fatal("the lock call did not return")
	}
	return nil
}

// A lock is held by one holder at a time, within the process and against another process
// (simulated by a flock of the file of its own); a waiter gives up when its task is cancelled
// or its agent stops; locks of other names do not wait.
func TestExecLockExcludes(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	release, err := acquireLock(ctx, nil, dir, "machine-lock-db")
	if err != nil {
		t.Fatal(err)
	}
	if err := lockResult(t, acquireAsync(ctx, nil, dir, "machine-lock")); err != nil {
		t.Fatalf("another lock: %v", err)
	}
	// Only a waiter can be abandoned: one that got the lock returns nil.
	abort := make(chan struct{})
	waiting := acquireAsync(ctx, abort, dir, "machine-lock-db")
	close(abort)
	if err := lockResult(t, waiting); !errors.Is(err, errLockAbandoned) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	stopCtx, stop := context.WithCancel(ctx)
	waiting = acquireAsync(stopCtx, nil, dir, "machine-lock-db")
	stop()
	if err := lockResult(t, waiting); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped waiter: %v", err)
	}
	next := acquireAsync(ctx, nil, dir, "machine-lock-db")
	release()
	if err := lockResult(t, next); err != nil {
		t.Fatal(err)
	}

	// Another process's hold.
	f, err := os.OpenFile(lockFile(dir, "machine-lock-db"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	abort = make(chan struct{})
	waiting = acquireAsync(ctx, abort, dir, "machine-lock-db")
	close(abort)
	if err := lockResult(t, waiting); !errors.Is(err, errLockAbandoned) {
		t.Fatalf("waiter behind another process: %v", err)
	}
	next = acquireAsync(ctx, nil, dir, "machine-lock-db")
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := lockResult(t, next); err != nil {
		t.Fatal(err)
	}
}
