package agent

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jujuclone/juju/core/charm"
)

// unpackCharm writes a charm archive into dir with core/charm's checks: no entry outside dir
// (names, absolute paths, symbolic links), size and entry limits counted on the real bytes,
// exec bits kept, charmcraft's hooks/<name> -> ../dispatch links recreated as links.
func unpackCharm(archive []byte, dir string) error {
	return charm.Unpack(bytes.NewReader(archive), int64(len(archive)), dir, charm.DefaultLimits)
}

// installCharm puts a deployed unit's charm in dir: unpacked beside it as root (dir.next, in
// the unit's directory, which only root may write), given to the machine's uid when it has one
// (its hooks write there: ops keeps .unit-state.db in the charm directory), then renamed into
// place. Whatever an earlier, interrupted deploy left is removed first, never written through.
func installCharm(archive []byte, dir string, c Conf) error {
	next := dir + ".next"
	if err := errors.Join(os.RemoveAll(next), os.RemoveAll(dir)); err != nil {
		return fmt.Errorf("clearing room for the charm: %w", err)
	}
	if err := unpackCharm(archive, next); err != nil {
		_ = os.RemoveAll(next)
		return err
	}
	if c.isolated() {
		if err := chownTree(next, c.UID, c.GID); err != nil {
			_ = os.RemoveAll(next)
			return fmt.Errorf("giving the charm to the machine's uid: %w", err)
		}
	}
	if err := os.Rename(next, dir); err != nil {
		_ = os.RemoveAll(next)
		return fmt.Errorf("putting the charm in place: %w", err)
	}
	return nil
}

// chownTree gives a tree root just unpacked to uid:gid, deepest entries first and the top
// last: until a directory is the uid's, nothing in it can be changed by the uid, so no link it
// plants can turn a chown to something outside the tree. Links are changed, not followed.
func chownTree(dir string, uid, gid int) error {
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}); err != nil {
		return err
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Lchown(paths[i], uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// treeOwner is the uid and gid that own dir when that is not root (the machine's, when its
// charm code runs as its own uid), else ok is false.
func treeOwner(dir string) (uid, gid int, ok bool) {
	fi, err := os.Lstat(dir)
	if err != nil || os.Geteuid() != 0 {
		return 0, 0, false
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix || st.Uid == 0 {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// replaceCharmDir puts a new charm in place of the one in dir (juju refresh). It unpacks the
// archive beside dir, so a bad archive leaves the unit's charm untouched; carries over what
// the charm wrote at run time (every file of dir that oldArchive, the charm in place, does
// not hold and the new charm does not replace: ops keeps its .unit-state.db there, shell
// charms their notes), as hard links so nothing is copied and dir stays whole until the
// swap; then swaps the two directories by rename, so a hook never sees half of each. A crash
// between the two renames leaves dir missing and dir.old holding the old charm; the unit's
// record still names the old charm then, so its agent upgrades again, and this swap starts
// by undoing that. A charm directory owned by a machine's uid (see installCharm) is replaced
// by one owned by it too, and the carrying over is done with that uid's rights alone: the
// directory is the uid's to fill with links, which root must not follow.
func replaceCharmDir(archive, oldArchive []byte, dir string) error {
	next, old := dir+".next", dir+".old"
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(old); err == nil {
			if err := os.Rename(old, dir); err != nil {
				return fmt.Errorf("restoring the charm directory: %w", err)
			}
		}
	}
	if err := errors.Join(os.RemoveAll(next), os.RemoveAll(old)); err != nil {
		return fmt.Errorf("clearing room for the new charm: %w", err)
	}
	charmFiles, err := archiveEntries(oldArchive)
	if err != nil {
		return fmt.Errorf("reading the charm in place: %w", err)
	}
	if err := unpackCharm(archive, next); err != nil {
		_ = os.RemoveAll(next)
		return fmt.Errorf("unpacking the new charm: %w", err)
	}
	carry := func() error { return carryRuntimeFiles(dir, next, charmFiles) }
	if uid, gid, owned := treeOwner(dir); owned {
		if err := chownTree(next, uid, gid); err != nil {
			_ = os.RemoveAll(next)
			return fmt.Errorf("giving the new charm to uid %d: %w", uid, err)
		}
		carry = func() error {
			return asUser(uid, gid, func() error { return carryRuntimeFiles(dir, next, charmFiles) })
		}
	}
	if err := carry(); err != nil {
		_ = os.RemoveAll(next)
		return fmt.Errorf("keeping the charm's own files: %w", err)
	}
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(next)
		return fmt.Errorf("moving the old charm aside: %w", err)
	}
	if err := os.Rename(next, dir); err != nil {
		_ = os.Rename(old, dir)
		return fmt.Errorf("putting the new charm in place: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("removing the old charm: %w", err)
	}
	return nil
}

// archiveEntries lists the paths a charm archive holds (slash-separated, cleaned).
func archiveEntries(archive []byte) (map[string]bool, error) {
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(zr.File))
	for _, f := range zr.File {
		out[path.Clean(strings.TrimPrefix(f.Name, "./"))] = true
	}
	return out, nil
}

// carryRuntimeFiles links into next every file (or symbolic link) of dir that is not one of
// the old charm's files and that next does not have.
func carryRuntimeFiles(dir, next string, charmFiles map[string]bool) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || d.IsDir() || charmFiles[filepath.ToSlash(rel)] {
			return err
		}
		target := filepath.Join(next, rel)
		if _, err := os.Lstat(target); err == nil {
			return nil // the new charm's file wins
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		if !d.Type().IsRegular() {
			return nil // sockets, pipes: nothing to keep
		}
		return os.Link(p, target)
	})
}
