package state_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
)

type zf struct {
	name, body string
	mode       fs.FileMode
	store      bool
}

func zipOf(t *testing.T, files ...zf) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.store {
			h.Method = zip.Store
		}
		if f.mode != 0 {
			h.SetMode(f.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive over etcd's request size is stored in 1 MiB chunks and read back whole.
func TestAddCharmChunks(t *testing.T) {
	uuid := newModel(t, "")
	ctx := context.Background()
	noise := make([]byte, 3<<20+12345) // incompressible, stored: the archive stays > 3 MiB
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(noise)
	archive := zipOf(t,
		zf{name: "charmcraft.yaml", body: "name: big\ntype: charm\nbase: ubuntu@24.04\nplatforms:\n  amd64:\nactions:\n  go: {description: go}\nconfig:\n  options:\n    x: {type: int, default: 1}\nparts: {c: {plugin: uv}}\n", mode: 0o644},
		zf{name: "dispatch", body: "#!/bin/sh\n", mode: 0o755},
		zf{name: "hooks/install", body: "../dispatch", mode: fs.ModeSymlink | 0o777},
		zf{name: "venv/blob", body: string(noise), mode: 0o644, store: true},
	)
	ch, err := st.AddCharm(ctx, uuid, archive)
	if err != nil {
		t.Fatal(err)
	}
	if ch.BlobChunks != 4 || ch.ArchiveSize != int64(len(archive)) {
		t.Errorf("chunks %d size %d", ch.BlobChunks, ch.ArchiveSize)
	}
	if !strings.Contains(string(ch.Metadata), "name: big") || strings.Contains(string(ch.Metadata), "parts") ||
		!strings.Contains(string(ch.Actions), "go:") || !strings.Contains(string(ch.Config), "options:") ||
		!strings.Contains(string(ch.Manifest), "24.04") {
		t.Errorf("normalized files:\n%s\n%s\n%s\n%s", ch.Metadata, ch.Actions, ch.Config, ch.Manifest)
	}
	got, err := st.CharmArchive(ctx, uuid, ch.Url)
	if err != nil || !bytes.Equal(got, archive) {
		t.Fatalf("CharmArchive: %d bytes, %v", len(got), err)
	}
	keys, err := st.CharmBlobKeysForTest(ctx, uuid, ch.Url)
	if err != nil || len(keys) != 4 || !strings.HasSuffix(keys[0], ch.Url+"/0") {
		t.Errorf("keys = %v, %v", keys, err)
	}
	stored, err := st.Charm(ctx, uuid, ch.Url)
	if err != nil || stored.BlobChunks != 4 {
		t.Errorf("stored = %v, %v", stored, err)
	}
}

// Archives stored by older controllers, in one blob, still read.
func TestCharmArchiveOldForm(t *testing.T) {
	uuid := newModel(t, "")
	ctx := context.Background()
	archive := charmZip(t, wordpressMeta)
	doc := &storepb.Charm{Url: "local:wordpress-99", Name: "wordpress", Revision: 99, Metadata: []byte(wordpressMeta)}
	if err := st.PutOldCharmForTest(ctx, uuid, doc, archive); err != nil {
		t.Fatal(err)
	}
	got, err := st.CharmArchive(ctx, uuid, doc.Url)
	if err != nil || !bytes.Equal(got, archive) {
		t.Fatalf("got %d bytes, %v", len(got), err)
	}
	if _, err := st.CharmArchive(ctx, uuid, "local:nope-1"); !errors.Is(err, apierr.NotFound) {
		t.Errorf("missing charm: %v", err)
	}
}

// The controller checks what the client should have: nothing bad is stored.
func TestAddCharmRefuses(t *testing.T) {
	uuid := newModel(t, "")
	ctx := context.Background()
	meta := zf{name: "metadata.yaml", body: "name: bad\n", mode: 0o644}
	tests := []struct {
		name    string
		archive []byte
		err     string
	}{
		{"escape", zipOf(t, meta, zf{name: "../x", body: "x"}), `invalid charm archive: entry "../x" escapes the charm directory`},
		{"link out", zipOf(t, meta, zf{name: "hooks/install", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}),
			`invalid charm archive: symbolic link "hooks/install" points outside the charm directory (to "/etc/passwd")`},
		{"dispatch not executable", zipOf(t, meta, zf{name: "dispatch", body: "#!/bin/sh\n", mode: 0o644}), `charm "bad": dispatch is not executable`},
		{"no metadata", zipOf(t, zf{name: "README", body: "x"}), "invalid charm archive: has no metadata.yaml or charmcraft.yaml"},
		{"malformed charmcraft", zipOf(t, zf{name: "charmcraft.yaml", body: "name: [\n"}), "invalid charmcraft.yaml"},
		{"not a zip", []byte("hello"), "invalid charm archive: zip: not a valid zip file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.AddCharm(ctx, uuid, tt.archive)
			if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %v, want NotValid %q", err, tt.err)
			}
		})
	}
}
