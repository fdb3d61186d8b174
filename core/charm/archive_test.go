package charm

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var goodMeta = zEntry{name: "metadata.yaml", body: "name: good\n", mode: 0o644}

func TestUnpack(t *testing.T) {
	z := makeZip(t, goodMeta,
		zEntry{name: "dispatch", body: "#!/bin/sh\necho $JUJU_DISPATCH_PATH\n", mode: 0o755},
		zEntry{name: "hooks/", mode: fs.ModeDir | 0o755},
		zEntry{name: "hooks/install", body: "../dispatch", mode: fs.ModeSymlink | 0o777},
		zEntry{name: "src/charm.py", body: "#!/usr/bin/env python3\n", mode: 0o750},
		zEntry{name: "lib/plain.txt", body: "no mode recorded"},
		zEntry{name: "./venv/x.py", body: "x", mode: 0o644},
	)
	dir := filepath.Join(t.TempDir(), "charm")
	if err := Unpack(bytes.NewReader(z), int64(len(z)), dir, Limits{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{
		"dispatch": 0o755, "src/charm.py": 0o750, "lib/plain.txt": 0o644, "metadata.yaml": 0o644, "venv/x.py": 0o644,
	} {
		info, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || info.Mode() != want {
			t.Errorf("%s: %v, %v; want %v", name, info.Mode(), err, want)
		}
	}
	target, err := os.Readlink(filepath.Join(dir, "hooks", "install"))
	if err != nil || target != "../dispatch" {
		t.Errorf("hooks/install -> %q, %v", target, err)
	}
	// The unpacked charm reads, and its hook resolves to dispatch.
	c, err := Read(dir)
	if err != nil || !c.HasDispatch {
		t.Fatalf("Read = %v, %v", c, err)
	}
	if w, err := CheckHooks(dir, c.Meta); err != nil || len(w) > 0 {
		t.Errorf("CheckHooks = %v, %v", w, err)
	}
	if err := ValidateArchive(bytes.NewReader(z), int64(len(z)), Limits{}); err != nil {
		t.Errorf("ValidateArchive: %v", err)
	}
}

func TestBadArchives(t *testing.T) {
	many := func(n int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i := range n {
			if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f/%d", i), Method: zip.Store}); err != nil {
				t.Fatal(err)
			}
		}
		_ = zw.Close()
		return buf.Bytes()
	}
	good := makeZip(t, goodMeta)
	tests := []struct {
		name   string
		zip    []byte
		limits Limits
		err    string
	}{
		{"dot dot", makeZip(t, goodMeta, zEntry{name: "../x", body: "x"}), Limits{}, `invalid charm archive: entry "../x" escapes the charm directory`},
		{"inner dot dot", makeZip(t, goodMeta, zEntry{name: "a/../../x", body: "x"}), Limits{}, `invalid charm archive: entry "a/../../x" escapes the charm directory`},
		{"absolute", makeZip(t, goodMeta, zEntry{name: "/etc/cron.d/x", body: "x"}), Limits{}, `invalid charm archive: entry "/etc/cron.d/x" has an absolute path`},
		{"backslash", makeZip(t, goodMeta, zEntry{name: `..\x`, body: "x"}), Limits{}, `invalid charm archive: entry "..\\x" has a backslash or NUL in its name`},
		{"symlink to /etc/passwd", makeZip(t, goodMeta, zEntry{name: "hooks/install", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}), Limits{},
			`invalid charm archive: symbolic link "hooks/install" points outside the charm directory (to "/etc/passwd")`},
		{"symlink up", makeZip(t, goodMeta, zEntry{name: "hooks/install", body: "../../dispatch", mode: fs.ModeSymlink | 0o777}), Limits{},
			`invalid charm archive: symbolic link "hooks/install" points outside the charm directory (to "../../dispatch")`},
		{"write through symlink", makeZip(t, goodMeta, zEntry{name: "d", body: ".", mode: fs.ModeSymlink | 0o777},
			zEntry{name: "d/x", body: "x", mode: 0o644}), Limits{}, `invalid charm archive: entry "d/x" is inside symbolic link "d"`},
		{"duplicate", makeZip(t, goodMeta, goodMeta), Limits{}, `invalid charm archive: entry "metadata.yaml" appears twice`},
		{"fifo", makeZip(t, goodMeta, zEntry{name: "p", mode: fs.ModeNamedPipe | 0o644}), Limits{}, `invalid charm archive: entry "p" is not a file, directory or symbolic link`},
		{"not a zip", []byte("metadata.yaml: this is not a zip"), Limits{}, "invalid charm archive: zip: not a valid zip file"},
		{"truncated", good[:len(good)-10], Limits{}, "invalid charm archive: zip: not a valid zip file"},
		{"200k entries", many(200_000), Limits{}, "invalid charm archive: 200000 entries, more than the limit of 100000"},
		{"total size", makeZip(t, goodMeta, zEntry{name: "a", body: strings.Repeat("a", 600)}, zEntry{name: "b", body: strings.Repeat("b", 600)}),
			Limits{MaxSize: 1000}, "invalid charm archive: unpacks to more than the limit of 1000 bytes"},
		{"file size", makeZip(t, goodMeta, zEntry{name: "a", body: strings.Repeat("a", 600)}),
			Limits{MaxFileSize: 500}, `invalid charm archive: entry "a" is 600 bytes, more than the limit of 500`},
		{"10 GB bomb", zerosBomb(t, 10<<30, 10<<30), Limits{}, `invalid charm archive: entry "bomb" is 10737418240 bytes, more than the limit of 1073741824`},
		{"10 GB bomb, lying header", zerosBomb(t, 10<<30, 1000), Limits{}, `invalid charm archive: entry "bomb": zip: not a valid zip file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			r := bytes.NewReader(tt.zip)
			if err := ValidateArchive(r, int64(len(tt.zip)), tt.limits); err == nil || err.Error() != tt.err {
				t.Errorf("ValidateArchive: got %v, want %q", err, tt.err)
			}
			if _, err := ReadArchive(r, int64(len(tt.zip)), tt.limits); err == nil || err.Error() != tt.err {
				t.Errorf("ReadArchive: got %v, want %q", err, tt.err)
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "charm")
			if err := Unpack(r, int64(len(tt.zip)), dir, tt.limits); err == nil || err.Error() != tt.err {
				t.Errorf("Unpack: got %v, want %q", err, tt.err)
			}
			// Nothing escaped: the parent holds only the charm directory, if anything.
			entries, _ := os.ReadDir(parent)
			if len(entries) > 1 || (len(entries) == 1 && entries[0].Name() != "charm") {
				t.Errorf("unpack wrote outside: %v", entries)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v: limits must stop early", d)
			}
		})
	}
}

// Real bytes are counted while unpacking: an archive whose entries stay under the declared
// limits but whose total does not is stopped partway, not after.
func TestUnpackCountsRealBytes(t *testing.T) {
	bomb := zerosBomb(t, 64<<20, 64<<20)
	err := Unpack(bytes.NewReader(bomb), int64(len(bomb)), t.TempDir(), Limits{MaxSize: 1 << 40, MaxFileSize: 1 << 40})
	if err != nil {
		t.Fatalf("a 64 MiB file within limits must unpack: %v", err)
	}
	b := &budget{limits: Limits{MaxSize: 1 << 20, MaxFileSize: 1 << 40}}
	zr, _ := zip.NewReader(bytes.NewReader(bomb), int64(len(bomb)))
	e := &entry{f: zr.File[1], name: "bomb", mode: 0o644}
	var sink bytes.Buffer
	if err := b.copyEntry(&sink, e); err == nil || !strings.Contains(err.Error(), "unpacks to more than the limit of 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
	if sink.Len() > 1<<20 {
		t.Errorf("wrote %d bytes past the limit", sink.Len())
	}
}

// Unpacking over an earlier unpack replaces what is there, links included, and never writes
// through a link to what it points at.
func TestUnpackReplacesWhatIsThere(t *testing.T) {
	z := makeZip(t, goodMeta,
		zEntry{name: "dispatch", body: "new dispatch", mode: 0o755},
		zEntry{name: "hooks/install", body: "../dispatch", mode: fs.ModeSymlink | 0o777},
	)
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	if err := os.WriteFile(outside, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "charm")
	if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Symlink(outside, filepath.Join(dir, "dispatch")),
		os.WriteFile(filepath.Join(dir, "hooks", "install"), []byte("old"), 0o755)); err != nil {
		t.Fatal(err)
	}
	if err := Unpack(bytes.NewReader(z), int64(len(z)), dir, Limits{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "untouched" {
		t.Errorf("written through the link: %q", b)
	}
	if info, err := os.Lstat(filepath.Join(dir, "dispatch")); err != nil || !info.Mode().IsRegular() {
		t.Errorf("dispatch: %v, %v", info.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "dispatch")); string(b) != "new dispatch" {
		t.Errorf("dispatch holds %q", b)
	}
	if target, err := os.Readlink(filepath.Join(dir, "hooks", "install")); err != nil || target != "../dispatch" {
		t.Errorf("hooks/install -> %q, %v", target, err)
	}
}
