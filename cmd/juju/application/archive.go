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

	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/output"
)

// maxCharmFileSize is the largest file put in a charm archive; bigger ones are left out.
const maxCharmFileSize = 10 << 20

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
	archive, skipped, err := zipCharm(path)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range skipped {
		streams.Warningf("not uploading %q: larger than 10 MiB", s)
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
// .git directories, the top-level build/ directory, files over 10 MiB (listed in skipped) and
// anything that is not a regular file or directory. Symbolic links to files are archived as
// the file they point to, keeping its mode: hooks are often links to one script, and a
// dispatch charm's hooks/install -> ../dispatch becomes a copy of dispatch, which runs the
// same (the agent runs dispatch itself when the charm has one). Archives made by charmcraft
// keep their links; those are uploaded as they are and unpacked as links.
func zipCharm(dir string) (archive []byte, skipped []string, err error) {
	root := dir
	var buf bytes.Buffer
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
		info, err := os.Stat(path) // follows links
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		if info.Size() > maxCharmFileSize {
			skipped = append(skipped, rel)
			return nil
		}
		return addFile(zw, path, rel, info)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("archiving charm %q: %w", dir, err)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archiving charm %q: %w", dir, err)
	}
	return buf.Bytes(), skipped, nil
}

func addFile(zw *zip.Writer, path, name string, info fs.FileInfo) error {
	hdr, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	hdr.Name = name
	hdr.Method = zip.Deflate
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
