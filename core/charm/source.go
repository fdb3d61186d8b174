package charm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Charm is a charm read from a directory or a .charm archive: its parsed metadata, config
// and actions, and the normalized metadata.yaml, config.yaml, actions.yaml and manifest.yaml a
// controller stores (generated from charmcraft.yaml when that is the only source).
type Charm struct {
	Meta    *Meta // Meta.Bases are the charm's bases
	Config  *Config
	Actions *Actions
	// HasDispatch is true when the charm's root has a dispatch file: the unit agent then runs
	// it for every hook (with JUJU_DISPATCH_PATH=hooks/<name>) instead of hooks/<name>.
	HasDispatch bool

	metadata, config, actions, manifest []byte
}

// MetadataYAML is metadata.yaml as the charm has it, or as generated from charmcraft.yaml
// (with the bases written in, so ReadMeta of it alone gives them).
func (c *Charm) MetadataYAML() []byte { return c.metadata }

// ConfigYAML is config.yaml (or charmcraft.yaml's config:), nil when the charm has no options.
func (c *Charm) ConfigYAML() []byte { return c.config }

// ActionsYAML is actions.yaml (or charmcraft.yaml's actions:), nil when it has no actions.
func (c *Charm) ActionsYAML() []byte { return c.actions }

// ManifestYAML is manifest.yaml, or one generated from charmcraft.yaml's bases; nil when the
// charm has neither.
func (c *Charm) ManifestYAML() []byte { return c.manifest }

// maxMetaFile bounds each of the YAML files read, so a huge one cannot exhaust memory.
const maxMetaFile = 8 << 20

// charmFiles is the part of a charm source the reader needs, directory or archive.
type charmFiles interface {
	// read returns the content of the file name (slash path), ok false when it is missing.
	read(name string) (data []byte, ok bool, err error)
	// mode returns the file's mode, following symbolic links, ok false when missing.
	mode(name string) (fs.FileMode, bool, error)
}

type dirFiles struct{ root string }

func (d dirFiles) read(name string) ([]byte, bool, error) {
	f, err := os.Open(filepath.Join(d.root, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetaFile+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxMetaFile {
		return nil, false, fmt.Errorf("%s is larger than %d bytes", name, maxMetaFile)
	}
	return data, true, nil
}

func (d dirFiles) mode(name string) (fs.FileMode, bool, error) {
	info, err := os.Stat(filepath.Join(d.root, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return info.Mode(), true, nil
}

type zipFiles struct{ byName map[string]*entry }

func (z zipFiles) resolve(name string) (*entry, bool, error) {
	for range 8 { // links to links, a few levels deep
		e, ok := z.byName[name]
		if !ok {
			return nil, false, nil
		}
		if !e.isSymlink() {
			return e, true, nil
		}
		target, err := readSymlinkTarget(e.f)
		if err != nil {
			return nil, false, err
		}
		name = path.Clean(path.Join(path.Dir(name), target))
	}
	return nil, false, fmt.Errorf("%s: too many levels of symbolic links", name)
}

func (z zipFiles) read(name string) ([]byte, bool, error) {
	e, ok, err := z.resolve(name)
	if !ok || err != nil {
		return nil, false, err
	}
	if e.isDir() {
		return nil, false, fmt.Errorf("%s is a directory", name)
	}
	data, err := readEntry(e.f, maxMetaFile)
	return data, err == nil, err
}

func (z zipFiles) mode(name string) (fs.FileMode, bool, error) {
	e, ok, err := z.resolve(name)
	if !ok || err != nil {
		return 0, false, err
	}
	return e.mode, true, nil
}

// notCharmError says the directory or archive has neither metadata.yaml nor charmcraft.yaml.
var errNoMetadata = errors.New("has no metadata.yaml or charmcraft.yaml")

// Read reads the charm at path: a charm directory, or a .charm (zip) archive checked with
// DefaultLimits. A missing path gives an error wrapping fs.ErrNotExist.
func Read(path string) (*Charm, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &notFoundError{path}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read charm %q: %w", path, err)
	}
	if info.IsDir() {
		return readDirCharm(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read charm %q: %w", path, err)
	}
	defer f.Close()
	c, err := ReadArchive(f, info.Size(), DefaultLimits)
	if err != nil {
		return nil, fmt.Errorf("charm %q: %w", path, err)
	}
	return c, nil
}

func readDirCharm(dir string) (*Charm, error) {
	c, err := readCharm(dirFiles{dir})
	if errors.Is(err, errNoMetadata) {
		return nil, fmt.Errorf("charm directory %q %w", dir, err)
	}
	return c, err
}

// ReadArchive validates a .charm archive (ValidateArchive) and reads the charm in it. This is
// what a controller runs on an upload: it trusts nothing the client checked.
func ReadArchive(r io.ReaderAt, size int64, limits Limits) (*Charm, error) {
	zr, err := openArchive(r, size)
	if err != nil {
		return nil, err
	}
	entries, err := validate(zr, limits.orDefault())
	if err != nil {
		return nil, err
	}
	z := zipFiles{byName: map[string]*entry{}}
	for _, e := range entries {
		z.byName[e.name] = e
	}
	c, err := readCharm(z)
	if errors.Is(err, errNoMetadata) {
		return nil, archiveError("%v", err)
	}
	return c, err
}

// readCharm reads the metadata from metadata.yaml (with config.yaml, actions.yaml and the bases
// of manifest.yaml), or from charmcraft.yaml for what those lack: a packed charm has
// metadata.yaml, so it wins there, as in Juju.
func readCharm(files charmFiles) (*Charm, error) {
	read := func(name string) ([]byte, bool, error) {
		data, ok, err := files.read(name)
		if err != nil {
			return nil, false, fmt.Errorf("cannot read %s: %w", name, err)
		}
		return data, ok, nil
	}
	metaYAML, hasMeta, err := read("metadata.yaml")
	if err != nil {
		return nil, err
	}
	ccYAML, hasCC, err := read("charmcraft.yaml")
	if err != nil {
		return nil, err
	}
	if !hasMeta && !hasCC {
		return nil, errNoMetadata
	}
	var cc *charmcraft
	if hasCC {
		if cc, err = parseCharmcraft(ccYAML); err != nil {
			return nil, withName(ccYAML, err)
		}
	}
	c := &Charm{}
	if hasMeta {
		c.metadata = metaYAML
	} else {
		c.metadata = cc.metadata
	}
	m, series, err := parseMeta(c.metadata)
	if err != nil {
		return nil, withName(c.metadata, err)
	}
	named := func(err error) error { return fmt.Errorf("charm %q: %w", m.Name, err) }

	manifest, hasManifest, err := read("manifest.yaml")
	if err != nil {
		return nil, named(err)
	}
	if hasManifest {
		c.manifest = manifest
		var doc struct {
			Bases []rawBase `yaml:"bases"`
		}
		if err := yaml.Unmarshal(manifest, &doc); err != nil {
			return nil, named(fmt.Errorf("invalid manifest.yaml: %s", yamlErr(err)))
		}
		if len(doc.Bases) > 0 {
			m.Bases = baseList(doc.Bases)
		}
	}
	if cc != nil && len(m.Bases) == 0 && len(series) == 0 && len(cc.bases) > 0 {
		m.Bases = cc.bases
	}
	if c.manifest == nil && cc != nil && len(cc.bases) > 0 {
		c.manifest = manifestFor(cc)
	}
	if err := m.finish(series); err != nil {
		return nil, err
	}
	c.Meta = m

	if c.config, _, err = read("config.yaml"); err != nil {
		return nil, named(err)
	}
	if c.config == nil && cc != nil {
		c.config = cc.config
	}
	if c.Config, err = ParseConfig(c.config); err != nil {
		return nil, named(err)
	}
	if c.actions, _, err = read("actions.yaml"); err != nil {
		return nil, named(err)
	}
	if c.actions == nil && cc != nil {
		c.actions = cc.actions
	}
	if c.Actions, err = ParseActions(c.actions); err != nil {
		return nil, named(err)
	}

	mode, ok, err := files.mode("dispatch")
	if err != nil {
		return nil, named(fmt.Errorf("cannot read dispatch: %w", err))
	}
	if ok {
		c.HasDispatch = true
		if !mode.IsRegular() {
			return nil, named(errors.New("dispatch is not a regular file"))
		}
		if mode.Perm()&0o111 == 0 {
			return nil, named(errors.New("dispatch is not executable"))
		}
	}
	return c, nil
}

// withName prefixes err with the charm's name when the YAML gives one, so every error names
// the charm.
func withName(data []byte, err error) error {
	var n struct {
		Name string `yaml:"name"`
	}
	if yaml.Unmarshal(data, &n) == nil && n.Name != "" {
		return fmt.Errorf("charm %q: %w", n.Name, err)
	}
	return err
}

// manifestFor writes manifest.yaml's bases as charmcraft would when packing.
func manifestFor(cc *charmcraft) []byte {
	type mb struct {
		Name    string `yaml:"name"`
		Channel string `yaml:"channel"`
	}
	var doc struct {
		Bases []mb `yaml:"bases"`
	}
	for _, b := range cc.bases {
		doc.Bases = append(doc.Bases, mb{Name: b.OS, Channel: b.Channel.Track})
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil
	}
	return out
}

// ReadArchiveBytes is ReadArchive for an archive held in memory.
func ReadArchiveBytes(archive []byte, limits Limits) (*Charm, error) {
	return ReadArchive(bytes.NewReader(archive), int64(len(archive)), limits)
}
