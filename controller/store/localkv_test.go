package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
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
