package application

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/internal/testutil/golden"
)

type zipEntry struct {
	name, body string
	mode       fs.FileMode
}

// writeZip writes a real zip archive at path, entries carrying Unix modes as charmcraft's do.
func writeZip(t *testing.T, path string, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(e.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(e.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// packedCharm is what charmcraft pack makes of a unified charmcraft.yaml: metadata.yaml,
// config.yaml, actions.yaml, manifest.yaml, dispatch, and hooks linked to it.
func packedCharm(dispatchMode fs.FileMode) []zipEntry {
	return []zipEntry{
		{"metadata.yaml", "name: testdb\nsummary: db\ndescription: db\nprovides:\n  db:\n    interface: dbi\n", 0o644},
		{"config.yaml", "options:\n  testoption:\n    type: string\n    default: \"\"\n", 0o644},
		{"actions.yaml", "do-thing:\n  description: Do a thing.\n  params:\n    mode: {type: string}\n", 0o644},
		{"manifest.yaml", "charmcraft-version: 3.2.0\nbases:\n- name: ubuntu\n  channel: '24.04'\n  architectures: [amd64]\n", 0o644},
		{"dispatch", "#!/bin/sh\nJUJU_DISPATCH_PATH=\"${JUJU_DISPATCH_PATH:-$0}\" PYTHONPATH=lib:venv ./src/charm.py\n", dispatchMode},
		{"hooks/install", "../dispatch", fs.ModeSymlink | 0o777},
		{"hooks/start", "../dispatch", fs.ModeSymlink | 0o777},
		{"src/charm.py", "#!/usr/bin/env python3\n", 0o755},
	}
}

// bombZip is a metadata.yaml and an entry of 10 GiB of zeros in about 10 MiB of archive.
func bombZip(t *testing.T, path string) {
	t.Helper()
	zeros := make([]byte, 1<<20)
	var s bytes.Buffer
	fw, _ := flate.NewWriter(&s, flate.BestCompression)
	_, _ = fw.Write(zeros)
	_ = fw.Flush()
	n := s.Len()
	_, _ = fw.Write(zeros)
	_ = fw.Flush()
	repeat := append([]byte(nil), s.Bytes()[n:]...)
	stream := append([]byte(nil), s.Bytes()[:n]...)
	for range (10 << 10) - 1 {
		stream = append(stream, repeat...)
	}
	stream = append(stream, 3, 0) // an empty final block
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("metadata.yaml")
	_, _ = w.Write([]byte("name: bomb\n"))
	h := &zip.FileHeader{Name: "blob", Method: zip.Deflate, CompressedSize64: uint64(len(stream)), UncompressedSize64: 10 << 30}
	rw, err := zw.CreateRaw(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rw.Write(stream)
	_ = zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Golden files are found from the working directory, so these tests use absolute paths
// (shown as <dir> in the goldens) rather than t.Chdir.
func TestDeployArchive(t *testing.T) {
	dir := t.TempDir()
	data := writeZip(t, filepath.Join(dir, "testdb_ubuntu-24.04-amd64.charm"), packedCharm(0o755)...)
	fake := &fakeDeployAPI{}
	stderr, err := deployWith(t, fake, "", filepath.Join(dir, "testdb_ubuntu-24.04-amd64.charm"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fake.archive, data) {
		t.Error("the archive must be uploaded as is")
	}
	if fake.req.GetBase().GetChannel() != "24.04/stable" || fake.req.GetApplication() != "testdb" {
		t.Errorf("request = %v", fake.req)
	}
	golden.Assert(t, stderr, "deploy/archive.stderr.golden")

	// By name from the repository: <name>_*.charm, <name>.charm.
	repo := filepath.Join(dir, "repo")
	_ = os.MkdirAll(repo, 0o755)
	writeZip(t, filepath.Join(repo, "testdb_ubuntu-24.04-amd64.charm"), packedCharm(0o755)...)
	writeZip(t, filepath.Join(repo, "other.charm"), packedCharm(0o755)...)
	for _, name := range []string{"testdb", "other"} {
		fake := &fakeDeployAPI{}
		if _, err := deployWith(t, fake, repo, name+" app"); err != nil || fake.archive == nil {
			t.Errorf("deploy %s: %v", name, err)
		}
	}
	writeZip(t, filepath.Join(repo, "testdb_ubuntu-22.04-amd64.charm"), packedCharm(0o755)...)
	_, err = deployWith(t, &fakeDeployAPI{}, repo, "testdb")
	checkErr(t, err, `charm "testdb" is ambiguous in $JUJU_REPOSITORY: testdb_ubuntu-22.04-amd64.charm, testdb_ubuntu-24.04-amd64.charm; give the path of one`, false)
}

// A charm directory with charmcraft.yaml alone (as in the charm's source tree) deploys, and so
// does an old charm whose metadata lists series Juju no longer supports.
func TestDeploySources(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(rel, content string, mode fs.FileMode) {
		p := filepath.Join(dir, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	// The shape of jubilant's testdb charmcraft.yaml (a charm source tree, not packed).
	write("testdb/charmcraft.yaml", "name: testdb\ntype: charm\nprovides:\n  db:\n    interface: dbi\nbase: ubuntu@24.04\nplatforms:\n  amd64:\nparts:\n  c: {plugin: uv}\n", 0o644)
	write("testdb/src/charm.py", "#!/usr/bin/env python3\n", 0o755)
	write("old/metadata.yaml", "name: old\nsummary: s\ndescription: d\nseries: [quantal, precise]\n", 0o644)
	write("old/hooks/install", "#!/bin/sh\n", 0o755)
	write("future/metadata.yaml", "name: future\nseries: [resolute]\n", 0o644)
	tests := []struct{ args, base string }{
		{"./testdb", "24.04/stable"},
		{"./old", "12.10/stable"},
		{"./future", "26.04/stable"},
	}
	for _, tt := range tests {
		fake := &fakeDeployAPI{}
		stderr, err := deployWith(t, fake, "", tt.args)
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		if got := fake.req.GetBase().GetChannel(); got != tt.base {
			t.Errorf("%s: base %s, want %s (stderr %q)", tt.args, got, tt.base, stderr)
		}
	}
}

// Bad input is one error and nothing is sent to the controller.
func TestDeployBadCharms(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	chdir := func(d string) {
		if err := os.Chdir(d); err != nil {
			t.Fatal(err)
		}
	}
	chdir(dir) // to write the fixtures with short names
	meta := zipEntry{"metadata.yaml", "name: bad\n", 0o644}
	writeZip(t, "escape.charm", meta, zipEntry{"../../etc/cron.d/x", "x", 0o644})
	writeZip(t, "absolute.charm", meta, zipEntry{"/etc/passwd", "x", 0o644})
	writeZip(t, "passwd-link.charm", meta, zipEntry{"hooks/install", "/etc/passwd", fs.ModeSymlink | 0o777})
	writeZip(t, "no-exec.charm", packedCharm(0o644)...)
	bombZip(t, "bomb.charm")
	_ = os.WriteFile("notzip.charm", []byte("name: not a zip\n"), 0o644)
	_ = os.MkdirAll("badcraft", 0o755)
	_ = os.WriteFile("badcraft/charmcraft.yaml", []byte("name: badcraft\nbase: ubuntu@24.04\nprovides: [\n"), 0o644)
	_ = os.MkdirAll("noexecdir", 0o755)
	_ = os.WriteFile("noexecdir/metadata.yaml", []byte("name: noexecdir\nseries: [jammy]\n"), 0o644)
	_ = os.WriteFile("noexecdir/dispatch", []byte("#!/bin/sh\n"), 0o644)
	chdir(wd)
	for _, name := range []string{"escape", "absolute", "passwd-link", "no-exec", "bomb", "notzip", "badcraft", "noexecdir"} {
		t.Run(name, func(t *testing.T) {
			arg := filepath.Join(dir, name)
			if _, err := os.Stat(arg + ".charm"); err == nil {
				arg += ".charm"
			}
			fake := &fakeDeployAPI{}
			stderr, err := deployWith(t, fake, "", arg)
			if err == nil {
				t.Fatal("deployed")
			}
			if len(fake.calls) != 0 {
				t.Errorf("requests sent: %v", fake.calls)
			}
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("error is more than one line: %q", err)
			}
			out := strings.ReplaceAll(stderr+"ERROR "+err.Error()+"\n", dir, "<dir>")
			golden.Assert(t, out, "deploy/bad-"+name+".stderr.golden")
		})
	}
}

// A charm directory packs to the same archive whenever it is packed, whatever its files'
// times: a bundle tells from the archive's sha256 whether an application's charm changed, and
// an application deployed by hand must not look changed to a bundle.
func TestZipCharmIsReproducible(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "charms", "mysql")
	first, err := zipCharm(dir)
	if err != nil {
		t.Fatal(err)
	}
	copied := t.TempDir()
	if err := os.CopyFS(copied, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	again, err := zipCharm(copied)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Fatalf("the same charm packed to different archives (%d and %d bytes)", len(first), len(again))
	}
}
