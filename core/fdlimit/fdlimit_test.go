package fdlimit

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

func TestCheckSaysWhenTheReserveIsGone(t *testing.T) {
	if err := check(9_000, 10_000, 256); err != nil {
		t.Errorf("9,000 of 10,000 with 256 kept: %v", err)
	}
	err := check(9_800, 10_000, 256)
	if !errors.Is(err, ErrTooManyOpenFiles) || err.Error() != "too many open files: 9,800 in use of a limit of 10,000" {
		t.Errorf("9,800 of 10,000: %v", err)
	}
	if err := check(10, ^uint64(0), 256); err != nil {
		t.Errorf("no limit: %v", err)
	}
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1048576: "1,048,576"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}

// InUse counts what the process opens, and Check refuses once the real limit is near.
func TestInUseAndCheckAgainstTheRealLimit(t *testing.T) {
	before, err := InUse()
	if err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	for range 10 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	after, err := InUse()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f.Close()
	}
	if after-before != 10 {
		t.Errorf("in use %d then %d after opening 10", before, after)
	}
	limit, err := Limit()
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(0); err != nil {
		t.Errorf("Check(0): %v", err)
	}
	if limit < 1<<30 {
		if err := Check(int(limit)); !errors.Is(err, ErrTooManyOpenFiles) {
			t.Errorf("Check(limit %d) = %v", limit, err)
		}
	}
}

// Raise lifts a lowered soft limit back to the hard one.
func TestRaise(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	low := lim
	low.Cur = min(lim.Max, 512)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	got, err := Raise()
	if err != nil || got != lim.Max {
		t.Errorf("Raise = %d, %v; want the hard limit %d", got, err, lim.Max)
	}
}
