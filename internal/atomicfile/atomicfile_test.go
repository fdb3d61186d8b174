package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write and WriteUnsynced replace the file whole, with its mode, and leave nothing beside it.
func TestWriteReplacesWithMode(t *testing.T) {
	for _, write := range []func(string, []byte, os.FileMode) error{Write, WriteUnsynced} {
		testWriteReplacesWithMode(t, write)
	}
}

func testWriteReplacesWithMode(t *testing.T, write func(string, []byte, os.FileMode) error) {
	path := filepath.Join(t.TempDir(), "f")
	for _, content := range []string{"one", "two"} {
		if err := write(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("got %q %v", b, err)
		}
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	if err := write(filepath.Join(t.TempDir(), "missing", "f"), nil, 0o600); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}
