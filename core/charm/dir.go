package charm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// notFoundError reads well on its own while letting callers test for
// fs.ErrNotExist.
type notFoundError struct{ path string }

func (e *notFoundError) Error() string { return fmt.Sprintf("charm directory %q not found", e.path) }
func (e *notFoundError) Unwrap() error { return fs.ErrNotExist }

// ReadDir reads the metadata of the charm in directory path (see Read): metadata.yaml, and
// the bases from manifest.yaml when it has any, or charmcraft.yaml. A missing directory gives
// an error wrapping fs.ErrNotExist.
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

	c, err := readDirCharm(path)
	if err != nil {
		return nil, err
	}
	return c.Meta, nil
}
