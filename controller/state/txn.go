package state

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
)

// maxAttempts bounds retries of a transaction that loses a race (L-G3); maxBackoff bounds the
// random wait before each retry.
const (
	maxAttempts = 16
	maxBackoff  = 200 * time.Millisecond
)

// maxOps keeps every transaction well under etcd's 128 operations (L-G4).
const maxOps = 100

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
		if len(w.ops)+len(r.cmps) > maxOps {
			return fmt.Errorf("%s: transaction of %d operations is too large", what, len(w.ops)+len(r.cmps))
		}
		resp, err := s.kv.Txn(ctx).If(r.cmps...).Then(w.ops...).Commit()
		if err != nil {
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
