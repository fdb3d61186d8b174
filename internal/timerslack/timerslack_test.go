package timerslack

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary the process under test: it calls Ensure, then reports.
const helperEnv = "TIMERSLACK_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helper())
	}
	os.Exit(m.Run())
}

// helper calls Ensure(Daemon) and prints its pid, its thread's slack, whether the re-exec mark
// is still set, and (where it may read them: root) the least slack of all its threads.
func helper() int {
	if err := Ensure(Daemon); err != nil {
		fmt.Println("error", err)
		return 1
	}
	cur, err := Current()
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	_, marked := os.LookupEnv(reexecEnv)
	least := "unread"
	if os.Geteuid() == 0 {
		least = leastThreadSlack()
	}
	fmt.Println(os.Getpid(), cur.Nanoseconds(), marked, least)
	return 0
}

// leastThreadSlack reads every thread's slack from /proc/<tid> (another thread's needs
// CAP_SYS_NICE).
func leastThreadSlack() string {
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return "error " + err.Error()
	}
	least := int64(-1)
	for _, t := range tids {
		data, err := os.ReadFile("/proc/" + t.Name() + "/timerslack_ns")
		if err != nil {
			return "error " + err.Error()
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return "error " + err.Error()
		}
		if least < 0 || ns < least {
			least = ns
		}
	}
	return strconv.FormatInt(least, 10)
}

func TestEnsureExecutesTheProcessAgainWithTheSlack(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Started with Linux's default, whatever this test process's threads have.
	if err := Run(cmd); err != nil {
		t.Fatalf("helper: %v: %s", err, out.String())
	}
	f := strings.Fields(out.String())
	if len(f) != 4 {
		t.Fatalf("helper said %q", out.String())
	}
	if f[0] != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("helper ran as pid %s, started as %d: not the same process", f[0], cmd.Process.Pid)
	}
	if f[1] != strconv.FormatInt(Daemon.Nanoseconds(), 10) {
		t.Errorf("helper's slack = %s ns, want %d", f[1], Daemon.Nanoseconds())
	}
	if f[2] != "false" {
		t.Errorf("the re-exec mark is still in the helper's environment, for its children to see")
	}
	// Every thread, the runtime's monitor among them, has it: the point of executing again.
	if f[3] != "unread" && f[3] != strconv.FormatInt(Daemon.Nanoseconds(), 10) {
		t.Errorf("least slack of the helper's threads = %s, want %d", f[3], Daemon.Nanoseconds())
	}
}

func TestEnsureLeavesALargerSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore := setForTest(t, 2*Daemon)
	defer restore()
	// Would execute the test binary again (and fail the test) if it did anything.
	if err := Ensure(Daemon); err != nil {
		t.Fatal(err)
	}
	if cur, _ := Current(); cur != 2*Daemon {
		t.Errorf("slack = %s, want %s", cur, 2*Daemon)
	}
}

func TestStartGivesChildrenTheDefault(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore := setForTest(t, Daemon)
	defer restore()

	childSlack := func(start func(*exec.Cmd) error) string {
		t.Helper()
		cmd := exec.Command("cat", "/proc/self/timerslack_ns")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out.String())
	}
	// The test means something: a child started the usual way takes this thread's slack.
	if got := childSlack((*exec.Cmd).Start); got != strconv.FormatInt(Daemon.Nanoseconds(), 10) {
		t.Fatalf("a child of a thread with %s of slack has %s ns", Daemon, got)
	}
	if got := childSlack(Start); got != strconv.FormatInt(Default.Nanoseconds(), 10) {
		t.Errorf("child started by Start has %s ns of slack, want %d", got, Default.Nanoseconds())
	}
	if cur, _ := Current(); cur != Daemon {
		t.Errorf("Start left the thread's slack at %s, want %s back", cur, Daemon)
	}
}

// setForTest gives the (locked) calling thread slack d and returns what puts it back.
func setForTest(t *testing.T, d time.Duration) func() {
	t.Helper()
	prev, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if err := set(d); err != nil {
		t.Fatal(err)
	}
	return func() { _ = set(prev) }
}
