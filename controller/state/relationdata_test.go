package state_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

// integrated returns a model with wordpress (2 units) and mysql (1 unit) related over db.
func integrated(t *testing.T) (uuid string, relID int64) {
	t.Helper()
	uuid = newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "mysql", mysqlMeta, "")
	addUnits(t, uuid, "wordpress", 2)
	addUnits(t, uuid, "mysql", 1)
	rel, err := st.Integrate(context.Background(), uuid, spec("wordpress"), spec("mysql"))
	if err != nil {
		t.Fatal(err)
	}
	return uuid, rel.Id
}

func settingsOf(t *testing.T, uuid string, rel int64, unit string) (string, int64) {
	t.Helper()
	values, rev, err := st.UnitRelationSettings(context.Background(), uuid, rel, unit)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(values), rev
}

func TestSetRelationSettingsMergesAndSkipsNoOps_LR2(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	enter(t, uuid, rel, "wordpress/0")
	changed, err := st.SetRelationSettings(ctx, uuid, rel, "wordpress/0", map[string]string{"user": "wp", "host": "db"})
	if err != nil || !changed {
		t.Fatalf("set: %v %v", changed, err)
	}
	got, rev := settingsOf(t, uuid, rel, "wordpress/0")
	if got != "map[host:db private-address:10.0.0.1 user:wp]" {
		t.Fatalf("settings = %s", got)
	}
	// The same values again, and deleting a key that is not there: no write at all, so the
	// counterparts see no relation-changed.
	changed, err = st.SetRelationSettings(ctx, uuid, rel, "wordpress/0", map[string]string{"user": "wp", "absent": ""})
	if err != nil || changed {
		t.Fatalf("no-op set: %v %v", changed, err)
	}
	if _, again := settingsOf(t, uuid, rel, "wordpress/0"); again != rev {
		t.Fatalf("no-op set wrote: revision %d -> %d", rev, again)
	}
	// An empty value deletes.
	changed, err = st.SetRelationSettings(ctx, uuid, rel, "wordpress/0", map[string]string{"user": "", "host": "db2"})
	if err != nil || !changed {
		t.Fatalf("delete: %v %v", changed, err)
	}
	if got, next := settingsOf(t, uuid, rel, "wordpress/0"); got != "map[host:db2 private-address:10.0.0.1]" || next <= rev {
		t.Fatalf("settings = %s at %d (was %d)", got, next, rev)
	}
	audit(t, uuid)
}

func TestSetRelationSettingsNeedsScope_LR2(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	_, err := st.SetRelationSettings(ctx, uuid, rel, "wordpress/1", map[string]string{"a": "b"})
	if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), "not in the relation's scope") {
		t.Fatalf("set out of scope: %v", err)
	}
	_, err = st.SetRelationSettings(ctx, uuid, 99, "wordpress/1", map[string]string{"a": "b"})
	if !errors.Is(err, apierr.NotFound) {
		t.Fatalf("set in missing relation: %v", err)
	}
	if _, _, err := st.UnitRelationSettings(ctx, uuid, rel, "wordpress/1"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("settings of a unit that never joined: %v", err)
	}
}

// Settings stay readable after their unit departed (L-R3), until the relation's cleanup (L-R7);
// a departed unit can no longer write them.
func TestSettingsReadableAfterLeavingScope_LR3(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	enter(t, uuid, rel, "wordpress/0", "mysql/0")
	if _, err := st.SetRelationSettings(ctx, uuid, rel, "mysql/0", map[string]string{"password": "s3cret"}); err != nil {
		t.Fatal(err)
	}
	if err := st.LeaveScope(ctx, uuid, rel, "mysql/0"); err != nil {
		t.Fatal(err)
	}
	if got, _ := settingsOf(t, uuid, rel, "mysql/0"); got != "map[password:s3cret private-address:10.0.0.1]" {
		t.Fatalf("settings after leaving = %s", got)
	}
	if _, err := st.SetRelationSettings(ctx, uuid, rel, "mysql/0", map[string]string{"x": "y"}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("set after leaving: %v", err)
	}
	audit(t, uuid)
}

// members returns unit's members in relation rel as "unit@rev" strings, and the revisions.
func members(t *testing.T, uuid, unit string, rel int64) ([]string, map[string]int64) {
	t.Helper()
	rels, err := st.UnitRelations(context.Background(), uuid, unit, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ur := range rels {
		if ur.Relation.Id != rel {
			continue
		}
		var out []string
		revs := map[string]int64{}
		for _, m := range ur.Members {
			out = append(out, m.Unit)
			revs[m.Unit] = m.SettingsRevision
		}
		return out, revs
	}
	t.Fatalf("unit %s: relation %d not listed", unit, rel)
	return nil, nil
}

// Providers observe requirers and requirers providers (L-R2), with the revision of each
// counterpart's settings.
func TestMembersProviderRequirer_LR2(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	enter(t, uuid, rel, "wordpress/0", "mysql/0")
	if got, _ := members(t, uuid, "wordpress/0", rel); fmt.Sprint(got) != "[mysql/0]" {
		t.Fatalf("wordpress/0 members = %v", got)
	}
	if got, _ := members(t, uuid, "wordpress/1", rel); got != nil {
		t.Fatalf("members of a unit not in scope = %v", got)
	}
	enter(t, uuid, rel, "wordpress/1")
	got, revs := members(t, uuid, "mysql/0", rel)
	if fmt.Sprint(got) != "[wordpress/0 wordpress/1]" {
		t.Fatalf("mysql/0 members = %v", got)
	}
	if _, rev := settingsOf(t, uuid, rel, "wordpress/1"); revs["wordpress/1"] != rev || rev == 0 {
		t.Fatalf("member revision %d, settings revision %d", revs["wordpress/1"], rev)
	}
	if _, err := st.SetRelationSettings(ctx, uuid, rel, "wordpress/1", map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	_, after := members(t, uuid, "mysql/0", rel)
	if after["wordpress/1"] <= revs["wordpress/1"] || after["wordpress/0"] != revs["wordpress/0"] {
		t.Fatalf("revisions before %v, after %v", revs, after)
	}
	if err := st.LeaveScope(ctx, uuid, rel, "wordpress/0"); err != nil {
		t.Fatal(err)
	}
	if got, _ := members(t, uuid, "mysql/0", rel); fmt.Sprint(got) != "[wordpress/1]" {
		t.Fatalf("mysql/0 members after a departure = %v", got)
	}
}

// Peers observe each other, never themselves (L-R2).
func TestMembersPeers_LR2(t *testing.T) {
	uuid, _ := integrated(t)
	snap, err := st.Snapshot(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	var peer int64 = -1
	for _, r := range snap.Relations {
		if r.Key == "wordpress:cluster" {
			peer = r.Id
		}
	}
	enter(t, uuid, peer, "wordpress/0")
	if got, _ := members(t, uuid, "wordpress/0", peer); got != nil {
		t.Fatalf("alone in a peer relation, members = %v", got)
	}
	enter(t, uuid, peer, "wordpress/1")
	if got, _ := members(t, uuid, "wordpress/0", peer); fmt.Sprint(got) != "[wordpress/1]" {
		t.Fatalf("wordpress/0 members = %v", got)
	}
	if got, _ := members(t, uuid, "wordpress/1", peer); fmt.Sprint(got) != "[wordpress/0]" {
		t.Fatalf("wordpress/1 members = %v", got)
	}
}

// In a container-scoped relation a unit observes only the units beside it: a principal its own
// subordinate, a subordinate its own principal.
func TestMembersContainerScope_LR2_LD6(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	deploy(t, uuid, "logging", loggingMeta, "")
	addUnits(t, uuid, "wordpress", 2)
	rel, err := st.Integrate(ctx, uuid, spec("logging"), spec("wordpress"))
	if err != nil {
		t.Fatal(err)
	}
	subs := map[string]string{}
	for _, p := range []string{"wordpress/0", "wordpress/1"} {
		sub, err := st.EnterScope(ctx, uuid, rel.Id, p, map[string]string{"private-address": "10.0.0.1"})
		if err != nil || sub == "" {
			t.Fatalf("enter %s: %q %v", p, sub, err)
		}
		subs[p] = sub
	}
	if got, _ := members(t, uuid, "wordpress/0", rel.Id); got != nil {
		t.Fatalf("members before the subordinate joined = %v", got)
	}
	enter(t, uuid, rel.Id, subs["wordpress/0"], subs["wordpress/1"])
	if got, _ := members(t, uuid, "wordpress/0", rel.Id); fmt.Sprint(got) != "["+subs["wordpress/0"]+"]" {
		t.Fatalf("wordpress/0 members = %v", got)
	}
	if got, _ := members(t, uuid, subs["wordpress/1"], rel.Id); fmt.Sprint(got) != "[wordpress/1]" {
		t.Fatalf("%s members = %v", subs["wordpress/1"], got)
	}
	audit(t, uuid)
}

// A thousand units in one relation: listing a unit's members is a couple of range reads.
func TestMembersScaleWithRangeReads(t *testing.T) {
	if testing.Short() {
		t.Skip("many units")
	}
	ctx := context.Background()
	uuid, rel := integrated(t)
	enter(t, uuid, rel, "mysql/0")
	// Scope records and settings written directly: the point is the read, not 1,000 joins.
	kv := st.Client()
	for i := 0; i < 1000; i++ {
		unit := fmt.Sprintf("wordpress/%d", i+10)
		if _, err := kv.Put(ctx, state.ModelPrefix(uuid)+fmt.Sprintf("scopes/%d/%s", rel, unit), ""); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, state.ModelPrefix(uuid)+fmt.Sprintf("settings/%d/%s", rel, unit), ""); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	got, revs := members(t, uuid, "mysql/0", rel)
	if len(got) != 1000 || got[0] != "wordpress/10" || got[999] != "wordpress/1009" || revs["wordpress/500"] == 0 {
		t.Fatalf("members: %d, first %s, last %s", len(got), got[0], got[len(got)-1])
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("listing 1,000 members took %v", d)
	}
}

// Watch keys: relation 1 is not relation 12, machine 1 not machine 12, unit mysql/1 not
// mysql/12, application mysql not mysql2; each event names its kind and id.
func TestWatchKindsMatchOnlyTheirOwnKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	p := state.ModelPrefix(uuid)
	hub := st.NewHub(ctx)
	tests := []struct {
		kind, id    string
		other, mine string // keys written, the other one first
	}{
		{state.KindScope, "1", "scopes/12/mysql/0", "scopes/1/mysql/0"},
		{state.KindSettings, "1", "settings/12/mysql/0", "settings/1/mysql/0"},
		{state.KindLeadership, "mysql", "leases/mysql2", "leases/mysql"},
		{state.KindLeaderSettings, "mysql", "leadersettings/mysql2", "leadersettings/mysql"},
		{state.KindRelation, "1", "relations/12", "relations/1"},
		{state.KindMachine, "1", "machines/12", "machines/1"},
		{state.KindUnit, "mysql/1", "units/mysql/12", "units/mysql/1"},
		{state.KindApplication, "mysql", "applications/mysql2", "applications/mysql"},
		{state.KindMachineUnits, "1", "machineunits/12/mysql/0", "machineunits/1/mysql/0"},
	}
	for _, tt := range tests {
		key, err := state.KeyPrefix(uuid, tt.kind, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		events, err := hub.Subscribe(ctx, uuid, []state.WatchKey{{Key: key}})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{tt.other, tt.mine} {
			if _, err := st.Client().Put(ctx, p+k, "x"); err != nil {
				t.Fatal(err)
			}
		}
		wantID := tt.id
		if tt.kind == state.KindMachineUnits {
			wantID = "mysql/0" // the index event names the unit
		}
		ev, ok := firstEvent(events)
		if !ok {
			t.Fatalf("watching %s %q: no event", tt.kind, tt.id)
		}
		if ev.Kind != tt.kind || ev.ID != wantID {
			t.Errorf("watching %s %q: first event %+v", tt.kind, tt.id, ev)
		}
	}
	for _, bad := range []struct{ kind, id string }{
		{state.KindScope, ""}, {state.KindScope, "x"}, {state.KindSettings, "-1"}, {state.KindLeadership, ""},
		{state.KindLeadership, "Bad"}, {state.KindUnit, "mysql/0/"}, {state.KindRelation, "1/"},
	} {
		if _, err := state.KeyPrefix(uuid, bad.kind, bad.id); !errors.Is(err, apierr.NotValid) {
			t.Errorf("KeyPrefix(%s, %q) = %v", bad.kind, bad.id, err)
		}
	}
}
