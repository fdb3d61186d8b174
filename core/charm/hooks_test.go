package charm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func hookCharm(t *testing.T) (string, *Meta) {
	t.Helper()
	dir := writeCharm(t, map[string]string{
		"metadata.yaml": "name: blog\nrequires:\n  db: mysql\npeers:\n  cluster: blog-peers\n",
	})
	meta, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "hooks", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, meta
}

func writeHook(t *testing.T, dir, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "hooks", name), []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestCheckHooksGood(t *testing.T) {
	dir, meta := hookCharm(t)
	writeHook(t, dir, "install", "#!/bin/sh\ntrue\n", 0o755)
	writeHook(t, dir, "db-relation-changed", "#!/usr/bin/env python3\n", 0o755)
	writeHook(t, dir, "binary", "\x7fELF\x02\x01", 0o755)
	writeHook(t, dir, ".hidden", "", 0o644)
	writeHook(t, dir, "common.sh", "shared code, sourced", 0o644)
	writeHook(t, dir, "db-relation-exploded", "#!/bin/sh\n", 0o755)
	for _, link := range []string{"start", "cluster-relation-joined", "juju-info-relation-joined"} {
		if err := os.Symlink("install", filepath.Join(dir, "hooks", link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(dir, "hooks", "binary"), filepath.Join(dir, "hooks", "stop")); err != nil {
		t.Fatal(err)
	}
	warnings, err := CheckHooks(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`charm "blog": hook "common.sh" is never run`,
		`charm "blog": hook "db-relation-exploded" is never run`,
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestCheckHooksErrors(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"not executable", func(t *testing.T, dir string) { writeHook(t, dir, "install", "#!/bin/sh\n", 0o644) },
			`charm "blog": hook "install" is not executable`},
		{"no interpreter", func(t *testing.T, dir string) { writeHook(t, dir, "config-changed", "echo hi\n", 0o755) },
			`charm "blog": hook "config-changed" has no interpreter line (#!)`},
		{"empty", func(t *testing.T, dir string) { writeHook(t, dir, "start", "", 0o755) },
			`charm "blog": hook "start" has no interpreter line (#!)`},
		{"relation hook", func(t *testing.T, dir string) { writeHook(t, dir, "db-relation-joined", "#!/bin/sh\n", 0o600) },
			`charm "blog": hook "db-relation-joined" is not executable`},
		{"broken link", func(t *testing.T, dir string) {
			_ = os.Symlink("missing", filepath.Join(dir, "hooks", "install"))
		}, `charm "blog": hook "install" is a broken symbolic link`},
		{"link outside", func(t *testing.T, dir string) {
			_ = os.Symlink(outside, filepath.Join(dir, "hooks", "install"))
		}, `charm "blog": hook "install" links outside the charm directory`},
		{"directory link", func(t *testing.T, dir string) {
			_ = os.Symlink("lib", filepath.Join(dir, "hooks", "stop"))
		}, `charm "blog": hook "stop" is not a regular file`},
		{"hooks is a file", func(t *testing.T, dir string) {
			_ = os.RemoveAll(filepath.Join(dir, "hooks"))
			_ = os.WriteFile(filepath.Join(dir, "hooks"), nil, 0o644)
		}, `charm "blog": hooks is not a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, meta := hookCharm(t)
			tt.setup(t, dir)
			_, err := CheckHooks(dir, meta)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestCheckHooksNoHooksDir(t *testing.T) {
	dir := writeCharm(t, map[string]string{"metadata.yaml": "name: blog\n"})
	meta, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := CheckHooks(dir, meta); err != nil || len(w) != 0 {
		t.Fatalf("no hooks: %v %v", w, err)
	}
	if !IsKnownHook("update-status", meta) || IsKnownHook("db-relation-joined", meta) || !IsKnownHook("juju-info-relation-broken", meta) ||
		IsKnownHook(strings.Repeat("x", 3), meta) {
		t.Error("IsKnownHook")
	}
}
