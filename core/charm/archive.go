package charm

import (
	"archive/zip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Limits bound what a charm archive may unpack to, so that a zip bomb or an archive of
// millions of tiny files stops early instead of filling the disk. A zero field takes its
// value from DefaultLimits.
type Limits struct {
	MaxSize     int64 // total bytes once unpacked
	MaxFileSize int64 // bytes of one entry once unpacked
	MaxEntries  int   // entries, directories included
}

// DefaultLimits are generous for real charms: the biggest charms on Charmhub (with their
// Python venvs) unpack to a few hundred MiB and tens of thousands of files.
var DefaultLimits = Limits{MaxSize: 1 << 30, MaxFileSize: 1 << 30, MaxEntries: 100_000}

func (l Limits) orDefault() Limits {
	if l.MaxSize <= 0 {
		l.MaxSize = DefaultLimits.MaxSize
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultLimits.MaxFileSize
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultLimits.MaxEntries
	}
	return l
}

// MaxArchiveSize is the largest .charm archive a client uploads and a controller stores.
const MaxArchiveSize = 256 << 20

// maxSymlinkTarget bounds a symbolic link entry's content (its target).
const maxSymlinkTarget = 4096

// archiveError is the one form every archive problem takes.
func archiveError(format string, args ...any) error {
	return fmt.Errorf("invalid charm archive: "+format, args...)
}

// entry is one checked archive entry.
type entry struct {
	f    *zip.File
	name string // cleaned, slash-separated, relative to the charm root
	mode fs.FileMode
}

func (e *entry) isDir() bool     { return e.mode.IsDir() }
func (e *entry) isSymlink() bool { return e.mode&fs.ModeSymlink != 0 }

// entryMode is the entry's mode as the charm should have it on disk: the zip's Unix mode when
// it was written with one (charmcraft does; exec bits matter for hooks and dispatch), else
// 0644 for files and 0755 for directories.
func entryMode(f *zip.File) fs.FileMode {
	const creatorUnix, creatorMacOSX = 3, 19
	isDir := strings.HasSuffix(f.Name, "/")
	creator := f.CreatorVersion >> 8
	if (creator == creatorUnix || creator == creatorMacOSX) && f.ExternalAttrs>>16 != 0 {
		m := f.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			return fs.ModeSymlink | 0o777
		case m.IsDir() || isDir:
			return fs.ModeDir | 0o755
		case m.IsRegular():
			return m.Perm()
		default:
			return m // a device, fifo or socket: refused by the caller
		}
	}
	if isDir || f.Mode().IsDir() {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// cleanName checks one entry name and returns it cleaned; "" means the root itself.
func cleanName(name string) (string, error) {
	if strings.ContainsAny(name, "\\\x00") {
		return "", archiveError("entry %q has a backslash or NUL in its name", name)
	}
	if strings.HasPrefix(name, "/") || (len(name) >= 2 && name[1] == ':') {
		return "", archiveError("entry %q has an absolute path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", archiveError("entry %q escapes the charm directory", name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// insideRoot reports whether the slash path p, relative to the charm root, stays in it.
func insideRoot(p string) bool {
	c := path.Clean(p)
	return c != ".." && !strings.HasPrefix(c, "../") && !path.IsAbs(c)
}

// checkEntries checks everything about an archive that needs no decompression: entry count,
// names, kinds, declared sizes, and that no entry escapes the charm directory, through its
// name or through a symbolic link.
func checkEntries(zr *zip.Reader, limits Limits) ([]*entry, error) {
	if len(zr.File) > limits.MaxEntries {
		return nil, archiveError("%d entries, more than the limit of %d", len(zr.File), limits.MaxEntries)
	}
	var entries []*entry
	byName := map[string]*entry{}
	var declared uint64
	for _, f := range zr.File {
		name, err := cleanName(f.Name)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue
		}
		e := &entry{f: f, name: name, mode: entryMode(f)}
		if !e.isDir() && !e.isSymlink() && !e.mode.IsRegular() {
			return nil, archiveError("entry %q is not a file, directory or symbolic link", f.Name)
		}
		if prev, ok := byName[name]; ok {
			if prev.isDir() && e.isDir() {
				continue
			}
			return nil, archiveError("entry %q appears twice", f.Name)
		}
		// The declared size is checked here so an honest bomb is refused without reading it;
		// a lying one is caught while reading (the zip reader refuses more bytes than declared,
		// and limitedReader counts what really comes out).
		if f.UncompressedSize64 > uint64(limits.MaxFileSize) {
			return nil, archiveError("entry %q is %d bytes, more than the limit of %d", f.Name, f.UncompressedSize64, limits.MaxFileSize)
		}
		declared += f.UncompressedSize64
		if declared > uint64(limits.MaxSize) {
			return nil, archiveError("unpacks to more than the limit of %d bytes", limits.MaxSize)
		}
		byName[name] = e
		entries = append(entries, e)
	}
	for _, e := range entries {
		// Nothing may be written through a link: a link to "." would let a later link's
		// relative target climb out of the directory the check below believed it was in.
		for dir := path.Dir(e.name); dir != "."; dir = path.Dir(dir) {
			if p, ok := byName[dir]; ok && p.isSymlink() {
				return nil, archiveError("entry %q is inside symbolic link %q", e.f.Name, p.f.Name)
			}
		}
		if e.isSymlink() {
			target, err := readSymlinkTarget(e.f)
			if err != nil {
				return nil, err
			}
			if path.IsAbs(target) || !insideRoot(path.Join(path.Dir(e.name), target)) {
				return nil, archiveError("symbolic link %q points outside the charm directory (to %q)", e.f.Name, target)
			}
		}
	}
	return entries, nil
}

func readSymlinkTarget(f *zip.File) (string, error) {
	if f.UncompressedSize64 > maxSymlinkTarget {
		return "", archiveError("symbolic link %q has a target of %d bytes", f.Name, f.UncompressedSize64)
	}
	data, err := readEntry(f, maxSymlinkTarget)
	if err != nil {
		return "", err
	}
	target := string(data)
	if target == "" || strings.ContainsRune(target, 0) {
		return "", archiveError("symbolic link %q has an invalid target", f.Name)
	}
	return target, nil
}

// readEntry reads a whole entry of at most max bytes.
func readEntry(f *zip.File, max int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, archiveError("entry %q: %v", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, archiveError("entry %q: %v", f.Name, err)
	}
	if int64(len(data)) > max {
		return nil, archiveError("entry %q is more than %d bytes", f.Name, max)
	}
	return data, nil
}

// budget counts the bytes really decompressed, across entries.
type budget struct {
	limits Limits
	total  int64
}

// copyBuffers are copyEntry's buffers: the agent host unpacks a charm per unit it deploys, and a
// fresh 32 KiB buffer per file was allocated and cleared each time.
var copyBuffers = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// copyEntry copies e's content to w, stopping as soon as a limit is passed.
func (b *budget) copyEntry(w io.Writer, e *entry) error {
	rc, err := e.f.Open()
	if err != nil {
		return archiveError("entry %q: %v", e.f.Name, err)
	}
	defer rc.Close()
	bp := copyBuffers.Get().(*[32 << 10]byte)
	defer copyBuffers.Put(bp)
	buf := bp[:]
	var n int64
	for {
		k, err := rc.Read(buf)
		if k > 0 {
			n += int64(k)
			b.total += int64(k)
			if n > b.limits.MaxFileSize {
				return archiveError("entry %q unpacks to more than the limit of %d bytes", e.f.Name, b.limits.MaxFileSize)
			}
			if b.total > b.limits.MaxSize {
				return archiveError("unpacks to more than the limit of %d bytes", b.limits.MaxSize)
			}
			if _, werr := w.Write(buf[:k]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return archiveError("entry %q: %v", e.f.Name, err)
		}
	}
}

func openArchive(r io.ReaderAt, size int64) (*zip.Reader, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, archiveError("%v", err)
	}
	return zr, nil
}

// ValidateArchive checks a charm archive without unpacking it: every entry is read (and its
// checksum checked) under limits, names and symbolic links stay inside the charm directory.
// It does not read the metadata: ReadArchive does both.
func ValidateArchive(r io.ReaderAt, size int64, limits Limits) error {
	zr, err := openArchive(r, size)
	if err != nil {
		return err
	}
	_, err = validate(zr, limits.orDefault())
	return err
}

func validate(zr *zip.Reader, limits Limits) ([]*entry, error) {
	entries, err := checkEntries(zr, limits)
	if err != nil {
		return nil, err
	}
	b := &budget{limits: limits}
	for _, e := range entries {
		if e.isDir() {
			continue
		}
		h := crc32.NewIEEE() // something to write to; the zip reader checks the CRC itself
		if err := b.copyEntry(h, e); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// Unpack writes the charm archive into dir (created if missing), after checking every entry
// name and symbolic link, and stops as soon as a limit is passed. Files keep the exec bits of
// the zip's modes; symbolic links (charmcraft stores hooks/install -> ../dispatch as links)
// are recreated as links. On error dir may hold part of the charm: the caller removes it.
func Unpack(archive io.ReaderAt, size int64, dir string, limits Limits) error {
	limits = limits.orDefault()
	zr, err := openArchive(archive, size)
	if err != nil {
		return err
	}
	entries, err := checkEntries(zr, limits)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot unpack charm: %w", err)
	}
	b := &budget{limits: limits}
	// The directories made so far: an agent host unpacks a charm for every unit it deploys, so
	// each file costs what it must (open, write, chmod, close) and no more.
	made := map[string]bool{dir: true}
	mkdirAll := func(d string) error {
		if made[d] {
			return nil
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot unpack charm: %w", err)
		}
		made[d] = true
		return nil
	}
	for _, e := range entries {
		target := filepath.Join(dir, filepath.FromSlash(e.name))
		if e.isDir() {
			if err := mkdirAll(target); err != nil {
				return err
			}
			continue
		}
		if err := mkdirAll(filepath.Dir(target)); err != nil {
			return err
		}
		create := func() error { return writeFile(b, e, target) }
		if e.isSymlink() {
			linkTarget, err := readSymlinkTarget(e.f)
			if err != nil {
				return err
			}
			create = func() error {
				if err := os.Symlink(filepath.FromSlash(linkTarget), target); err != nil {
					return fmt.Errorf("cannot unpack charm: %w", err)
				}
				return nil
			}
		}
		err := create()
		if errors.Is(err, fs.ErrExist) {
			// Whatever is there (a link from an earlier unpack) is replaced, never written
			// through: the file is created exclusively.
			if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("cannot unpack charm: %w", err)
			}
			err = create()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFile creates target (exclusively: an error that is fs.ErrExist when something is there)
// with e's content and mode. The file is opened by the system call, not os.OpenFile, which
// would try it on the runtime's poller: five system calls more for every file of every unit.
func writeFile(b *budget, e *entry, target string) error {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(target, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC, uint32(e.mode.Perm()))
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot unpack charm: %w", &fs.PathError{Op: "open", Path: target, Err: err})
	}
	out := os.NewFile(uintptr(fd), target)
	if err := b.copyEntry(out, e); err != nil {
		out.Close()
		return err
	}
	// The umask may have dropped bits the charm relies on (group/other exec).
	if err := errors.Join(out.Chmod(e.mode.Perm()), out.Close()); err != nil {
		return fmt.Errorf("cannot unpack charm: %w", err)
	}
	return nil
}

// retryEINTR makes a call again while a signal interrupts it.
func retryEINTR(call func() error) error {
	for {
		if err := call(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
