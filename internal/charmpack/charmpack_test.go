package charmpack

import (
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const charmcraftYAML = `# comments stay in charmcraft.yaml
name: demo
type: charm
title: Demo
summary: A demo charm.
description: |
  Two lines
  of description.
links:
  documentation: https://example.com/docs
  issues: https://example.com/issues
base: ubuntu@24.04
platforms:
  amd64:
  arm64:
parts:
  charm:
    plugin: charm
provides:
  db:
    interface: dbi
requires:
  cache:
    interface: redis
    limit: 1
peers:
  cluster:
    interface: demo-cluster
resources:
  blob:
    type: file
    filename: blob.tar
config:
  options:
    port:
      type: int
      default: 7070
      description: the port # a comment, dropped
actions:
  backup:
    description: Back up.
    params:
      to:
        type: string
`

// writeTree writes files (path → content; a path ending in "*" is made executable).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func fixture(t *testing.T) (src, ops string) {
	t.Helper()
	src, ops = t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{
		"charmcraft.yaml":           charmcraftYAML,
		"requirements.txt":          "ops==2.20.0\n",
		"LICENSE":                   "license\n",
		"src/charm.py":              "#!/usr/bin/env python3\nimport ops\n",
		"src/helpers.py":            "X = 1\n",
		"src/tool.sh*":              "#!/bin/sh\n",
		"src/__pycache__/x.pyc":     "junk",
		"lib/charms/demo/v0/api.py": "API = 1\n",
		"tests/test_charm.py":       "# not packed\n",
	})
	writeTree(t, ops, map[string]string{
		"__init__.py":           "# ops\n",
		"model.py":              "# model\n",
		"_private/harness.py":   "# private\n",
		"__pycache__/model.pyc": "junk",
		"lib/__init__.py":       "# lib\n",
	})
	return src, ops
}

type zipEntry struct {
	mode fs.FileMode
	data string
}

func readZip(t *testing.T, file string) (map[string]zipEntry, []string) {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string]zipEntry{}
	var order []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		entries[f.Name] = zipEntry{mode: f.Mode(), data: string(data)}
		order = append(order, f.Name)
	}
	return entries, order
}

func TestPackLayout(t *testing.T) {
	src, ops := fixture(t)
	out := filepath.Join(t.TempDir(), "charms", "demo_amd64.charm")
	if err := PackFor(src, ops, out, "amd64"); err != nil {
		t.Fatal(err)
	}
	entries, order := readZip(t, out)
	want := []string{
		"LICENSE", "actions.yaml", "config.yaml", "dispatch",
		"hooks/install", "hooks/start", "hooks/upgrade-charm",
		"lib/charms/demo/v0/api.py", "manifest.yaml", "metadata.yaml",
		"src/charm.py", "src/helpers.py", "src/tool.sh",
		"venv/ops/__init__.py", "venv/ops/_private/harness.py", "venv/ops/lib/__init__.py", "venv/ops/model.py",
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant (sorted):\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	for name, mode := range map[string]fs.FileMode{
		"dispatch": 0o755, "src/charm.py": 0o755, "src/tool.sh": 0o755, "src/helpers.py": 0o644,
		"metadata.yaml": 0o644, "venv/ops/model.py": 0o644,
	} {
		if got := entries[name].mode; got != mode {
			t.Errorf("%s: mode %v, want %v", name, got, mode)
		}
	}
	for _, h := range []string{"install", "start", "upgrade-charm"} {
		e := entries["hooks/"+h]
		if e.mode&fs.ModeSymlink == 0 || e.data != "../dispatch" {
			t.Errorf("hooks/%s: mode %v target %q, want a link to ../dispatch", h, e.mode, e.data)
		}
	}
	if got := entries["dispatch"].data; got != "#!/bin/sh\nJUJU_DISPATCH_PATH=\"${JUJU_DISPATCH_PATH:-$0}\" PYTHONPATH=lib:venv /usr/bin/env python3 ./src/charm.py\n" {
		t.Errorf("dispatch:\n%s", got)
	}
}

func TestPackYAML(t *testing.T) {
	src, ops := fixture(t)
	out := filepath.Join(t.TempDir(), "demo.charm")
	if err := PackFor(src, ops, out, "arm64"); err != nil {
		t.Fatal(err)
	}
	entries, _ := readZip(t, out)

	var meta map[string]any
	if err := yaml.Unmarshal([]byte(entries["metadata.yaml"].data), &meta); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"name", "title", "summary", "description", "provides", "requires", "peers", "resources", "docs", "issues"} {
		if _, ok := meta[key]; !ok {
			t.Errorf("metadata.yaml lacks %s:\n%s", key, entries["metadata.yaml"].data)
		}
	}
	for _, key := range []string{"type", "base", "platforms", "parts", "config", "actions", "links"} {
		if _, ok := meta[key]; ok {
			t.Errorf("metadata.yaml has %s:\n%s", key, entries["metadata.yaml"].data)
		}
	}
	if meta["name"] != "demo" || meta["docs"] != "https://example.com/docs" {
		t.Errorf("metadata.yaml:\n%s", entries["metadata.yaml"].data)
	}
	if strings.Contains(entries["metadata.yaml"].data, "comments stay") {
		t.Errorf("metadata.yaml carries charmcraft.yaml's comments:\n%s", entries["metadata.yaml"].data)
	}
	if !strings.HasPrefix(entries["metadata.yaml"].data, "name: demo\ntitle: Demo\n") {
		t.Errorf("metadata.yaml does not keep charmcraft.yaml's order:\n%s", entries["metadata.yaml"].data)
	}

	var config struct {
		Options map[string]struct {
			Type        string `yaml:"type"`
			Default     int    `yaml:"default"`
			Description string `yaml:"description"`
		} `yaml:"options"`
	}
	if err := yaml.Unmarshal([]byte(entries["config.yaml"].data), &config); err != nil {
		t.Fatal(err)
	}
	if o := config.Options["port"]; o.Type != "int" || o.Default != 7070 || o.Description != "the port" {
		t.Errorf("config.yaml:\n%s", entries["config.yaml"].data)
	}

	var actions map[string]struct {
		Description string `yaml:"description"`
	}
	if err := yaml.Unmarshal([]byte(entries["actions.yaml"].data), &actions); err != nil || actions["backup"].Description != "Back up." {
		t.Errorf("actions.yaml (%v):\n%s", err, entries["actions.yaml"].data)
	}

	want := "charmcraft-version: " + Version + "\ncharmcraft-started-at: \"1980-01-01T00:00:00.000000Z\"\n" +
		"bases:\n  - name: ubuntu\n    channel: \"24.04\"\n    architectures:\n      - arm64\n"
	if got := entries["manifest.yaml"].data; got != want {
		t.Errorf("manifest.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func TestPackDeterministic(t *testing.T) {
	src, ops := fixture(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.charm"), filepath.Join(dir, "b.charm")
	if err := PackFor(src, ops, a, "amd64"); err != nil {
		t.Fatal(err)
	}
	// Touching the sources changes their times, not the archive.
	if err := os.Chtimes(filepath.Join(src, "src", "charm.py"), time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := PackFor(src, ops, b, "amd64"); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Error("packing twice gave different archives")
	}
}

func TestPackBases(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, arch, want, err string
	}{
		{name: "platform with build-for", arch: "amd64",
			yaml: "base: ubuntu@22.04\nplatforms:\n  x86:\n    build-on: [amd64]\n    build-for: [amd64]\n",
			want: "ubuntu 22.04 [amd64]"},
		{name: "multi-base platforms", arch: "amd64",
			yaml: "platforms:\n  ubuntu@22.04:amd64:\n  ubuntu@24.04:amd64:\n  ubuntu@24.04:arm64:\n",
			want: "ubuntu 22.04 [amd64]; ubuntu 24.04 [amd64]"},
		{name: "charmcraft 2 bases", arch: "amd64",
			yaml: "bases:\n  - build-on:\n      - name: ubuntu\n        channel: \"22.04\"\n    run-on:\n      - name: ubuntu\n        channel: \"22.04\"\n        architectures: [amd64]\n",
			want: "ubuntu 22.04 [amd64]"},
		{name: "short bases", arch: "amd64",
			yaml: "bases:\n  - name: ubuntu\n    channel: \"20.04\"\n",
			want: "ubuntu 20.04 [amd64]"},
		{name: "no platform for the arch", arch: "s390x",
			yaml: "base: ubuntu@24.04\nplatforms:\n  amd64:\n", err: "no platform that builds for s390x"},
		{name: "no bases at all", arch: "amd64", yaml: "", err: "neither platforms nor bases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, ops := fixture(t)
			writeTree(t, src, map[string]string{"charmcraft.yaml": "name: demo\ntype: charm\nsummary: s\ndescription: d\n" + tc.yaml})
			out := filepath.Join(t.TempDir(), "demo.charm")
			err := PackFor(src, ops, out, tc.arch)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := readZip(t, out)
			var m struct{ Bases []manifestBase }
			if err := yaml.Unmarshal([]byte(entries["manifest.yaml"].data), &m); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range m.Bases {
				got = append(got, b.Name+" "+b.Channel+" ["+strings.Join(b.Architectures, ",")+"]")
			}
			if strings.Join(got, "; ") != tc.want {
				t.Errorf("bases %q, want %q", strings.Join(got, "; "), tc.want)
			}
		})
	}
}

func TestPackRefuses(t *testing.T) {
	src, ops := fixture(t)
	out := filepath.Join(t.TempDir(), "demo.charm")
	if err := PackFor(src, t.TempDir(), out, "amd64"); err == nil || !strings.Contains(err.Error(), "has no __init__.py") {
		t.Errorf("empty ops dir: %v", err)
	}
	if err := os.Remove(filepath.Join(src, "src", "charm.py")); err != nil {
		t.Fatal(err)
	}
	if err := PackFor(src, ops, out, "amd64"); err == nil || !strings.Contains(err.Error(), "no src/charm.py") {
		t.Errorf("no charm.py: %v", err)
	}
	writeTree(t, src, map[string]string{"src/charm.py": "", "charmcraft.yaml": "name: b\ntype: bundle\n"})
	if err := PackFor(src, ops, out, "amd64"); err == nil || !strings.Contains(err.Error(), `type is "bundle"`) {
		t.Errorf("bundle: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused pack left %s (%v)", out, err)
	}
}

func TestName(t *testing.T) {
	src, _ := fixture(t)
	if n, err := Name(src); err != nil || n != "demo" {
		t.Errorf("Name = %q, %v", n, err)
	}
}
