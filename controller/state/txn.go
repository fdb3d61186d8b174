package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/store"
)

// maxAttempts bounds retries of a transaction that loses a race (L-G3); maxBackoff bounds the
// random wait before each retry.
const (
	maxAttempts = 16
	maxBackoff  = 200 * time.Millisecond
)

// maxOps keeps every transaction well under etcd's 128 operations (L-G4).
const maxOps = 100

// maxBulkOps bounds a bulk transaction (writes.bulk): one whose size follows a request that
// limits bounds per call (deploy and add-unit -n, add-machine -n), never the model. It stays
// under the embedded etcd's store.MaxTxnOps, for its operations and its comparisons alike.
const maxBulkOps = 32_000

// maxTxnBytes is etcd's default --max-request-bytes (1.5 MiB): a transaction estimated larger
// is refused here with a clear error rather than sent. Bulk transactions may take what the
// embedded etcd takes (maxBulkBytes, store.MaxRequestBytes); an external cluster with etcd's
// default refuses those past 1.5 MiB, whole.
const maxTxnBytes = 3 << 19

// maxBulkBytes is a variable only for a test, which lowers it to see a refusal.
var maxBulkBytes = store.MaxRequestBytes

// errRetry, returned by a build, starts the transaction again from fresh reads: what it read
// outside the guards (a listing) has already changed.
var errRetry = errors.New("state changed while reading")

// buildFunc reads through r and returns the writes to commit, or an error to stop.
type buildFunc func(ctx context.Context, r *reader) (*writes, error)

// reader records what a transaction read so the commit can assert nothing changed since.
type reader struct {
	s    *State
	cmps []clientv3.Cmp
	seen map[string]bool
	seqs map[string]int64
	// fetched holds documents read ahead by prefetch (nil value: absent), each served once.
	fetched map[string]*mvccpb.KeyValue
}

// prefetch reads several documents in one round trip (a read-only transaction, so one
// revision); the reads that follow take them from here. Transactions that know their keys up
// front read them this way: most of a small transaction's time is round trips.
func (r *reader) prefetch(ctx context.Context, keys ...string) error {
	ops := make([]clientv3.Op, 0, len(keys))
	for _, k := range keys {
		ops = append(ops, clientv3.OpGet(k))
	}
	resp, err := r.s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("reading %v: %w", keys, err)
	}
	if r.fetched == nil {
		r.fetched = map[string]*mvccpb.KeyValue{}
	}
	for i, res := range resp.Responses {
		var kv *mvccpb.KeyValue
		if kvs := res.GetResponseRange().GetKvs(); len(kvs) > 0 {
			kv = kvs[0]
		}
		r.fetched[keys[i]] = kv
	}
	return nil
}

// writes collects the puts and deletes of one transaction. A later write of the same key
// replaces the earlier one: etcd refuses a transaction that names a key twice.
type writes struct {
	ops   []clientv3.Op
	index map[string]int
	err   error // the first document that could not be encoded; the transaction is not sent
	// bulk lets the transaction hold up to maxBulkOps operations instead of maxOps.
	bulk bool
}

func (w *writes) add(key string, op clientv3.Op) {
	if i, ok := w.index[key]; ok {
		w.ops[i] = op
		return
	}
	if w.index == nil {
		w.index = map[string]int{}
	}
	w.index[key] = len(w.ops)
	w.ops = append(w.ops, op)
}

func (w *writes) put(key string, msg proto.Message) {
	data, err := proto.Marshal(msg)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("encoding %s: %w", key, err)
	}
	w.add(key, clientv3.OpPut(key, string(data)))
}

func (w *writes) putRaw(key, value string) {
	w.add(key, clientv3.OpPut(key, value))
}

func (w *writes) del(key string) {
	w.add(key, clientv3.OpDelete(key))
}

// assertEmpty asserts that no key in [from, to) exists when the transaction commits (an empty
// range compares as create revision 0).
func (r *reader) assertEmpty(from, to string) {
	r.cmps = append(r.cmps, clientv3.Compare(clientv3.CreateRevision(from), "=", 0).WithRange(to))
}

// keysUnder lists the names of the keys under prefix (the prefix stripped), unguarded.
func (s *State) keysUnder(ctx context.Context, prefix string) ([]string, error) {
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", prefix, err)
	}
	out := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Key)[len(prefix):])
	}
	return out, nil
}

// read fetches one key and records, once per key, the assertion that it is unchanged (or still
// absent) when the transaction commits.
func (r *reader) read(ctx context.Context, key string) (*mvccpb.KeyValue, error) {
	kv, ok := r.fetched[key]
	if ok {
		delete(r.fetched, key)
	} else {
		resp, err := r.s.kv.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", key, err)
		}
		if len(resp.Kvs) > 0 {
			kv = resp.Kvs[0]
		}
	}
	if !r.seen[key] {
		r.seen[key] = true
		if kv == nil {
			r.cmps = append(r.cmps, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		} else {
			r.cmps = append(r.cmps, clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision))
		}
	}
	return kv, nil
}

// get reads one document (msg may be nil to test presence only).
func (r *reader) get(ctx context.Context, key string, msg proto.Message) (bool, error) {
	kv, err := r.read(ctx, key)
	if err != nil || kv == nil {
		return false, err
	}
	if msg != nil {
		if err := unmarshal(kv, msg); err != nil {
			return false, err
		}
	}
	return true, nil
}

// getRaw is get for plain string values (indexes, sequences).
func (r *reader) getRaw(ctx context.Context, key string) (string, bool, error) {
	kv, err := r.read(ctx, key)
	if err != nil || kv == nil {
		return "", false, err
	}
	return string(kv.Value), true, nil
}

// run executes build and commits its writes in one transaction guarded by what build read,
// retrying from scratch when another writer got there first (L-G3).
func (s *State) run(ctx context.Context, what string, build buildFunc) error {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		r := &reader{s: s, seen: map[string]bool{}, seqs: map[string]int64{}}
		w, err := build(ctx, r)
		if errors.Is(err, errRetry) {
			continue // what build read had already changed: read again
		}
		if err != nil {
			return err
		}
		if w == nil || len(w.ops) == 0 {
			return nil
		}
		if w.err != nil {
			return fmt.Errorf("%s: %w", what, w.err)
		}
		for key, next := range r.seqs {
			w.putRaw(key, strconv.FormatInt(next, 10))
		}
		if !w.bulk && len(w.ops)+len(r.cmps) > maxOps {
			return fmt.Errorf("%s: transaction of %d operations is too large", what, len(w.ops)+len(r.cmps))
		}
		if w.bulk && max(len(w.ops), len(r.cmps)) > maxBulkOps {
			return apierr.Errorf(apierr.NotValid, "%s: %d operations are more than the store takes at once (%d); ask for less in one call", what, max(len(w.ops), len(r.cmps)), maxBulkOps)
		}
		limit := maxTxnBytes
		if w.bulk {
			limit = maxBulkBytes
		}
		if err := checkTxnSize(what, r.cmps, w.ops, limit); err != nil {
			return err
		}
		resp, err := s.kv.Txn(ctx).If(r.cmps...).Then(w.ops...).Commit()
		switch {
		case errors.Is(err, rpctypes.ErrTooManyOps):
			// An external etcd with a lower --max-txn-ops than store.MaxTxnOps.
			return apierr.Errorf(apierr.NotValid, "%s: the store refuses a transaction of %d operations (its --max-txn-ops is lower); ask for less in one call", what, max(len(w.ops), len(r.cmps)))
		case errors.Is(err, rpctypes.ErrRequestTooLarge):
			return apierr.Errorf(apierr.NotValid, "%s: the change is larger than the store takes at once (its --max-request-bytes)", what)
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		}
		if resp.Succeeded {
			return nil
		}
		// Lost a race: wait a random while before re-reading, growing with each loss, so a
		// crowd writing the same document (a thousand units leaving one application) spreads
		// out instead of colliding again in lockstep.
		backoff := time.Duration(rand.Int64N(int64(min(time.Millisecond<<attempt, maxBackoff))))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	return apierr.Errorf(apierr.Contention, "%s: state changing too quickly; try again soon", what)
}

// checkTxnSize refuses a transaction larger than etcd takes in one request, before it is sent:
// etcd would refuse it with "request is too large" (or the client with a gRPC size error), and
// a document is never cut to fit. The estimate counts every key and value, plus a few bytes of
// framing per operation, which is more than etcd's encoding adds.
func checkTxnSize(what string, cmps []clientv3.Cmp, ops []clientv3.Op, limit int) error {
	const framing = 16
	size := 0
	for i := range cmps {
		size += proto.Size(cmps[i].GetCompare()) + framing
	}
	var largest string
	largestSize := 0
	for _, op := range ops {
		n := len(op.KeyBytes()) + len(op.ValueBytes()) + len(op.RangeBytes()) + framing
		size += n
		if n > largestSize {
			largest, largestSize = string(op.KeyBytes()), n
		}
	}
	if size <= limit {
		return nil
	}
	msg := fmt.Sprintf("%s: the change is %s, more than the %s the store takes at once", what, mib(size), mib(limit))
	if largestSize > limit/2 {
		// One document is most of it: name it (its key without the model's prefix).
		name := largest
		if i := strings.Index(name, "/models/"); i >= 0 {
			if j := strings.Index(name[i+len("/models/"):], "/"); j >= 0 {
				name = name[i+len("/models/")+j+1:]
			}
		}
		msg += fmt.Sprintf(" (%s alone is %s)", name, mib(largestSize))
	}
	return apierr.Errorf(apierr.NotValid, "%s", msg)
}

// mib prints a size in MiB, as etcd's limits are given, rounded up: a size just over a limit
// never prints as the limit itself.
func mib(n int) string {
	return fmt.Sprintf("%.1f MiB", math.Ceil(float64(n)*10/(1<<20))/10)
}
