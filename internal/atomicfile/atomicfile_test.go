package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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

func TestReadGivesWhatWasWritten(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 70_000} {
		path := filepath.Join(dir, "f")
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		if err := Write(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path)
		if err != nil || string(got) != string(data) {
			t.Fatalf("size %d: got %d bytes, %v", size, len(got), err)
		}
	}
	// /proc files say they are empty: Read must read them to their end all the same.
	if got, err := Read("/proc/self/status"); err != nil || len(got) < 100 {
		t.Fatalf("/proc/self/status: %d bytes, %v", len(got), err)
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestWriteKeepsPermBitsTheUmaskDrops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if err := Write(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
