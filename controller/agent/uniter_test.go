package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
)

// drive runs nextStep to the end the way the agent does, applying scope changes to the
// snapshot as the store would, and returns the hooks and scope moves in order.
func drive(t *testing.T, st *uniterState, s *snapshot) []string {
	t.Helper()
	var got []string
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatalf("no end to steps: %v", got)
		}
		next := nextStep(st, s)
		switch {
		case next == nil:
			return got
		case next.hook != nil:
			name := next.hook.Name()
			if next.hook.RemoteUnit != "" {
				name += " " + next.hook.RemoteUnit
			}
			got = append(got, name)
			st.commit(next.hook)
		case next.enter != nil:
			got = append(got, "enter "+next.enter.Key)
			next.enter.InScope = true
			st.Relations[next.enter.Id] = newRelationState(next.enter)
		case next.leave:
			got = append(got, "leave")
			s.relation(next.id).InScope = false
			delete(st.Relations, next.id)
		case next.forget:
			got = append(got, "forget")
			delete(st.Relations, next.id)
		case next.upgrade != "":
			// What unitAgent.upgradeCharm does: swap, record, report.
			got = append(got, "upgrade "+next.upgrade)
			st.CharmURL, st.UpgradeCharm = next.upgrade, true
			st.CharmModifiedVersion = s.app.GetCharmModifiedVersion()
			s.unit.CharmUrl = next.upgrade
		}
	}
}

func fresh() *uniterState { return &uniterState{Relations: map[int64]*relationState{}} }

func unitSnapshot(lifeValue string, rels ...*pb.AgentRelation) *snapshot {
	return &snapshot{
		unit: &pb.AgentUnit{Name: "wordpress/0", Life: lifeValue},
		app:  &pb.AgentApplication{Name: "wordpress", Life: "alive", ConfigJson: `{"port":80}`},
		rels: rels,
	}
}

func dbRelation(members ...*pb.RelationMember) *pb.AgentRelation {
	return &pb.AgentRelation{Id: 0, Key: "wordpress:db mysql:db", Life: "alive", Endpoint: "db",
		RemoteApplication: "mysql", RemoteEndpoint: "db", ShouldJoin: true, Members: members}
}

func expectSteps(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("steps:\n got  %s\n want %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

func TestStartHooksInOrder(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	s.leader = true
	expectSteps(t, drive(t, st, s), "install", "leader-elected", "config-changed", "start")
	// Nothing more until something changes; a config change runs config-changed again.
	expectSteps(t, drive(t, st, s))
	s.app.ConfigJson = `{"port":8080}`
	expectSteps(t, drive(t, st, s), "config-changed")
	s.app.LeaderSettingsRevision = 9
	expectSteps(t, drive(t, st, s)) // the leader sets them; it gets no leader-settings-changed
	s.leader = false
	expectSteps(t, drive(t, st, s), "leader-settings-changed")
}

// Trust is Juju's application config: a change of it runs config-changed, as a change of the
// charm's config does; the same trust again runs nothing, and neither does a dying unit.
func TestTrustChangeRunsConfigChanged(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	s.app.Trust = true // deploy --trust: the first config-changed sees it
	expectSteps(t, drive(t, st, s), "install", "config-changed", "start")
	if !st.Trust {
		t.Fatal("the record does not hold the trust config-changed saw")
	}
	expectSteps(t, drive(t, st, s))
	s.app.Trust = false
	expectSteps(t, drive(t, st, s), "config-changed")
	expectSteps(t, drive(t, st, s))
	s.app.Trust = true
	expectSteps(t, drive(t, st, s), "config-changed")
	// A record from before trust counted (false) sees an untrusted application unchanged.
	st = fresh()
	s = unitSnapshot("alive")
	drive(t, st, s)
	if st.Trust {
		t.Fatal("untrusted application recorded as trusted")
	}
	s.unit.Life = "dying"
	s.app.Trust = true
	expectSteps(t, drive(t, st, s), "stop", "remove")
}

// Seed 004 and L-R2: joined then changed for each counterpart; changed again when its settings
// change; departed when it leaves.
func TestRelationJoinedChangedDeparted_LR2(t *testing.T) {
	st := fresh()
	rel := dbRelation()
	s := unitSnapshot("alive", rel)
	expectSteps(t, drive(t, st, s), "enter wordpress:db mysql:db", "install", "db-relation-created", "config-changed", "start")
	rel.Members = []*pb.RelationMember{{Unit: "mysql/0", SettingsRevision: 10}, {Unit: "mysql/1", SettingsRevision: 11}}
	expectSteps(t, drive(t, st, s),
		"db-relation-joined mysql/0", "db-relation-changed mysql/0",
		"db-relation-joined mysql/1", "db-relation-changed mysql/1")
	rel.Members[1].SettingsRevision = 20
	expectSteps(t, drive(t, st, s), "db-relation-changed mysql/1")
	rel.Members = rel.Members[1:]
	expectSteps(t, drive(t, st, s), "db-relation-departed mysql/0")
}

// L-R3: a dying relation: departed for every known counterpart, then broken, then leave.
func TestRelationDyingDepartsThenBreaks_LR3(t *testing.T) {
	st := fresh()
	rel := dbRelation(&pb.RelationMember{Unit: "mysql/0", SettingsRevision: 10}, &pb.RelationMember{Unit: "mysql/1", SettingsRevision: 11})
	s := unitSnapshot("alive", rel)
	drive(t, st, s)
	drive(t, st, s)
	rel.Life = "dying"
	expectSteps(t, drive(t, st, s),
		"db-relation-departed mysql/0", "db-relation-departed mysql/1", "db-relation-broken", "leave")
}

// L-U2: a dying unit departs every relation, then stop and remove run.
func TestDyingUnitDepartsThenStops_LU2(t *testing.T) {
	st := fresh()
	rel := dbRelation(&pb.RelationMember{Unit: "mysql/0", SettingsRevision: 10})
	s := unitSnapshot("alive", rel)
	drive(t, st, s)
	drive(t, st, s)
	s.unit.Life = "dying"
	expectSteps(t, drive(t, st, s), "db-relation-departed mysql/0", "db-relation-broken", "leave", "stop", "remove")
}

// A relation whose scope record went without the agent (forced removal) still gets departed
// and broken: both always fire, however the relation ends (seed 004).
func TestForcedScopeLossStillRunsBroken(t *testing.T) {
	st := fresh()
	rel := dbRelation(&pb.RelationMember{Unit: "mysql/0", SettingsRevision: 10})
	s := unitSnapshot("alive", rel)
	drive(t, st, s)
	drive(t, st, s)
	s.rels = nil
	expectSteps(t, drive(t, st, s), "db-relation-departed mysql/0", "db-relation-broken", "forget")
}

func TestNeverInstalledDyingUnitRunsNoHooks(t *testing.T) {
	st := fresh()
	expectSteps(t, drive(t, st, unitSnapshot("dying")))
}

// relation-list in a hook counts the joining unit in and the departing one out.
func TestKnownUnitsDuringHooks(t *testing.T) {
	st := fresh()
	st.Relations[3] = &relationState{Endpoint: "db", Members: map[string]int64{"mysql/0": 5, "mysql/10": 0}}
	joined := &hookSpec{Kind: hookJoined, RelationID: 3, Endpoint: "db", RemoteUnit: "mysql/2"}
	if got := st.knownUnits(3, joined, unitSnapshot("alive")); !slices.Equal(got, []string{"mysql/0", "mysql/2", "mysql/10"}) {
		t.Fatalf("joined: %v", got)
	}
	departed := &hookSpec{Kind: hookDeparted, RelationID: 3, Endpoint: "db", RemoteUnit: "mysql/0"}
	if got := st.knownUnits(3, departed, unitSnapshot("alive")); !slices.Equal(got, []string{"mysql/10"}) {
		t.Fatalf("departed: %v", got)
	}
}

// A relation the charm has no hooks for costs no steps: the unit enters and leaves its scope,
// and relation-list reads its counterparts from the snapshot.
func TestPassiveRelationNeedsNoSteps(t *testing.T) {
	st := fresh()
	rel := dbRelation(&pb.RelationMember{Unit: "mysql/0", SettingsRevision: 10})
	s := unitSnapshot("alive", rel)
	s.hooks = map[string]bool{"install": true}
	expectSteps(t, drive(t, st, s), "enter wordpress:db mysql:db", "install", "config-changed", "start")
	expectSteps(t, drive(t, st, s))
	if got := st.knownUnits(0, nil, s); !slices.Equal(got, []string{"mysql/0"}) {
		t.Fatalf("relation-list: %v", got)
	}
	s.unit.Life = "dying"
	expectSteps(t, drive(t, st, s), "leave", "stop", "remove")
}

func TestHookFailureMessage(t *testing.T) {
	h := &hookSpec{Kind: hookChanged, RelationID: 3, Endpoint: "db", RemoteApp: "mysql", RemoteEndpoint: "db"}
	if got := h.failure(); got != `hook failed: "db-relation-changed" for mysql:db` {
		t.Fatal(got)
	}
	if got := (&hookSpec{Kind: hookInstall}).failure(); got != `hook failed: "install"` {
		t.Fatal(got)
	}
}

// Juju 3.6's order at install: the unit is in the relations there are then (a peer relation
// always is) from its first hook; relation-created runs for each after install, before
// leader-elected, config-changed and start.
func TestRelationCreatedBeforeLeaderElectedAtInstall(t *testing.T) {
	st := fresh()
	peer := &pb.AgentRelation{Id: 1, Key: "wordpress:cluster", Life: "alive", Endpoint: "cluster",
		RemoteApplication: "wordpress", RemoteEndpoint: "cluster", ShouldJoin: true}
	s := unitSnapshot("alive", peer)
	s.leader = true
	expectSteps(t, drive(t, st, s),
		"enter wordpress:cluster", "install", "cluster-relation-created", "leader-elected", "config-changed", "start")
}

// A relation made after start: relation-created first, then joined and changed per unit; the
// other application's data changing is relation-changed with no remote unit.
func TestRelationCreatedThenJoinedAfterStart(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	expectSteps(t, drive(t, st, s), "install", "config-changed", "start")
	rel := dbRelation()
	s.rels = []*pb.AgentRelation{rel}
	expectSteps(t, drive(t, st, s), "enter wordpress:db mysql:db", "db-relation-created")
	rel.RemoteAppSettingsRevision = 7
	rel.Members = []*pb.RelationMember{{Unit: "mysql/0", SettingsRevision: 10}}
	expectSteps(t, drive(t, st, s), "db-relation-joined mysql/0", "db-relation-changed mysql/0", "db-relation-changed")
	expectSteps(t, drive(t, st, s))
	rel.RemoteAppSettingsRevision = 9
	expectSteps(t, drive(t, st, s), "db-relation-changed")
}

// JUJU_DEPARTING_UNIT names the remote unit when it leaves, this unit when it is the one
// leaving.
func TestDepartingUnit(t *testing.T) {
	a := &unitAgent{conf: Conf{ID: "wordpress/0", Model: "uuid", Address: "127.1.0.3", Zone: "host"}, dir: t.TempDir()}
	snap := unitSnapshot("alive")
	snap.unit.Machine = "4"
	snap.app.ModelName = "default"
	env := func(h *hookSpec) map[string]string {
		out := map[string]string{}
		for _, kv := range a.hookEnv(h, "ctx", snap) {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
		return out
	}
	h := &hookSpec{Kind: hookDeparted, RelationID: 2, Endpoint: "db", RemoteApp: "mysql", RemoteUnit: "mysql/1"}
	if got := env(h); got["JUJU_DEPARTING_UNIT"] != "mysql/1" || got["JUJU_REMOTE_UNIT"] != "mysql/1" || got["JUJU_RELATION_ID"] != "db:2" {
		t.Fatalf("remote departs: %v", got)
	}
	h.SelfDeparting = true
	if got := env(h); got["JUJU_DEPARTING_UNIT"] != "wordpress/0" {
		t.Fatalf("unit departs: %v", got)
	}
	got := env(&hookSpec{Kind: hookInstall})
	for k, v := range map[string]string{
		"JUJU_VERSION": JujuVersion, "JUJU_DISPATCH_PATH": "hooks/install", "JUJU_HOOK_NAME": "install",
		"JUJU_MODEL_NAME": "default", "JUJU_MODEL_UUID": "uuid", "JUJU_MACHINE_ID": "4", "JUJU_UNIT_NAME": "wordpress/0",
		"JUJU_AVAILABILITY_ZONE": "host", "JUJU_CONTEXT_ID": "ctx",
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["JUJU_DEPARTING_UNIT"]; ok {
		t.Errorf("JUJU_DEPARTING_UNIT outside -departed")
	}
}

// juju refresh: an installed, alive unit whose application has a new charm puts it in place,
// then runs upgrade-charm and, as Juju does, config-changed after it (the config unchanged).
func TestUpgradeCharmThenConfigChanged(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	s.app.CharmUrl, s.unit.CharmUrl, st.CharmURL = "local:wordpress-1", "local:wordpress-1", "local:wordpress-1"
	expectSteps(t, drive(t, st, s), "install", "config-changed", "start")
	s.app.CharmUrl = "local:wordpress-2"
	expectSteps(t, drive(t, st, s), "upgrade local:wordpress-2", "upgrade-charm", "config-changed")
	expectSteps(t, drive(t, st, s))
	if st.CharmURL != "local:wordpress-2" || st.UpgradeCharm {
		t.Errorf("record: charm %q, upgrade-charm owed %v", st.CharmURL, st.UpgradeCharm)
	}
}

// A record from before upgrades (no charm URL) goes by the unit's charm in the store; a swap
// not yet reported to the controller is reported before the hook runs.
func TestUpgradeCharmRecordAndReport(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	s.app.CharmUrl, s.unit.CharmUrl = "local:wordpress-1", "local:wordpress-1"
	expectSteps(t, drive(t, st, s), "install", "config-changed", "start")
	// Swapped and recorded, then the agent stopped before telling the controller.
	st.CharmURL, st.UpgradeCharm = "local:wordpress-2", true
	s.app.CharmUrl = "local:wordpress-2"
	expectSteps(t, drive(t, st, s), "upgrade local:wordpress-2", "upgrade-charm", "config-changed")
}

// Not before install (install runs first, with the charm the unit has), never while dying.
func TestUpgradeCharmOnlyInstalledAndAlive_LU2(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	s.app.CharmUrl, s.unit.CharmUrl, st.CharmURL = "local:wordpress-2", "local:wordpress-1", "local:wordpress-1"
	expectSteps(t, drive(t, st, s), "install", "upgrade local:wordpress-2", "upgrade-charm", "config-changed", "start")

	st = fresh()
	s = unitSnapshot("alive")
	s.app.CharmUrl, s.unit.CharmUrl, st.CharmURL = "local:wordpress-1", "local:wordpress-1", "local:wordpress-1"
	drive(t, st, s)
	s.unit.Life = "dying"
	s.app.CharmUrl = "local:wordpress-2"
	expectSteps(t, drive(t, st, s), "stop", "remove")
}

// What a pass only remembered is written without a sync: a crash may empty the record's first
// write, which reads as nothing recorded (the hooks the charm lacks run again, at no cost),
// never as an error that keeps the agent from starting.
func TestUnsyncedRecordReadsBack(t *testing.T) {
	dir := t.TempDir()
	st := &uniterState{Installed: true, Relations: map[int64]*relationState{}}
	if err := st.writeUnsynced(dir); err != nil {
		t.Fatal(err)
	}
	got, err := readUniterState(dir)
	if err != nil || !got.Installed {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, uniterFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = readUniterState(dir)
	if err != nil || got.Installed || got.Relations == nil {
		t.Fatalf("an emptied record: %+v, %v; want a fresh one", got, err)
	}
}
