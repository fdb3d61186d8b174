package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/state"
)

// A status read while nothing changed is answered from the snapshot the last one read; any
// write to the store makes the next one read the model again.
func TestSharedSnapshotIsReadAgainOnlyAfterAChange(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	first, err := st.SharedSnapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	again, err := st.SharedSnapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("unchanged store: a new snapshot (revision %d, first %d)", again.Revision, first.Revision)
	}
	enter(t, uuid, rel, "wordpress/0")
	changed, err := st.SharedSnapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if changed == first || changed.Revision <= first.Revision {
		t.Fatalf("after a write: snapshot at revision %d, first at %d", changed.Revision, first.Revision)
	}
	if got := changed.Blockers().ScopeUnits[rel]; len(got) != 1 || got[0] != "wordpress/0" {
		t.Fatalf("after wordpress/0 entered relation %d: in scope %v", rel, got)
	}
	fresh, err := st.Snapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Revision != changed.Revision || len(fresh.Units) != len(changed.Units) {
		t.Fatalf("shared snapshot at %d with %d units, a fresh read at %d with %d", changed.Revision, len(changed.Units), fresh.Revision, len(fresh.Units))
	}
}

// A shared snapshot is let go once unused for a while: an idle controller does not hold a
// large model twice.
func TestSharedSnapshotIsDroppedWhenUnused(t *testing.T) {
	state.LowerSharedKeep(t, 50*time.Millisecond)
	ctx := context.Background()
	uuid, _ := integrated(t)
	first, err := st.SharedSnapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); st.SharedSnapshotKept(uuid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shared snapshot is still kept a minute after its last use")
		}
	}
	next, err := st.SharedSnapshot(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if next == first {
		t.Fatal("a dropped snapshot was returned again")
	}
}
