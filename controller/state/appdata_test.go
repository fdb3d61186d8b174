package state_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

// Application relation data: only the leader writes its side; a write shows as a new revision
// of the other application's settings to the units on the other side (their relation-changed),
// and the data goes with the relation's settings (L-R7).
func TestApplicationRelationSettingsLeaderOnly_LR7(t *testing.T) {
	ctx := context.Background()
	uuid, rel := integrated(t)
	values := map[string]string{"dbkey": "dbvalue"}
	if _, err := st.SetApplicationRelationSettings(ctx, uuid, rel, "mysql/0", values); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("set with no leader: %v", err)
	}
	claim(t, uuid, "mysql/0", true, "mysql/0")
	changed, err := st.SetApplicationRelationSettings(ctx, uuid, rel, "mysql/0", values)
	if err != nil || !changed {
		t.Fatalf("leader set: %v %v", changed, err)
	}
	got, rev, err := st.ApplicationRelationSettings(ctx, uuid, rel, "mysql")
	if err != nil || fmt.Sprint(got) != "map[dbkey:dbvalue]" || rev == 0 {
		t.Fatalf("read: %v %d %v", got, rev, err)
	}
	if changed, err := st.SetApplicationRelationSettings(ctx, uuid, rel, "mysql/0", values); err != nil || changed {
		t.Fatalf("no-op set: %v %v", changed, err)
	}
	// The other side never wrote: empty, revision 0.
	if got, rev, err := st.ApplicationRelationSettings(ctx, uuid, rel, "wordpress"); err != nil || len(got) != 0 || rev != 0 {
		t.Fatalf("unwritten side: %v %d %v", got, rev, err)
	}

	// wordpress/0 in scope sees mysql's data revision with its relation.
	enter(t, uuid, rel, "wordpress/0", "mysql/0")
	rels, err := st.UnitRelations(ctx, uuid, "wordpress/0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var db state.UnitRelation
	for _, r := range rels {
		if r.Relation.Id == rel {
			db = r
		}
	}
	if db.RemoteAppSettingsRevision != rev {
		t.Fatalf("unit relation: %+v (want app settings revision %d)", db, rev)
	}
	// Application data is not a unit: it never shows as a member.
	for _, m := range db.Members {
		if m.Unit == "mysql" {
			t.Fatalf("application data listed as member: %+v", db.Members)
		}
	}

	// Gone with the relation's settings once the relation is removed and cleaned up.
	if _, err := st.DestroyRelation(ctx, uuid, rel, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetApplicationRelationSettings(ctx, uuid, rel, "mysql/0", map[string]string{"x": "1"}); err == nil {
		t.Fatal("set on a dying relation succeeded")
	}
	for _, u := range []string{"wordpress/0", "mysql/0"} {
		if err := st.LeaveScope(ctx, uuid, rel, u); err != nil {
			t.Fatal(err)
		}
	}
	cleanups, err := st.Cleanups(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cleanups {
		if err := st.RunCleanup(ctx, uuid, c); err != nil {
			t.Fatal(err)
		}
	}
	if got, rev, err := st.ApplicationRelationSettings(ctx, uuid, rel, "mysql"); err != nil || len(got) != 0 || rev != 0 {
		t.Fatalf("after cleanup: %v %d %v", got, rev, err)
	}
}

func TestCharmStateGoesWithTheUnit(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	deploy(t, uuid, "wordpress", wordpressMeta, "")
	units := addUnits(t, uuid, "wordpress", 1)
	if err := st.SetCharmState(ctx, uuid, units[0], map[string]string{"a": "1", "b": "2"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetCharmState(ctx, uuid, units[0], map[string]string{"b": ""}); err != nil {
		t.Fatal(err)
	}
	got, err := st.CharmState(ctx, uuid, units[0])
	if err != nil || fmt.Sprint(got) != "map[a:1]" {
		t.Fatalf("state: %v %v", got, err)
	}
	big := map[string]string{"x": string(make([]byte, 600<<10))}
	if err := st.SetCharmState(ctx, uuid, units[0], big); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("oversized state: %v", err)
	}
	if err := st.SetCharmState(ctx, uuid, "wordpress/9", map[string]string{"a": "1"}); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("state of a unit that does not exist: %v", err)
	}
	if _, err := st.DestroyUnit(ctx, uuid, units[0], state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureUnitDead(ctx, uuid, units[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveUnit(ctx, uuid, units[0]); err != nil {
		t.Fatal(err)
	}
	if got, err := st.CharmState(ctx, uuid, units[0]); err != nil || len(got) != 0 {
		t.Fatalf("state after removal: %v %v", got, err)
	}
}

func TestGoalState(t *testing.T) {
	ctx := context.Background()
	uuid, _ := integrated(t)
	gs, err := st.GoalState(ctx, uuid, "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	if len(gs.Units) != 2 || gs.Units["wordpress/0"].Status != "waiting" {
		t.Fatalf("units: %+v", gs.Units)
	}
	db := gs.Relations["db"]
	if db["mysql"].Status != "joined" || db["mysql/0"].Status != "waiting" {
		t.Fatalf("relations: %+v", gs.Relations)
	}
	if _, err := st.DestroyUnit(ctx, uuid, "wordpress/1", state.DestroyOptions{}); err != nil {
		t.Fatal(err)
	}
	if gs, err = st.GoalState(ctx, uuid, "wordpress"); err != nil {
		t.Fatal(err)
	}
	if u, ok := gs.Units["wordpress/1"]; ok && u.Status != "dying" {
		t.Fatalf("removed unit: %+v", gs.Units)
	}
}

func TestAddModelWithConfig(t *testing.T) {
	ctx := context.Background()
	m, err := st.AddModelWithConfig(ctx, "cfg-ok", "admin", "", "localhost", "localhost", map[string]string{"update-status-hook-interval": "2s"})
	if err != nil || m.Config["update-status-hook-interval"] != "2s" {
		t.Fatalf("add: %v %v", m, err)
	}
	if _, err := st.AddModelWithConfig(ctx, "cfg-bad", "admin", "", "localhost", "localhost", map[string]string{"update-status-hook-interval": "0s"}); !errors.Is(err, apierr.NotValid) {
		t.Fatalf("bad interval: %v", err)
	}
	if _, err := st.Model(ctx, "cfg-bad"); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("refused model was written: %v", err)
	}
	deploy(t, m.Uuid, "wordpress", wordpressMeta, "")
	app, err := st.ReadAgentApplication(ctx, m.Uuid, "wordpress")
	if err != nil || app.ModelName != "cfg-ok" || app.ModelConfig["update-status-hook-interval"] != "2s" {
		t.Fatalf("agent application: %+v %v", app, err)
	}
}
