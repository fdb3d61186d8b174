package agent

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func zipFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		h := &zip.FileHeader{Name: name}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The new charm replaces the old one whole (a hook the new charm lacks is gone); a bad archive
// leaves the old one as it was; a swap cut short between its renames is undone and redone.
func TestReplaceCharmDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charm")
	v1 := zipFiles(t, map[string]string{"metadata.yaml": "name: x\n", "hooks/install": "#!/bin/sh\n", "hooks/stop": "#!/bin/sh\n"})
	v2 := zipFiles(t, map[string]string{"metadata.yaml": "name: x\n", "hooks/install": "#!/bin/sh\n", "hooks/upgrade-charm": "#!/bin/sh\n"})
	if err := unpackCharm(v1, dir); err != nil {
		t.Fatal(err)
	}
	// What the charm wrote while running (ops: .unit-state.db) stays across the upgrade.
	_ = os.MkdirAll(filepath.Join(dir, ".state"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, ".state", "notes"), []byte("kept"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, ".unit-state.db"), []byte("kept"), 0o600)
	if err := replaceCharmDir(v2, v1, dir); err != nil {
		t.Fatal(err)
	}
	exists := func(rel string) bool { _, err := os.Stat(filepath.Join(dir, rel)); return err == nil }
	if !exists("hooks/upgrade-charm") || exists("hooks/stop") {
		t.Errorf("after the swap: upgrade-charm %v, stop %v", exists("hooks/upgrade-charm"), exists("hooks/stop"))
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".state", "notes")); err != nil || string(data) != "kept" || !exists(".unit-state.db") {
		t.Errorf("the charm's own files were lost: %q %v", data, err)
	}
	for _, leftover := range []string{dir + ".next", dir + ".old"} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("%s left behind", leftover)
		}
	}

	if err := replaceCharmDir([]byte("not a zip"), v2, dir); err == nil {
		t.Fatal("a bad archive was put in place")
	}
	if !exists("hooks/upgrade-charm") {
		t.Error("a bad archive damaged the charm in place")
	}

	// Cut short: the charm moved aside, the new one not yet in place.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := replaceCharmDir(v1, v2, dir); err != nil {
		t.Fatal(err)
	}
	if !exists("hooks/stop") || exists("hooks/upgrade-charm") || !exists(".state/notes") {
		t.Error("the interrupted swap was not finished")
	}
}

// The deployer starts the unit's record with the charm it unpacked.
func TestRecordDeployedCharm(t *testing.T) {
	dir := t.TempDir()
	if err := recordDeployedCharm(dir, "local:x-1"); err != nil {
		t.Fatal(err)
	}
	st, err := readUniterState(dir)
	if err != nil || st.CharmURL != "local:x-1" {
		t.Fatalf("record: %+v %v", st, err)
	}
}
