// Package fdlimit keeps a process within its open-file limit: it raises the soft limit to the
// hard one at start, counts the descriptors in use, and says, before the process would run out,
// that it should take on no more work (a unit, an agent). Running out is what killed a
// controller at 9,988 units (issue 16): accept failing in a loop, etcd unable to save a
// snapshot. Refusing a new unit with a clear error is cheap; crashing is not.
package fdlimit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// DefaultReserve is how many descriptors a process keeps free for the work it already has:
// hooks' pipes, hook-tool and API connections, etcd's files and snapshots.
const DefaultReserve = 256

// ErrTooManyOpenFiles is what Check's errors are (errors.Is).
var ErrTooManyOpenFiles = errors.New("too many open files")

// Raise lifts the soft RLIMIT_NOFILE to the hard limit and returns the new soft limit. Go's os
// package does so at start since Go 1.19 (and gives started processes the original back); Raise
// does not count on it, and returns the limit for the process to log.
func Raise() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("reading the open-file limit: %w", err)
	}
	if lim.Cur >= lim.Max {
		return lim.Cur, nil
	}
	want := lim.Max
	lim.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("raising the open-file limit to %d: %w", want, err)
	}
	return Limit()
}

// Limit is the soft RLIMIT_NOFILE: the number of descriptors the process may hold.
func Limit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("reading the open-file limit: %w", err)
	}
	return lim.Cur, nil
}

// InUse counts the process's open descriptors (the entries of /proc/self/fd, less the one
// the count itself opens).
// The directory is opened by the system call: os.Open would try it on the runtime's poller
// (five calls more, for a count taken each time an agent starts).
func InUse() (int, error) {
	fd, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("counting open files: %w", err)
	}
	d := os.NewFile(uintptr(fd), "/proc/self/fd")
	defer d.Close()
	n := 0
	for {
		names, err := d.Readdirnames(1024)
		n += len(names)
		if err != nil || len(names) == 0 {
			break
		}
	}
	return n - 1, nil
}

// Check returns a *LimitError (ErrTooManyOpenFiles) when fewer than reserve descriptors
// remain below the limit, naming both numbers. Where descriptors cannot be counted (no
// /proc), it says nothing: it is a guard, not a gate.
//
// A count well clear of the limit (by twice reserve) stands for recount: the agent host
// checks before every agent it starts, thousands a minute in a deploy, and a process does not
// open hundreds of descriptors in a tenth of a second.
func Check(reserve int) error {
	lastCount.Lock()
	defer lastCount.Unlock()
	if time.Since(lastCount.at) < recount && check(lastCount.inUse, lastCount.limit, 2*max(reserve, 0)) == nil {
		return nil
	}
	limit, err := Limit()
	if err != nil {
		return nil
	}
	inUse, err := InUse()
	if err != nil {
		return nil
	}
	lastCount.at, lastCount.inUse, lastCount.limit = time.Now(), inUse, limit
	return check(inUse, limit, reserve)
}

// recount is how long Check trusts its last count when that was well clear of the limit.
const recount = 100 * time.Millisecond

var lastCount struct {
	sync.Mutex
	at    time.Time
	inUse int
	limit uint64
}

func check(inUse int, limit uint64, reserve int) error {
	if limit > uint64(1<<62) { // RLIM_INFINITY: nothing to run out of
		return nil
	}
	if uint64(inUse)+uint64(max(reserve, 0)) < limit {
		return nil
	}
	return &LimitError{InUse: inUse, Limit: limit}
}

// LimitError is Check's refusal, with its numbers (for a process that passes it on, as the
// agent host to the controller); it is ErrTooManyOpenFiles.
type LimitError struct {
	InUse int
	Limit uint64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: %s in use of a limit of %s", ErrTooManyOpenFiles, group(uint64(e.InUse)), group(e.Limit))
}

func (e *LimitError) Is(target error) bool { return target == ErrTooManyOpenFiles }

// group writes n with thousands separators, as people read big counts: 9,800.
func group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
