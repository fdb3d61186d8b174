package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
)

// MaxCharmArchive is the largest charm archive stored. The archive is kept in chunks, so this
// is not bound by etcd's request size; it only keeps a controller's memory and store sane.
const MaxCharmArchive = charm.MaxArchiveSize

// charmChunksPrefix holds the chunks of a charm's archive; charmBlobKey is the single blob of
// older controllers (Charm.blob_chunks == 0).
func charmChunksPrefix(uuid, url string) string { return charmBlobKey(uuid, url) + "/" }

// AddCharm checks an uploaded charm archive as the client should have (metadata, config,
// actions, dispatch's exec bit, entry names, links and size limits: the controller trusts no
// client) and stores it under a new revision, local:<name>-<rev>, with its normalized
// metadata.yaml, config.yaml, actions.yaml and manifest.yaml. The archive is written first, in
// chunks of one transaction each, then the charm document; chunks whose document never
// commits are deleted.
func (s *State) AddCharm(ctx context.Context, uuid string, archive []byte) (*storepb.Charm, error) {
	if len(archive) > MaxCharmArchive {
		return nil, apierr.Errorf(apierr.NotValid, "charm archive of %d bytes is larger than %d bytes", len(archive), MaxCharmArchive)
	}
	ch, err := charm.ReadArchiveBytes(archive, charm.DefaultLimits)
	if err != nil {
		return nil, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	meta := ch.Meta
	what := fmt.Sprintf("adding charm %q", meta.Name)
	seq := "charm-" + meta.Name

	// The revision is taken first: the chunks' keys need the URL.
	var rev int64
	err = s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		if rev, err = r.nextSequence(ctx, uuid, seq); err != nil {
			return nil, err
		}
		w := &writes{}
		w.putRaw(sequenceKey(uuid, seq), strconv.FormatInt(rev+1, 10))
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("local:%s-%d", meta.Name, rev)

	chunks, err := s.putChunks(ctx, charmChunksPrefix(uuid, url), archive)
	if err != nil {
		return nil, fmt.Errorf("%s: storing the archive: %w", what, err)
	}

	sum := sha256.Sum256(archive)
	doc := &storepb.Charm{
		Url: url, Name: meta.Name, Revision: int32(rev),
		Metadata: ch.MetadataYAML(), Manifest: ch.ManifestYAML(), Config: ch.ConfigYAML(), Actions: ch.ActionsYAML(),
		ArchiveSha256: hex.EncodeToString(sum[:]), ArchiveSize: int64(len(archive)), BlobChunks: int32(chunks),
	}
	err = s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		var existing storepb.Charm
		found, err := r.get(ctx, charmKey(uuid, url), &existing)
		if err != nil {
			return nil, err
		}
		if found {
			return nil, apierr.Errorf(apierr.AlreadyExists, "charm %q already exists", url)
		}
		w := &writes{}
		w.put(charmKey(uuid, url), doc)
		return w, nil
	})
	if err != nil {
		s.deleteChunks(charmChunksPrefix(uuid, url))
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

// CharmArchive returns a stored charm's archive, reassembled from its chunks (or the single
// blob of older controllers) and checked against the size and checksum recorded at upload.
func (s *State) CharmArchive(ctx context.Context, uuid, url string) ([]byte, error) {
	doc, err := s.Charm(ctx, uuid, url)
	if err != nil {
		return nil, err
	}
	if doc.BlobChunks == 0 {
		return s.charmBlob(ctx, url, charmBlobKey(uuid, url))
	}
	var buf bytes.Buffer
	buf.Grow(int(doc.ArchiveSize))
	for i := range int(doc.BlobChunks) {
		part, err := s.charmBlob(ctx, url, charmChunksPrefix(uuid, url)+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		buf.Write(part)
	}
	data := buf.Bytes()
	sum := sha256.Sum256(data)
	if int64(len(data)) != doc.ArchiveSize || hex.EncodeToString(sum[:]) != doc.ArchiveSha256 {
		return nil, fmt.Errorf("reading charm %q: %w", url, errors.New("stored archive does not match its checksum"))
	}
	return data, nil
}

func (s *State) charmBlob(ctx context.Context, url, key string) ([]byte, error) {
	resp, err := s.kv.Get(ctx, key)
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

// CharmEndpoints lists the endpoints of a stored charm of model uuid, sorted, the implicit
// juju-info included (show-application's endpoint-bindings). Status asks for them on every call,
// so each charm's metadata is parsed once (a stored charm never changes). A charm whose
// metadata cannot be read (it was checked at upload) has none.
func (s *State) CharmEndpoints(uuid string, doc *storepb.Charm) []string {
	key := uuid + " " + doc.Url
	if eps, ok := s.charmEndpoints.Load(key); ok {
		return eps.([]string)
	}
	var eps []string
	if meta, err := CharmMeta(doc); err == nil {
		for _, rels := range []map[string]charm.Relation{meta.Provides, meta.Requires, meta.Peers} {
			for name := range rels {
				eps = append(eps, name)
			}
		}
		if !slices.Contains(eps, "juju-info") {
			eps = append(eps, "juju-info")
		}
		slices.Sort(eps)
	}
	s.charmEndpoints.Store(key, eps)
	return eps
}
