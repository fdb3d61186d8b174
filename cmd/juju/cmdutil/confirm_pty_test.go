//go:build linux

package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/output"
)

const confirmHelperEnv = "JUJU_TEST_CONFIRM_HELPER"

// TestConfirmHelperProcess is the command the pty test runs in a terminal of its own: a removal
// prompting on the terminal, interrupted as juju's main is (SIGINT cancels the context). It
// prints the calls made and exits as root does: "ERROR <err>", 1.
func TestConfirmHelperProcess(t *testing.T) {
	if os.Getenv(confirmHelperEnv) != "1" {
		t.Skip("helper process of TestCtrlCAtThePromptInATerminal")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ios := &output.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, InTerminal: true}
	fake := &fakeRemover{dryRun: twoUnits(), real: twoUnits()}
	err := RunRemoval(ctx, &Removal{IO: ios, Noun: "unit", Remove: fake.remove,
		Request: &jujupb.RemoveRequest{Model: "uuid", Names: []string{"mysql/1", "wordpress/0"}}})
	fmt.Fprintf(os.Stderr, "calls: %s\n", fake.calls())
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// openPTY returns a new pseudo-terminal's master and the path of its slave.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		master.Close()
		t.Fatalf("unlocking the pty: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		master.Close()
		t.Fatalf("naming the pty: %v", errno)
	}
	return master, fmt.Sprintf("/dev/pts/%d", n)
}

// Ctrl-C typed at "Continue [y/N]?" in a real terminal: the terminal sends SIGINT, and the
// command ends at once with exit 1, having sent the dry run and not the removal. Before, the
// prompt kept reading until Enter.
func TestCtrlCAtThePromptInATerminal(t *testing.T) {
	master, slavePath := openPTY(t)
	defer master.Close()
	slave, err := os.OpenFile(slavePath, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConfirmHelperProcess$")
	cmd.Env = append(os.Environ(), confirmHelperEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A session of its own with the pty as its controlling terminal: ^C signals its group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()

	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.After(30 * time.Second)
	for !strings.Contains(shown(), "Continue [y/N]? ") {
		select {
		case err := <-exited:
			t.Fatalf("exited before prompting (%v): %q", err, shown())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("no prompt: %q", shown())
		case <-time.After(10 * time.Millisecond):
		}
	}
	typed := time.Now()
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit = %v, want exit status 1", err)
		}
		if d := time.Since(typed); d > 5*time.Second {
			t.Errorf("took %v to end after Ctrl-C", d)
		}
	case <-deadline:
		_ = cmd.Process.Kill()
		t.Fatalf("still running after Ctrl-C: %q", shown())
	}
	// The reader may still be draining: wait for the last line.
	for !strings.Contains(shown(), "ERROR unit removal: interrupted") {
		select {
		case <-deadline:
			t.Fatalf("screen = %q", shown())
		case <-time.After(10 * time.Millisecond):
		}
	}
	out := shown()
	if !strings.Contains(out, "calls: dry-run\r\n") {
		t.Errorf("calls: want only the dry run; screen = %q", out)
	}
	if !strings.Contains(out, "Continue [y/N]? ^C\r\n") {
		t.Errorf("the prompt's line is not ended after ^C; screen = %q", out)
	}
}
