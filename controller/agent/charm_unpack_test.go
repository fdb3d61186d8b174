package agent

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A packed dispatch charm unpacks with its hook links intact and dispatch executable; a link
// out of the charm is refused.
func TestUnpackCharmDispatchLinks(t *testing.T) {
	build := func(target string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, e := range []struct {
			name, body string
			mode       fs.FileMode
		}{
			{"metadata.yaml", "name: x\n", 0o644},
			{"dispatch", "#!/bin/sh\n", 0o755},
			{"hooks/install", target, fs.ModeSymlink | 0o777},
		} {
			h := &zip.FileHeader{Name: e.name}
			h.SetMode(e.mode)
			w, _ := zw.CreateHeader(h)
			_, _ = w.Write([]byte(e.body))
		}
		_ = zw.Close()
		return buf.Bytes()
	}
	dir := filepath.Join(t.TempDir(), "charm")
	if err := unpackCharm(build("../dispatch"), dir); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "hooks", "install")); err != nil || target != "../dispatch" {
		t.Errorf("hooks/install -> %q, %v", target, err)
	}
	if info, err := os.Stat(filepath.Join(dir, "hooks", "install")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("hooks/install resolves to %v, %v", info, err)
	}
	if err := unpackCharm(build("/etc/passwd"), filepath.Join(t.TempDir(), "charm")); err == nil {
		t.Error("a link out of the charm was unpacked")
	}
}
