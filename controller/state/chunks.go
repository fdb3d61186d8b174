package state

import (
	"context"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Large content (charm archives, resource files) is kept in chunks under a prefix, chunk n at
// prefix+n, written one request each before the transaction that records the document naming
// them; chunks whose document never commits are deleted.

// chunkSize keeps each chunk, with its key, inside one etcd request (1.5 MiB by default).
const chunkSize = 1 << 20

// putChunks stores data in chunks under prefix (at least one, for empty data) and returns how
// many; on failure it deletes what it wrote.
func (s *State) putChunks(ctx context.Context, prefix string, data []byte) (int, error) {
	n := 0
	for off := 0; off < len(data) || n == 0; off += chunkSize {
		end := min(off+chunkSize, len(data))
		if _, err := s.kv.Put(ctx, prefix+strconv.Itoa(n), string(data[off:end])); err != nil {
			s.deleteChunks(prefix)
			return 0, err
		}
		n++
	}
	return n, nil
}

// deleteChunks removes the chunks under prefix that no document names. It runs even when the
// request was cancelled: the chunks would otherwise stay until their model or application goes.
func (s *State) deleteChunks(prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = s.kv.Delete(ctx, prefix, clientv3.WithPrefix())
}
