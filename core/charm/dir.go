package charm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// notFoundError reads well on its own while letting callers test for
// fs.ErrNotExist.
type notFoundError struct{ path string }

func (e *notFoundError) Error() string { return fmt.Sprintf("charm directory %q not found", e.path) }
func (e *notFoundError) Unwrap() error { return fs.ErrNotExist }

// ReadDir reads the charm in directory path: metadata.yaml, and the bases
// from manifest.yaml when it has any. A missing directory gives an error
// wrapping fs.ErrNotExist.
func ReadDir(path string) (*Meta, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &notFoundError{path}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read charm directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%q is not a charm directory", path)
	}

	data, err := os.ReadFile(filepath.Join(path, "metadata.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		// Not wrapped: the directory exists, it just is not a charm.
		return nil, fmt.Errorf("charm directory %q has no metadata.yaml", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read metadata.yaml: %w", err)
	}
	m, series, err := parseMeta(data)
	if err != nil {
		return nil, err
	}

	data, err = os.ReadFile(filepath.Join(path, "manifest.yaml"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("cannot read manifest.yaml: %w", err)
	default:
		var manifest struct {
			Bases []rawBase `yaml:"bases"`
		}
		if err := yaml.Unmarshal(data, &manifest); err != nil {
			return nil, fmt.Errorf("invalid manifest.yaml: %v", err)
		}
		if len(manifest.Bases) > 0 {
			m.Bases = baseList(manifest.Bases)
		}
	}

	if err := m.finish(series); err != nil {
		return nil, err
	}
	return m, nil
}
