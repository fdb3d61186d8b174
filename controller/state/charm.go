package state

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
)

// MaxCharmArchive keeps an archive inside one etcd request (1.5 MiB by default).
const MaxCharmArchive = 1 << 20

// AddCharm stores an uploaded charm archive (a zip of the charm directory) under a new
// revision, local:<name>-<rev>, and returns the stored document.
func (s *State) AddCharm(ctx context.Context, uuid string, archive []byte) (*storepb.Charm, error) {
	if len(archive) > MaxCharmArchive {
		return nil, apierr.Errorf(apierr.NotValid, "charm archive of %d bytes is larger than %d bytes", len(archive), MaxCharmArchive)
	}
	metaYAML, manifestYAML, configYAML, err := readCharmArchive(archive)
	if err != nil {
		return nil, err
	}
	meta, err := charm.ReadMeta(bytes.NewReader(metaYAML))
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "invalid charm metadata: %v", err)
	}
	if err := meta.Check(); err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	if _, err := charm.ParseConfig(configYAML); err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "charm %q: %v", meta.Name, err)
	}
	sum := sha256.Sum256(archive)
	var doc *storepb.Charm
	err = s.run(ctx, fmt.Sprintf("adding charm %q", meta.Name), func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		rev, err := r.nextSequence(ctx, uuid, "charm-"+meta.Name)
		if err != nil {
			return nil, err
		}
		url := fmt.Sprintf("local:%s-%d", meta.Name, rev)
		doc = &storepb.Charm{
			Url: url, Name: meta.Name, Revision: int32(rev), Metadata: metaYAML, Manifest: manifestYAML, Config: configYAML,
			ArchiveSha256: hex.EncodeToString(sum[:]), ArchiveSize: int64(len(archive)),
		}
		w := &writes{}
		w.put(charmKey(uuid, url), doc)
		w.putRaw(charmBlobKey(uuid, url), string(archive))
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// Charm returns a stored charm document.
func (s *State) Charm(ctx context.Context, uuid, url string) (*storepb.Charm, error) {
	doc := &storepb.Charm{}
	ok, err := s.getDoc(ctx, charmKey(uuid, url), doc)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Errorf(apierr.NotFound, "charm %q not found", url)
	}
	return doc, nil
}

// CharmArchive returns a stored charm's archive.
func (s *State) CharmArchive(ctx context.Context, uuid, url string) ([]byte, error) {
	resp, err := s.kv.Get(ctx, charmBlobKey(uuid, url))
	if err != nil {
		return nil, fmt.Errorf("reading charm %q: %w", url, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "charm %q not found", url)
	}
	return resp.Kvs[0].Value, nil
}

// CharmMeta parses a stored charm's metadata, bases included.
func CharmMeta(doc *storepb.Charm) (*charm.Meta, error) {
	meta, err := charm.ReadMeta(bytes.NewReader(doc.Metadata))
	if err != nil {
		return nil, fmt.Errorf("charm %q: %w", doc.Url, err)
	}
	return meta, nil
}

func readCharmArchive(archive []byte) (meta, manifest, config []byte, err error) {
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return nil, nil, nil, apierr.Errorf(apierr.NotValid, "invalid charm archive: %v", err)
	}
	read := func(f *zip.File) ([]byte, error) {
		rc, err := f.Open()
		if err != nil {
			return nil, apierr.Errorf(apierr.NotValid, "invalid charm archive: %v", err)
		}
		defer rc.Close()
		return io.ReadAll(io.LimitReader(rc, MaxCharmArchive))
	}
	for _, f := range zr.File {
		switch f.Name {
		case "metadata.yaml":
			if meta, err = read(f); err != nil {
				return nil, nil, nil, err
			}
		case "manifest.yaml":
			if manifest, err = read(f); err != nil {
				return nil, nil, nil, err
			}
		case "config.yaml":
			if config, err = read(f); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if meta == nil {
		return nil, nil, nil, apierr.Errorf(apierr.NotValid, "invalid charm archive: no metadata.yaml")
	}
	return meta, manifest, config, nil
}
