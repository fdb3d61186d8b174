package charm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// UnitHooks are the hooks the unit agent runs that are not about relations.
var UnitHooks = []string{
	"install", "leader-elected", "leader-settings-changed", "config-changed", "start", "stop",
	"remove", "upgrade-charm", "update-status",
}

// relationHookSuffixes are the relation hooks of each endpoint, <endpoint>-relation-<suffix>,
// in the order the agent runs them over a relation's life.
var relationHookSuffixes = []string{"created", "joined", "changed", "departed", "broken"}

// otherJujuHooks are the rest of Juju 3.6's hook names: this agent never runs them (no
// series upgrades, metrics, secrets or leader-deposed here), but a charm that has them is
// fine, so CheckHooks neither warns about them nor checks them.
var otherJujuHooks = []string{
	"leader-deposed", "collect-metrics", "meter-status-changed", "pre-series-upgrade",
	"post-series-upgrade", "secret-changed", "secret-expired", "secret-remove", "secret-rotate",
}

// otherJujuHookSuffixes are per-storage and per-container hooks (<name>-storage-attached,
// <container>-pebble-ready, ...), named after storage and containers this Meta does not keep.
var otherJujuHookSuffixes = []string{
	"-storage-attached", "-storage-detaching", "-pebble-ready", "-pebble-custom-notice",
	"-pebble-check-failed", "-pebble-check-recovered",
}

// isOtherJujuHook reports whether Juju knows the hook name although this agent never runs it.
func isOtherJujuHook(name string) bool {
	if slices.Contains(otherJujuHooks, name) {
		return true
	}
	for _, s := range otherJujuHookSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return true
		}
	}
	return false
}

// IsKnownHook reports whether the unit agent ever runs a hook of this name for a charm with
// meta's endpoints (juju-info included).
func IsKnownHook(name string, meta *Meta) bool {
	if slices.Contains(UnitHooks, name) {
		return true
	}
	ep, suffix, ok := strings.Cut(name, "-relation-")
	if !ok || !slices.Contains(relationHookSuffixes, suffix) {
		return false
	}
	for _, e := range meta.Endpoints() {
		if e.Name == ep {
			return true
		}
	}
	return false
}

// CheckHooks checks the hooks/ directory of the charm directory dir before the charm is
// uploaded, so a hook that could never run is reported at deploy time rather than as a hook
// failure on every unit. A hook the agent runs must be a regular file, or a symbolic link to
// one inside the charm directory, executable, and start with an interpreter line ("#!") or be
// an ELF binary. Files whose names the agent never runs (helper scripts, typos) are warnings.
// Directories (helper libraries), dot files and hooks Juju knows but this agent never runs
// (pre-series-upgrade, secret-changed, ...) are left alone. In a dispatch charm hooks/<name>
// are usually symbolic links to ../dispatch: they pass when dispatch itself would.
func CheckHooks(dir string, meta *Meta) (warnings []string, err error) {
	hooksDir := filepath.Join(dir, "hooks")
	info, err := os.Lstat(hooksDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("charm %q: cannot read hooks: %w", meta.Name, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("charm %q: hooks is not a directory", meta.Name)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("charm %q: %w", meta.Name, err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("charm %q: %w", meta.Name, err)
	}
	entries, err := os.ReadDir(hooksDir)
	if err != nil {
		return nil, fmt.Errorf("charm %q: cannot read hooks: %w", meta.Name, err)
	}
	for _, e := range entries { // sorted by name: the first problem is always the same
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		if !IsKnownHook(name, meta) {
			if isOtherJujuHook(name) {
				continue
			}
			// A link to a directory is a helper library too.
			if st, err := os.Stat(filepath.Join(hooksDir, name)); err == nil && st.IsDir() {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("charm %q: hook %q is never run", meta.Name, name))
			continue
		}
		if err := checkHook(root, filepath.Join(hooksDir, name)); err != nil {
			return warnings, fmt.Errorf("charm %q: hook %q %w", meta.Name, name, err)
		}
	}
	return warnings, nil
}

// checkHook says what is wrong with one hook file, as the end of a sentence about it.
func checkHook(root, path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("cannot be read: %w", err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return errors.New("is a broken symbolic link")
		}
		if target, err = filepath.Abs(target); err != nil {
			return fmt.Errorf("cannot be read: %w", err)
		}
		if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return errors.New("links outside the charm directory")
		}
		if info, err = os.Stat(target); err != nil {
			return fmt.Errorf("cannot be read: %w", err)
		}
	}
	if !info.Mode().IsRegular() {
		return errors.New("is not a regular file")
	}
	if info.Mode().Perm()&0o111 == 0 {
		return errors.New("is not executable")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("cannot be read: %w", err)
	}
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) && !bytes.Equal(head, []byte("\x7fELF")) {
		return errors.New("has no interpreter line (#!)")
	}
	return nil
}
