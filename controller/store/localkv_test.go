package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A read refused for any unavailability (an election, a leader changing) is made again, as
// clientv3 retries it over a connection; a write only when the member had no leader (it never
// reached the log), never after a timeout (it may have).
func TestLocalKVRetriesAsTheClientWould(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	failing := func(err error, times int) (func() (int, error), *int) {
		calls := 0
		return func() (int, error) {
			calls++
			if calls <= times {
				return 0, err
			}
			return 42, nil
		}, &calls
	}
	for _, tt := range []struct {
		name      string
		read      bool
		err       error
		wantCalls int
		wantErr   bool
	}{
		{"read, leader changed", true, rpctypes.ErrGRPCLeaderChanged, 3, false},
		{"read, no leader", true, rpctypes.ErrGRPCNoLeader, 3, false},
		{"write, no leader", false, rpctypes.ErrGRPCNoLeader, 3, false},
		{"write, leader changed", false, rpctypes.ErrGRPCLeaderChanged, 1, true},
		{"write, timed out", false, rpctypes.ErrGRPCTimeout, 1, true},
		{"read, compacted", true, rpctypes.ErrGRPCCompacted, 1, true},
	} {
		call, calls := failing(tt.err, 2)
		got, err := retryLocal(ctx, tt.read, call)
		if *calls != tt.wantCalls || (err != nil) != tt.wantErr || (err == nil && got != 42) {
			t.Errorf("%s: %d calls, %v, %v; want %d calls, error %v", tt.name, *calls, got, err, tt.wantCalls, tt.wantErr)
		}
		if tt.wantErr && !errors.Is(err, tt.err) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.err)
		}
	}
	// An unavailable member that never comes back: the caller's deadline ends the retries.
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	call, _ := failing(rpctypes.ErrGRPCNoLeader, 1<<30)
	if _, err := retryLocal(short, true, call); !errors.Is(err, rpctypes.ErrGRPCNoLeader) {
		t.Errorf("retries past the deadline ended with %v", err)
	}
}

// A read with a limit answers its keys in order and More, linearizable or serializable, as
// etcd's gRPC server does, without counting the range (localKV.rangeUncounted).
func TestLocalKVLimitedReads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"/p/a", "/p/b", "/p/c", "/q/a"} {
		if _, err := s.Client.Put(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	put, err := s.Client.Put(ctx, "/p/d", "v")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []context.Context{ctx, WithSerializableReads(ctx)} {
		resp, err := s.Client.Get(c, "/p/", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(2))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 2 || string(resp.Kvs[0].Key) != "/p/a" || string(resp.Kvs[1].Key) != "/p/b" || !resp.More ||
			resp.Kvs[0].Value != nil || resp.Header.Revision != put.Header.Revision {
			t.Errorf("limited read: %v more=%v rev=%d (want /p/a, /p/b, more, at %d)", resp.Kvs, resp.More, resp.Header.Revision, put.Header.Revision)
		}
		last, err := s.Client.Get(c, "/p/c", clientv3.WithRange("/p/e"), clientv3.WithLimit(2))
		if err != nil {
			t.Fatal(err)
		}
		if len(last.Kvs) != 2 || last.More || string(last.Kvs[1].Value) != "v" {
			t.Errorf("the last page: %v more=%v", last.Kvs, last.More)
		}
		none, err := s.Client.Get(c, "/r/", clientv3.WithPrefix(), clientv3.WithLimit(1))
		if err != nil || len(none.Kvs) != 0 || none.More {
			t.Errorf("an empty range: %v %v", none, err)
		}
	}
	// A counted read is still counted.
	count, err := s.Client.Get(ctx, "/p/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || count.Count != 4 {
		t.Errorf("count of /p/: %v %v", count, err)
	}
}
