package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/charm"
)

// Charm resources on the unit (resource-get). As in Juju, a unit keeps its copy of a file
// resource at <agent dir>/resources/<name>/<filename>: downloaded from the controller at the
// application's current revision when the unit has none or an older one (compared by
// fingerprint, so an unchanged file is not sent again), and the controller records which
// revision the unit has. The copy is root's, readable by the machine's uid when charm code
// runs as it (the directories root:<gid> 0750, the file 0640): the charm reads it, and cannot
// change what the next resource-get compares.

const resourcesDirName = "resources"

// resourceLocks serialises fetches of one resource path (an action may run beside a hook).
var resourceLocks sync.Map

func (a *unitAgent) resourcesDir() string { return filepath.Join(a.dir, resourcesDirName) }

// resourceGetter is the controller's side of resource-get (client.Client).
type resourceGetter interface {
	GetResource(ctx context.Context, model, unit, name, fingerprint string) (*pb.AgentResourceResponse, error)
}

// fetchResource makes the unit's copy of resource name the application's current revision
// and returns its path.
func (a *unitAgent) fetchResource(ctx context.Context, name string) (string, error) {
	return a.fetchResourceFrom(ctx, a.c, name)
}

func (a *unitAgent) fetchResourceFrom(ctx context.Context, c resourceGetter, name string) (string, error) {
	if !safePathElement(name) {
		return "", fmt.Errorf("resource %q not found", name)
	}
	dir := filepath.Join(a.resourcesDir(), name)
	mu, _ := resourceLocks.LoadOrStore(dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	// The copy's name is the charm's filename; the controller's answer says it too, and wins
	// when they differ (the charm was refreshed and this unit not yet).
	local := ""
	if meta, err := charm.ReadDir(a.charmDir()); err == nil {
		if res, ok := meta.Resources[name]; ok && safePathElement(res.Filename) {
			local = filepath.Join(dir, res.Filename)
		}
	}
	have := ""
	if local != "" {
		have = fileFingerprint(local)
	}
	resp, err := c.GetResource(ctx, a.conf.Model, a.conf.ID, name, have)
	if err != nil {
		return "", err
	}
	res := resp.GetResource()
	filename := res.GetPath()
	if !safePathElement(filename) {
		return "", fmt.Errorf("resource %q has an invalid filename %q", name, filename)
	}
	target := filepath.Join(dir, filename)
	if len(resp.GetContent()) == 0 && have != "" && have == res.GetFingerprint() && target == local {
		return absPath(target), nil
	}
	content := resp.GetContent()
	if int64(len(content)) != res.GetSize() || charm.ResourceFingerprint(content) != res.GetFingerprint() {
		return "", fmt.Errorf("resource %q: the content received does not match its fingerprint", name)
	}
	if err := a.writeResource(dir, target, content); err != nil {
		return "", fmt.Errorf("resource %q: %w", name, err)
	}
	a.log.write("INFO", "juju.worker.uniter.resources", fmt.Sprintf("fetched resource %q revision %d (%d bytes)", name, res.GetRevision(), len(content)))
	return absPath(target), nil
}

// writeResource puts content at target, replacing what is there in one rename; the
// directories and the file are made readable by the machine's uid when it has one.
func (a *unitAgent) writeResource(dir, target string, content []byte) error {
	for _, d := range []string{a.resourcesDir(), dir} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("making %s: %w", d, err)
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
		if a.conf.isolated() {
			if err := errors.Join(os.Lchown(d, 0, a.conf.GID), os.Chmod(d, 0o750)); err != nil {
				return fmt.Errorf("opening %s to the machine's uid: %w", d, err)
			}
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	defer os.Remove(tmp.Name())
	mode := os.FileMode(0o644)
	if a.conf.isolated() {
		mode = 0o640
		if err := tmp.Chown(0, a.conf.GID); err != nil {
			tmp.Close()
			return fmt.Errorf("writing %s: %w", target, err)
		}
	}
	_, err = tmp.Write(content)
	err = errors.Join(err, tmp.Chmod(mode), tmp.Sync(), tmp.Close())
	if err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	return nil
}

// fileFingerprint is the sha384 of a regular file, "" when there is none.
func fileFingerprint(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sum, _, err := charm.ReaderFingerprint(f)
	if err != nil {
		return ""
	}
	return sum
}

// safePathElement: s names one entry of a directory, never the directory or its parent.
func safePathElement(s string) bool {
	return s != "" && s != "." && s != ".." && filepath.Base(s) == s && !strings.ContainsRune(s, 0)
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
