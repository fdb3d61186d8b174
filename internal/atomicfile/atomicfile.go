// Package atomicfile writes files so that readers see the old content or the new one, never a
// part: the client store, agent configurations, certificates and bootstrap.json all use it. It
// reads them back too.
//
// It calls the system directly rather than through os.File: opening a regular file with os
// also tries to register it with the runtime's poller (four fcntl and an epoll_ctl that
// fails), and Rename stats the target first. The agent host writes and reads several such
// files per unit it deploys, on machines where a system call is dear (issue 16).
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Write writes data to a temporary file next to path, with perm, syncs it and renames it over
// path.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// WriteUnsynced is Write without the sync, for a file whose content is derived from elsewhere
// and written again after a crash: readers still see the old content or the new one, but a
// crash may leave the old (or, on some file systems, an empty file) in place of the new.
func WriteUnsynced(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

// Sync flushes path to disk: what WriteUnsynced wrote becomes durable.
func Sync(path string) error {
	fd, err := open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	defer syscall.Close(fd)
	if err := retry(func() error { return syscall.Fsync(fd) }); err != nil {
		return fmt.Errorf("syncing %s: %w", path, &fs.PathError{Op: "sync", Path: path, Err: err})
	}
	return nil
}

// Open opens path as os.OpenFile does (close-on-exec, its error an *fs.PathError) but without
// trying it on the runtime's poller, which a regular file never needs: for the process's other
// small files (log files, lock files, claims).
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := open(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Read returns the content of path (errors.Is fs.ErrNotExist when there is none), as
// os.ReadFile does.
func Read(path string) ([]byte, error) {
	fd, err := open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	size := 512
	if err := syscall.Fstat(fd, &st); err == nil && st.Size > 0 && st.Size < 1<<30 {
		size = int(st.Size) + 1 // one more, so that the end is seen without growing
	}
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		var n int
		err := retry(func() (err error) { n, err = syscall.Read(fd, data[len(data):cap(data)]); return err })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return data, nil
		}
		data = data[:len(data)+n]
	}
}

func write(path string, data []byte, perm os.FileMode, sync bool) error {
	dir, base := filepath.Split(path)
	var (
		fd  int
		tmp string
		err error
	)
	for range 100 {
		tmp = filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		fd, err = open(tmp, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = syscall.Unlink(tmp)
		}
	}()
	fail := func(op string, err error) error {
		syscall.Close(fd)
		return fmt.Errorf("writing %s: %w", path, &fs.PathError{Op: op, Path: tmp, Err: err})
	}
	// The umask may have taken bits of perm away.
	if err := retry(func() error { return syscall.Fchmod(fd, uint32(perm.Perm())) }); err != nil {
		return fail("chmod", err)
	}
	for rest := data; len(rest) > 0; {
		var n int
		if err := retry(func() (err error) { n, err = syscall.Write(fd, rest); return err }); err != nil {
			return fail("write", err)
		}
		rest = rest[n:]
	}
	if sync {
		if err := retry(func() error { return syscall.Fsync(fd) }); err != nil {
			return fail("sync", err)
		}
	}
	if err := syscall.Close(fd); err != nil {
		return fmt.Errorf("writing %s: %w", path, &fs.PathError{Op: "close", Path: tmp, Err: err})
	}
	if err := syscall.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err})
	}
	done = true
	return nil
}

// open opens path close-on-exec, its error an *fs.PathError as os gives.
func open(path string, flag int, perm os.FileMode) (int, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// retry makes a call again while a signal interrupts it.
func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
