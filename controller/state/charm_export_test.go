package state

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/storepb"
)

// CharmBlobKeysForTest lists the archive keys stored for a charm (chunks and old blob).
func (s *State) CharmBlobKeysForTest(ctx context.Context, uuid, url string) ([]string, error) {
	resp, err := s.kv.Get(ctx, charmBlobKey(uuid, url), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys, nil
}

// PutOldCharmForTest stores a charm the way controllers before chunking did: one blob.
func (s *State) PutOldCharmForTest(ctx context.Context, uuid string, doc *storepb.Charm, archive []byte) error {
	return s.run(ctx, "test", func(ctx context.Context, r *reader) (*writes, error) {
		w := &writes{}
		w.put(charmKey(uuid, doc.Url), doc)
		w.putRaw(charmBlobKey(uuid, doc.Url), string(archive))
		return w, nil
	})
}

// CharmBlobPrefixForTest is where every archive of a model is kept.
func CharmBlobPrefixForTest(uuid string) string { return charmBlobPrefix + uuid + "/" }
