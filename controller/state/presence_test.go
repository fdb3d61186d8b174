package state_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/state"
)

// A member's presence records: written in transactions of bounded size (more writes than one
// transaction may hold), read back in one range read, watched, and gone with the member's lease.
// They live outside the model's prefix: the model's snapshot never sees them.
func TestPresenceRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	lease, err := st.GrantPresenceLease(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var writes []state.PresenceWrite
	for i := range 250 {
		writes = append(writes, state.PresenceWrite{Model: uuid, Kind: state.KindUnit, ID: fmt.Sprintf("app/%d", i), Present: true})
	}
	writes = append(writes, state.PresenceWrite{Model: uuid, Kind: state.KindMachine, ID: "0/lxd/1", Present: true})
	if n, err := st.WritePresence(ctx, "7", lease, 5*time.Second, writes); err != nil || n != len(writes) {
		t.Fatalf("writing %d records: %d, %v", len(writes), n, err)
	}
	records, rev, err := st.Presence(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(writes) || !slices.Contains(records, state.PresenceRecord{Kind: state.KindMachine, ID: "0/lxd/1", Member: "7"}) ||
		!slices.Contains(records, state.PresenceRecord{Kind: state.KindUnit, ID: "app/249", Member: "7"}) {
		t.Fatalf("read %d records: %v", len(records), records[:min(len(records), 3)])
	}
	snap, err := st.Snapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Units) != 0 || len(snap.Machines) != 0 {
		t.Fatalf("the model's snapshot sees presence records: %d units, %d machines", len(snap.Units), len(snap.Machines))
	}

	// Another member's record of one agent, then a withdrawal and the lease's end.
	events := st.WatchPresence(ctx, uuid, rev+1)
	if _, err := st.WritePresence(ctx, "8", lease, 5*time.Second, []state.PresenceWrite{
		{Model: uuid, Kind: state.KindUnit, ID: "app/0", Present: true},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.WritePresence(ctx, "7", lease, 5*time.Second, []state.PresenceWrite{
		{Model: uuid, Kind: state.KindUnit, ID: "app/1"},
	}); err != nil {
		t.Fatal(err)
	}
	next := func() []state.PresenceEvent {
		t.Helper()
		select {
		case batch := <-events:
			return batch
		case <-ctx.Done():
			t.Fatal("no presence event")
			return nil
		}
	}
	var got []state.PresenceEvent
	for len(got) < 2 {
		got = append(got, next()...) // one batch or two
	}
	if len(got) != 2 || !got[0].Created || got[0].PresenceRecord != (state.PresenceRecord{Kind: state.KindUnit, ID: "app/0", Member: "8"}) ||
		!got[1].Removed || got[1].PresenceRecord != (state.PresenceRecord{Kind: state.KindUnit, ID: "app/1", Member: "7"}) {
		t.Fatalf("another member's record, then one withdrawn: %+v", got)
	}
	if _, err := st.Client().Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	for removed := 0; removed < len(writes); {
		for _, ev := range next() {
			if !ev.Removed {
				t.Fatalf("the lease's end: %+v", ev)
			}
			removed++
		}
	}
	if records, _, err := st.Presence(ctx, uuid); err != nil || len(records) != 0 {
		t.Fatalf("after the lease's end: %v, %v", records, err)
	}
	if _, err := st.WritePresence(ctx, "a/b", lease, time.Second, writes[:1]); err == nil {
		t.Fatal("a member id with a slash was taken")
	}
}
