// Package timerslack sets how late the kernel may wake the long-running processes' threads
// from a timed sleep (their timer slack), and keeps that setting out of charm code.
//
// Under load the Go runtime's monitor thread (sysmon) sleeps 20 µs between looks at the
// scheduler, and with Linux's default slack of 50 µs it wakes about 14,000 times a second.
// On a machine where a wake-up is dear (a VM whose interrupts go through its hypervisor) that
// was 7 to 11 % of jujud's and the agent host's CPU during a large deploy, and the processor
// handoffs it causes cost more again. With a slack of a millisecond the same add-unit of 5,000
// units cost both processes a quarter less CPU (issue 16). Nothing in them needs a timer to
// fire within a millisecond: the runtime's own timers already round to one.
package timerslack

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Daemon is the slack of jujud's long-running processes: the controller and the agent host.
const Daemon = time.Millisecond

// Default is Linux's slack for a thread of normal priority (what init starts with, and what
// every process inherits unless one in between changed it).
const Default = 50 * time.Microsecond

// reexecEnv marks the process Ensure started, so that it never starts another.
const reexecEnv = "JUJUD_TIMERSLACK_REEXEC"

// Current is the calling thread's slack.
func Current() (time.Duration, error) {
	ns, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return 0, fmt.Errorf("reading the timer slack: %w", err)
	}
	return time.Duration(ns), nil
}

// Ensure gives every thread of this process a slack of at least want. A thread takes its
// slack from the thread that made it, and the runtime makes its monitor thread before main
// runs, so setting it now would miss that thread: Ensure sets it on this thread and executes
// the process's own binary again, with the same arguments and environment; the new image
// starts with that slack (prctl(2): kept across execve) and returns from Ensure at once. It
// returns (with nothing changed) only where the process cannot be replaced.
func Ensure(want time.Duration) error {
	if _, again := os.LookupEnv(reexecEnv); again {
		// Set before the exec: its children (hooks among them) must not see it.
		return os.Unsetenv(reexecEnv)
	}
	cur, err := Current()
	if err != nil || cur >= want {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := set(want); err != nil {
		return err
	}
	err = syscall.Exec(exe, os.Args, append(os.Environ(), reexecEnv+"=1"))
	_ = set(cur) // still this process: leave the thread as it was
	return fmt.Errorf("executing %s again with a timer slack of %s: %w", exe, want, err)
}

// Start starts cmd with Linux's default slack, whatever this process's is: a child takes the
// slack of the thread that forks it, and charm code (hooks, actions, sshd) should run as it
// would under Juju. The forking thread is this goroutine's, locked for the call.
func Start(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := Current()
	if err != nil || prev == Default {
		return cmd.Start()
	}
	if err := set(Default); err != nil {
		return cmd.Start()
	}
	err = cmd.Start()
	_ = set(prev)
	return err
}

// Run is Start then Wait, as cmd.Run.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// set gives the calling thread slack d; the caller holds the thread (LockOSThread).
func set(d time.Duration) error {
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(d.Nanoseconds()), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the timer slack: %w", err)
	}
	return nil
}
