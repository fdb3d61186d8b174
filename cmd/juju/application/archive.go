package application

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/output"
)

// readLocalCharm reads and checks the charm at path, a directory or a .charm archive, and
// returns the archive to upload; arg is the charm as the user gave it, verb the command
// ("deploy", "refresh") for the messages. Everything the controller will check is checked
// here first (metadata, dispatch's exec bit, the archive's safety and limits), so bad input
// fails before anything is sent. A directory's hooks are checked too; its archive is made by
// zipCharm. deploy and refresh share it, so a charm one accepts the other accepts.
func readLocalCharm(streams *output.Streams, arg, path, verb string) (*charm.Charm, []byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("no charm was found at %q", arg)
	}
	if !info.IsDir() {
		return readCharmArchive(arg, path, verb, info.Size())
	}
	ch, err := charm.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no charm was found at %q", arg)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("attempting to %s %q: %w", verb, arg, err)
	}
	// A hook that could never run is reported now rather than as a failure on every unit.
	hookWarnings, err := charm.CheckHooks(path, ch.Meta)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range hookWarnings {
		streams.Warningf("%s", w)
	}
	archive, err := zipCharm(path)
	if err != nil {
		return nil, nil, fmt.Errorf("attempting to %s %q: %w", verb, arg, err)
	}
	if len(archive) > charm.MaxArchiveSize {
		return nil, nil, fmt.Errorf("attempting to %s %q: charm archive of %d bytes is larger than the limit of %d bytes", verb, arg, len(archive), charm.MaxArchiveSize)
	}
	// The zip made here goes through the controller's checks too: find out now.
	if _, err := charm.ReadArchiveBytes(archive, charm.DefaultLimits); err != nil {
		return nil, nil, fmt.Errorf("attempting to %s %q: %w", verb, arg, err)
	}
	return ch, archive, nil
}

// readCharmArchive reads a .charm archive whole, to upload it as is, and checks it.
func readCharmArchive(arg, path, verb string, size int64) (*charm.Charm, []byte, error) {
	if size > charm.MaxArchiveSize {
		return nil, nil, fmt.Errorf("attempting to %s %q: charm archive of %d bytes is larger than the limit of %d bytes", verb, arg, size, charm.MaxArchiveSize)
	}
	archive, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("attempting to %s %q: %w", verb, arg, err)
	}
	ch, err := charm.ReadArchiveBytes(archive, charm.DefaultLimits)
	if err != nil {
		return nil, nil, fmt.Errorf("attempting to %s %q: %w", verb, arg, err)
	}
	return ch, archive, nil
}

// zipCharm archives the charm directory dir in memory, as UploadCharm wants it. It leaves out
// .git directories and the top-level build/ directory, nothing else: a file too big for the
// archive limits is an error, never silently dropped. Symbolic links must stay inside the
// charm (an absolute link or one that climbs out is refused, as Juju refuses it); a link to a
// file is archived as the file it points to, keeping its mode (hooks are often links to one
// script, and a dispatch charm's hooks/install -> ../dispatch becomes a copy of dispatch,
// which runs the same); a link to a directory is archived as a link. Archives made by
// charmcraft keep their links; those are uploaded as they are and unpacked as links.
func zipCharm(dir string) ([]byte, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	var total int64
	zw := zip.NewWriter(&buf)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || rel == "build" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := checkLink(root, path, rel)
			if err != nil {
				return err
			}
			if info, err := os.Stat(path); err == nil && info.IsDir() {
				return addLink(zw, rel, target)
			}
		}
		info, err := os.Stat(path) // follows links
		if err != nil {
			return fmt.Errorf("%q: %w", rel, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%q is not a regular file, directory or link", rel)
		}
		if info.Size() > charm.DefaultLimits.MaxFileSize {
			return fmt.Errorf("file %q is %d bytes, more than the limit of %d", rel, info.Size(), charm.DefaultLimits.MaxFileSize)
		}
		if total += info.Size(); total > charm.MaxArchiveSize {
			return fmt.Errorf("charm files add up to more than the archive limit of %d bytes", charm.MaxArchiveSize)
		}
		return addFile(zw, path, rel, info)
	})
	if err != nil {
		return nil, fmt.Errorf("archiving charm: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("archiving charm: %w", err)
	}
	return buf.Bytes(), nil
}

// checkLink returns the target of the link at path (rel inside the charm at root) when it
// stays inside the charm. A link is judged by what it says, not by where the user's disk
// happens to lead it, so that the charm unpacks the same anywhere.
func checkLink(root, path, rel string) (string, error) {
	target, err := os.Readlink(path)
	if err != nil {
		return "", fmt.Errorf("%q: %w", rel, err)
	}
	if filepath.IsAbs(target) {
		return "", fmt.Errorf("symlink %q is absolute: %q", rel, target)
	}
	resolved := filepath.Join(filepath.Dir(path), target)
	if r, err := filepath.Rel(root, resolved); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("symlink %q links out of charm: %q", rel, target)
	}
	return filepath.ToSlash(target), nil
}

// addLink stores a symbolic link entry: the target as content, the link bit in the mode.
func addLink(zw *zip.Writer, name, target string) error {
	hdr := &zip.FileHeader{Name: name, Method: zip.Store}
	hdr.SetMode(fs.ModeSymlink | 0o777)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, target)
	return err
}

// archiveTime is the time every file of a charm archive carries: the same charm directory
// always packs to the same archive, whoever packs it (deploy, refresh, a bundle), so a
// bundle can tell from the archive's sha256 whether an application's charm changed.
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func addFile(zw *zip.Writer, path, name string, info fs.FileInfo) error {
	hdr, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	hdr.Name = name
	hdr.Method = zip.Deflate
	hdr.Modified = archiveTime
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
