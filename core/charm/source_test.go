package charm

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTree writes files (mode 0644; names under hooks/ and "dispatch" 0755) under a new dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if name == "dispatch" || strings.HasPrefix(name, "hooks/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const jubilantTestDB = `name: testdb
type: charm
summary: Test "db" provider charm for Jubilant integration tests
description: Test "db" provider charm for Jubilant integration tests

provides:
  db:
    interface: dbi

base: ubuntu@24.04
platforms:
  amd64:

parts:
  db-charm:
    source: .
    plugin: uv
    build-snaps: [astral-uv]

actions:
  do-thing:
    description: Do a thing.
    params:
      mode:
        type: string
    additionalProperties: true

config:
  options:
    testoption:
      type: string
      description: A test option.
      default: ""
`

const jubilantTestApp = `name: testapp
type: charm
summary: Test app
description: Test app
requires:
  db:
    interface: dbi
resources:
  test-file:
    type: file
    filename: test-file.tar
    description: A test file resource to verify extensions are preserved.
base: ubuntu@24.04
platforms:
  amd64:
parts:
  app-charm:
    source: .
    plugin: uv
`

func TestReadCharmcraft(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		bases   []string
		err     string
		options []string
		actions []string
	}{
		{name: "jubilant testdb", yaml: jubilantTestDB, bases: []string{"ubuntu@24.04"},
			options: []string{"testoption"}, actions: []string{"do-thing"}},
		{name: "jubilant testapp with resources", yaml: jubilantTestApp, bases: []string{"ubuntu@24.04"}},
		{name: "platforms with bases", yaml: "name: x\nplatforms:\n  ubuntu@22.04:amd64:\n  ubuntu@24.04:arm64:\n",
			bases: []string{"ubuntu@22.04", "ubuntu@24.04"}},
		{name: "platforms build-for", yaml: "name: x\nplatforms:\n  jammy:\n    build-on: [ubuntu@22.04:amd64]\n    build-for: [ubuntu@22.04:amd64]\n",
			bases: []string{"ubuntu@22.04"}},
		{name: "old bases short", yaml: "name: x\ntype: charm\nbases:\n- name: ubuntu\n  channel: \"20.04\"\n- name: ubuntu\n  channel: \"22.04\"\n",
			bases: []string{"ubuntu@20.04", "ubuntu@22.04"}},
		{name: "old bases build-on run-on", yaml: "name: x\nbases:\n- build-on:\n  - name: ubuntu\n    channel: \"22.04\"\n  run-on:\n  - name: ubuntu\n    channel: \"22.04\"\n  - name: ubuntu\n    channel: \"20.04\"\n    architectures: [amd64]\n",
			bases: []string{"ubuntu@22.04", "ubuntu@20.04"}},
		{name: "build-on only", yaml: "name: x\nbases:\n- build-on:\n  - name: ubuntu\n    channel: \"22.04\"\n", bases: []string{"ubuntu@22.04"}},
		{name: "no bases: refused at deploy, not here", yaml: "name: x\n"},
		{name: "malformed", yaml: "name: x\nprovides: [\n", err: "invalid charmcraft.yaml: "},
		{name: "not a map", yaml: "- a\n", err: "invalid charmcraft.yaml: line 1: not a map"},
		{name: "bundle", yaml: "name: x\ntype: bundle\n", err: `charm "x": invalid charmcraft.yaml: line 2: type "bundle" is not a charm`},
		{name: "bad base", yaml: "name: x\nbase: ubuntu\n", err: `charm "x": invalid charmcraft.yaml: line 2: expected base string`},
		{name: "base and bases", yaml: "name: x\nbase: ubuntu@22.04\nbases: [{name: ubuntu, channel: '22.04'}]\n", err: "base and bases cannot both be given"},
		{name: "bad old base", yaml: "name: x\nbases:\n- name: ubuntu\n", err: "base needs a name and a channel"},
		{name: "bad config", yaml: "name: x\nbase: ubuntu@22.04\nconfig:\n  options:\n    a: {type: colour}\n", err: `charm "x": invalid config.yaml: option "a" has unknown type "colour"`},
		{name: "bad action name", yaml: "name: x\nbase: ubuntu@22.04\nactions:\n  Do: {}\n", err: `charm "x": invalid actions.yaml: bad action name "Do"`},
		{name: "bad resource", yaml: "name: x\nbase: ubuntu@22.04\nresources:\n  r: {type: file}\n", err: `charm "x" resource "r" has no filename`},
		{name: "no name", yaml: "base: ubuntu@22.04\n", err: "charm name missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"charmcraft.yaml": tt.yaml})
			c, err := Read(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Meta.Bases) != len(tt.bases) {
				t.Fatalf("bases %v, want %v", c.Meta.Bases, tt.bases)
			}
			for i, b := range c.Meta.Bases {
				if b.DisplayString() != tt.bases[i] {
					t.Fatalf("bases %v, want %v", c.Meta.Bases, tt.bases)
				}
			}
			if got := c.Config.Names(); !reflect.DeepEqual(got, tt.options) && !(len(got) == 0 && len(tt.options) == 0) {
				t.Errorf("options %v, want %v", got, tt.options)
			}
			var actions []string
			for _, name := range sortedNames(c.Actions.Actions) {
				actions = append(actions, name)
			}
			if !reflect.DeepEqual(actions, tt.actions) {
				t.Errorf("actions %v, want %v", actions, tt.actions)
			}
			// The stored metadata alone must give the same charm (the controller keeps only it).
			m, err := ReadMeta(bytes.NewReader(c.MetadataYAML()))
			if err != nil {
				t.Fatalf("ReadMeta(generated): %v\n%s", err, c.MetadataYAML())
			}
			if !reflect.DeepEqual(m, c.Meta) {
				t.Errorf("ReadMeta(generated) = %+v, want %+v", m, c.Meta)
			}
			if strings.Contains(string(c.MetadataYAML()), "parts") {
				t.Errorf("parts leaked into metadata.yaml:\n%s", c.MetadataYAML())
			}
			if (c.ManifestYAML() == nil) != (len(tt.bases) == 0) {
				t.Error("no manifest generated")
			}
		})
	}
}

func TestReadCharmcraftDetails(t *testing.T) {
	c, err := Read(writeTree(t, map[string]string{"charmcraft.yaml": jubilantTestDB}))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Actions.Actions["do-thing"]
	want := map[string]any{
		"title": "do-thing", "type": "object", "description": "Do a thing.",
		"properties":           map[string]any{"mode": map[string]any{"type": "string"}},
		"additionalProperties": true,
	}
	if a.Description != "Do a thing." || !reflect.DeepEqual(a.Params, want) {
		t.Errorf("action = %+v", a)
	}
	if opt := c.Config.Options["testoption"]; opt.Type != "string" || opt.Default != "" {
		t.Errorf("option = %+v", opt)
	}
	if again, err := ParseConfig(c.ConfigYAML()); err != nil || len(again.Options) != 1 {
		t.Errorf("ParseConfig(ConfigYAML) = %v, %v", again, err)
	}
	if again, err := ParseActions(c.ActionsYAML()); err != nil || !reflect.DeepEqual(again.Actions, c.Actions.Actions) {
		t.Errorf("ParseActions(ActionsYAML) = %v, %v", again, err)
	}
	if c.Meta.Provides["db"].Interface != "dbi" || c.Meta.Name != "testdb" {
		t.Errorf("meta = %+v", c.Meta)
	}

	app, err := Read(writeTree(t, map[string]string{"charmcraft.yaml": jubilantTestApp}))
	if err != nil {
		t.Fatal(err)
	}
	if r := app.Meta.Resources["test-file"]; r.Type != "file" || r.Filename != "test-file.tar" || r.Description == "" {
		t.Errorf("resource = %+v", r)
	}
}

func TestReadSources(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		bases   []string
		options int
		actions int
		err     string
	}{
		{name: "metadata wins over charmcraft", files: map[string]string{
			"metadata.yaml":   "name: meta\nseries: [quantal]\n",
			"charmcraft.yaml": "name: craft\ntype: charm\nbases: [{name: ubuntu, channel: '22.04'}]\n",
		}, bases: []string{"ubuntu@12.10"}},
		{name: "old source: charmcraft gives bases only", files: map[string]string{
			"metadata.yaml":   "name: meta\n",
			"charmcraft.yaml": "type: charm\nbases: [{name: ubuntu, channel: '22.04'}]\nparts: {charm: {}}\n",
		}, bases: []string{"ubuntu@22.04"}},
		{name: "packed charm", files: map[string]string{
			"metadata.yaml": "name: meta\n",
			"config.yaml":   "options:\n  a: {type: int, default: 1}\n",
			"actions.yaml":  "go:\n  description: go\n  params:\n    n: {type: integer}\n  required: [n]\n",
			"manifest.yaml": "charmcraft-version: 3.0\nbases:\n- name: ubuntu\n  channel: '22.04'\n  architectures: [amd64]\n",
		}, bases: []string{"ubuntu@22.04"}, options: 1, actions: 1},
		{name: "resolute series", files: map[string]string{"metadata.yaml": "name: m\nseries: [resolute, precise]\n"},
			bases: []string{"ubuntu@26.04", "ubuntu@12.04"}},
		{name: "unknown series", files: map[string]string{"metadata.yaml": "name: m\nseries: [warty]\n"},
			err: `charm "m": series "warty" not valid`},
		{name: "bad actions.yaml", files: map[string]string{"metadata.yaml": "name: m\n", "actions.yaml": "a: [\n"},
			err: `charm "m": invalid actions.yaml: `},
		{name: "params not a map", files: map[string]string{"metadata.yaml": "name: m\n", "actions.yaml": "a:\n  params: [x]\n"},
			err: `charm "m": invalid actions.yaml: action "a": params is not a map`},
		{name: "bad manifest", files: map[string]string{"metadata.yaml": "name: m\n", "manifest.yaml": "bases: [\n"},
			err: `charm "m": invalid manifest.yaml: `},
		{name: "nothing", files: map[string]string{"README.md": "hi"}, err: "has no metadata.yaml or charmcraft.yaml"},
		{name: "malformed charmcraft beside metadata", files: map[string]string{"metadata.yaml": "name: m\n", "charmcraft.yaml": "name: [\n"},
			err: "invalid charmcraft.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Read(writeTree(t, tt.files))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range c.Meta.Bases {
				got = append(got, b.DisplayString())
			}
			if !reflect.DeepEqual(got, tt.bases) {
				t.Errorf("bases %v, want %v", got, tt.bases)
			}
			if len(c.Config.Options) != tt.options || len(c.Actions.Actions) != tt.actions {
				t.Errorf("options %v, actions %v", c.Config.Options, c.Actions.Actions)
			}
			if !bytes.Equal(c.MetadataYAML(), []byte(tt.files["metadata.yaml"])) {
				t.Errorf("metadata.yaml not kept as is: %s", c.MetadataYAML())
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}

func TestDispatch(t *testing.T) {
	dir := writeTree(t, map[string]string{"metadata.yaml": "name: d\n", "dispatch": "#!/bin/sh\n"})
	if err := os.Symlink("../dispatch", filepath.Join(dir, "hooks", "install")); err != nil {
		if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../dispatch", filepath.Join(dir, "hooks", "install")); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Read(dir)
	if err != nil || !c.HasDispatch {
		t.Fatalf("Read = %+v, %v", c, err)
	}
	if w, err := CheckHooks(dir, c.Meta); err != nil || len(w) > 0 {
		t.Errorf("CheckHooks = %v, %v", w, err)
	}
	if err := os.Chmod(filepath.Join(dir, "dispatch"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || err.Error() != `charm "d": dispatch is not executable` {
		t.Errorf("got %v", err)
	}
	// The same in an archive: the exec bit comes from the zip's Unix mode.
	for _, tc := range []struct {
		mode fs.FileMode
		err  string
	}{{0o755, ""}, {0o644, `charm "d": dispatch is not executable`}, {0, `charm "d": dispatch is not executable`}} {
		z := makeZip(t, zEntry{name: "metadata.yaml", body: "name: d\n", mode: 0o644},
			zEntry{name: "dispatch", body: "#!/bin/sh\n", mode: tc.mode},
			zEntry{name: "hooks/install", body: "../dispatch", mode: fs.ModeSymlink | 0o777})
		_, err := ReadArchiveBytes(z, Limits{})
		if (tc.err == "" && err != nil) || (tc.err != "" && (err == nil || err.Error() != tc.err)) {
			t.Errorf("mode %v: got %v, want %q", tc.mode, err, tc.err)
		}
	}
}

func TestOtherJujuHooksNotWarned(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"metadata.yaml":               "name: h\nprovides:\n  web: http\n",
		"hooks/pre-series-upgrade":    "#!/bin/sh\n",
		"hooks/secret-changed":        "#!/bin/sh\n",
		"hooks/collect-metrics":       "#!/bin/sh\n",
		"hooks/data-storage-attached": "#!/bin/sh\n",
		"hooks/web-relation-created":  "#!/bin/sh\n",
		"hooks/workload-pebble-ready": "#!/bin/sh\n",
		"hooks/upgrade-charm":         "#!/bin/sh\n",
		"hooks/update-status":         "#!/bin/sh\n",
	})
	meta, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := CheckHooks(dir, meta); err != nil || len(w) > 0 {
		t.Errorf("CheckHooks = %v, %v", w, err)
	}
	if !IsKnownHook("web-relation-created", meta) {
		t.Error("relation-created is run")
	}
}
