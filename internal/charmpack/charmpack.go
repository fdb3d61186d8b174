// Package charmpack packs a charm source tree the way `charmcraft pack` does for a
// charmcraft.yaml + src/charm.py charm, so that the tests and benchmarks can deploy real ops
// charms as `.charm` archives without charmcraft (which this machine cannot install): the
// metadata.yaml, config.yaml, actions.yaml and manifest.yaml that charmcraft generates, its
// dispatch script, src/, lib/, the ops framework under venv/, and hooks/ linked to dispatch.
//
// The archive is deterministic (sorted entries, fixed times), so packing twice gives the same
// bytes and a rebuilt charm is only different when its source is.
package charmpack

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/jujuclone/juju/internal/atomicfile"
)

// Dispatch is charmcraft's dispatch script: Juju runs it for every hook with JUJU_DISPATCH_PATH
// set to hooks/<name>; the fallback to $0 covers a Juju that runs the hooks/ links instead.
const Dispatch = "#!/bin/sh\n" +
	`JUJU_DISPATCH_PATH="${JUJU_DISPATCH_PATH:-$0}" PYTHONPATH=lib:venv /usr/bin/env python3 ./src/charm.py` + "\n"

// Version is what manifest.yaml names as the packer (charmcraft-version): this package, not
// charmcraft, so nobody mistakes our archives for charmcraft's.
const Version = "3.0.0+charmpack"

// stamp is every entry's modification time and manifest.yaml's charmcraft-started-at: fixed,
// so that the archive depends on the source only (the zip format cannot go before 1980).
var stamp = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// linkedHooks are the hooks charmcraft links to dispatch, for a Juju that does not know
// dispatch; a dispatch-aware Juju never runs them.
var linkedHooks = []string{"install", "start", "upgrade-charm"}

// metadataKeys are the charmcraft.yaml keys that belong in metadata.yaml, in charmcraft's sense;
// everything else (type, base, platforms, parts, config, actions, ...) is for the packer.
var metadataKeys = map[string]bool{
	"name": true, "display-name": true, "title": true, "summary": true, "description": true,
	"maintainers": true, "assumes": true, "charm-user": true, "containers": true, "devices": true,
	"extra-bindings": true, "peers": true, "provides": true, "requires": true, "resources": true,
	"storage": true, "subordinate": true, "terms": true, "docs": true, "issues": true,
	"source": true, "website": true, "min-juju-version": true,
}

// linksKeys maps charmcraft.yaml's links: to the metadata.yaml keys charmcraft writes for them.
var linksKeys = map[string]string{
	"documentation": "docs", "issues": "issues", "source": "source", "website": "website", "contact": "maintainers",
}

// topFiles are the files beside charmcraft.yaml that go into the charm as they are.
var topFiles = []string{"LICENSE", "README.md", "icon.svg", "version"}

// HostArch is this host's architecture as Juju and charmcraft name it.
func HostArch() string {
	switch runtime.GOARCH {
	case "ppc64le":
		return "ppc64el"
	default:
		// amd64, arm64, s390x and riscv64 are spelt the same by Go and Juju.
		return runtime.GOARCH
	}
}

// Name is the charm's name from its charmcraft.yaml (or, for a charm of the older layout,
// its metadata.yaml).
func Name(srcDir string) (string, error) {
	p, err := load(srcDir)
	if err != nil {
		return "", err
	}
	return p.name, nil
}

// Pack packs the charm in srcDir for this host's architecture into outFile, with the ops
// package found in opsDir (the directory holding ops/__init__.py) as venv/ops.
func Pack(srcDir, opsDir, outFile string) error {
	return PackFor(srcDir, opsDir, outFile, HostArch())
}

// PackFor is Pack for the given architecture (as Juju names it: amd64, arm64 ...): the
// platform of charmcraft.yaml that builds for it gives manifest.yaml's bases.
func PackFor(srcDir, opsDir, outFile, arch string) error {
	p, err := load(srcDir)
	if err != nil {
		return err
	}
	archive, err := p.archive(opsDir, arch)
	if err != nil {
		return fmt.Errorf("packing charm %q: %w", p.name, err)
	}
	if err := os.MkdirAll(filepath.Dir(outFile), 0o755); err != nil {
		return fmt.Errorf("packing charm %q: %w", p.name, err)
	}
	return atomicfile.Write(outFile, archive, 0o644)
}

// project is a charm source tree, read.
type project struct {
	dir  string
	name string
	// top is charmcraft.yaml's top-level mapping, nil for a charm without one.
	top *yaml.Node
}

func load(srcDir string) (*project, error) {
	p := &project{dir: srcDir}
	data, err := os.ReadFile(filepath.Join(srcDir, "charmcraft.yaml"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("reading charm source: %w", err)
	default:
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(srcDir, "charmcraft.yaml"), err)
		}
		if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: not a YAML mapping", filepath.Join(srcDir, "charmcraft.yaml"))
		}
		p.top = doc.Content[0]
		if t := p.scalar("type"); t != "charm" {
			return nil, fmt.Errorf("%s: type is %q, want charm", filepath.Join(srcDir, "charmcraft.yaml"), t)
		}
		p.name = p.scalar("name")
	}
	if p.name == "" {
		// The older layout: metadata.yaml beside charmcraft.yaml holds the name.
		meta, err := os.ReadFile(filepath.Join(srcDir, "metadata.yaml"))
		if err != nil {
			return nil, fmt.Errorf("charm source %s: no name in charmcraft.yaml and no metadata.yaml", srcDir)
		}
		var m struct {
			Name string `yaml:"name"`
		}
		if err := yaml.Unmarshal(meta, &m); err != nil || m.Name == "" {
			return nil, fmt.Errorf("charm source %s: metadata.yaml has no name", srcDir)
		}
		p.name = m.Name
	}
	if _, err := os.Stat(filepath.Join(srcDir, "src", "charm.py")); err != nil {
		return nil, fmt.Errorf("charm source %s: no src/charm.py", srcDir)
	}
	return p, nil
}

// get is the value of a top-level key of charmcraft.yaml, nil when absent.
func (p *project) get(key string) *yaml.Node {
	if p.top == nil {
		return nil
	}
	for i := 0; i+1 < len(p.top.Content); i += 2 {
		if p.top.Content[i].Value == key {
			return p.top.Content[i+1]
		}
	}
	return nil
}

func (p *project) scalar(key string) string {
	if n := p.get(key); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// entry is one file of the archive.
type entry struct {
	name    string
	mode    fs.FileMode
	data    []byte
	symlink bool
}

func (p *project) archive(opsDir, arch string) ([]byte, error) {
	files := map[string]entry{}
	add := func(e entry) error {
		if _, dup := files[e.name]; dup {
			return fmt.Errorf("%s is in the charm twice", e.name)
		}
		files[e.name] = e
		return nil
	}

	generated, err := p.generated(arch)
	if err != nil {
		return nil, err
	}
	for name, data := range generated {
		if err := add(entry{name: name, mode: 0o644, data: data}); err != nil {
			return nil, err
		}
	}
	if err := add(entry{name: "dispatch", mode: 0o755, data: []byte(Dispatch)}); err != nil {
		return nil, err
	}
	for _, h := range linkedHooks {
		if err := add(entry{name: "hooks/" + h, mode: 0o777, data: []byte("../dispatch"), symlink: true}); err != nil {
			return nil, err
		}
	}
	for _, f := range topFiles {
		data, err := os.ReadFile(filepath.Join(p.dir, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := add(entry{name: f, mode: 0o644, data: data}); err != nil {
			return nil, err
		}
	}
	if err := addTree(filepath.Join(p.dir, "src"), "src", add); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(p.dir, "lib")); err == nil {
		if err := addTree(filepath.Join(p.dir, "lib"), "lib", add); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(opsDir, "__init__.py")); err != nil {
		return nil, fmt.Errorf("ops directory %s has no __init__.py", opsDir)
	}
	if err := addTree(opsDir, "venv/ops", add); err != nil {
		return nil, err
	}
	// The entry point must run whatever mode the source had (dispatch runs it by path).
	if e, ok := files["src/charm.py"]; ok {
		e.mode = 0o755
		files["src/charm.py"] = e
	}
	return writeZip(files)
}

// addTree adds every regular file under dir as prefix/<relative path>, skipping Python's
// caches; symbolic links are followed (charmcraft's charm plugin copies what they point to).
func addTree(dir, prefix string, add func(entry) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".pyc") {
			return nil
		}
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if info.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		return add(entry{name: path.Join(prefix, filepath.ToSlash(rel)), mode: mode, data: data})
	})
}

// writeZip writes the entries sorted by name, each with the fixed time; symbolic links carry
// the Unix link mode in their external attributes, as charmcraft's archives do.
func writeZip(files map[string]entry) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		e := files[n]
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, Modified: stamp}
		if e.symlink {
			h.Method = zip.Store
			h.SetMode(fs.ModeSymlink | e.mode)
		} else {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
