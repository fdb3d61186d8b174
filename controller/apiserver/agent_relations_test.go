package apiserver

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
)

// relTestEnv is a real API server with wordpress (2 units) and mysql (1 unit) related over db
// in the default model, wordpress/0 and mysql/0 in its scope, and a client for the admin and for
// each unit's agent.
type relTestEnv struct {
	*testEnv
	db    int64 // the wordpress-mysql relation
	peer  int64 // mysql's peer relation, which wordpress is not in
	units map[string]*client.Client
}

func startRelTestServer(t *testing.T, opts ...testEnvOption) *relTestEnv {
	t.Helper()
	ctx := context.Background()
	env := &relTestEnv{testEnv: startTestEnv(t, opts...), units: map[string]*client.Client{}}
	st, model := env.st, env.model
	env.deploy(t, "wordpress", "name: wordpress\nsummary: blog\nrequires:\n  db: mysql\npeers:\n  cluster: wp-peers\nbases: [ubuntu@22.04]\n", 2)
	env.deploy(t, "mysql", "name: mysql\nsummary: db\nprovides:\n  db: mysql\npeers:\n  cluster: mysql-peers\nbases: [ubuntu@22.04]\n", 1)
	rel, err := st.Integrate(ctx, model, state.EndpointSpec{Application: "wordpress"}, state.EndpointSpec{Application: "mysql"})
	if err != nil {
		t.Fatal(err)
	}
	env.db = rel.Id
	rels, err := st.Relations(ctx, model)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rels {
		if r.Key == "mysql:cluster" {
			env.peer = r.Id
		}
	}
	for _, u := range []string{"wordpress/0", "mysql/0"} {
		if _, err := st.EnterScope(ctx, model, env.db, u, map[string]string{"private-address": "10.0.0.1"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"wordpress/0", "wordpress/1", "mysql/0"} {
		password := "secret-of-" + u
		if err := st.SetUnitPassword(ctx, model, u, state.HashPassword(password)); err != nil {
			t.Fatal(err)
		}
		tag := "unit-" + u[:len(u)-2] + "-" + u[len(u)-1:]
		env.units[u] = env.dial(t, tag, password, model)
	}
	return env
}

func wantErr(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Errorf("%s: got %v, want %v", what, err, sentinel)
	}
}

func TestAgentRelationSettingsAuthorisation(t *testing.T) {
	env := startRelTestServer(t)
	ctx := context.Background()
	wp0, wp1, my0 := env.units["wordpress/0"], env.units["wordpress/1"], env.units["mysql/0"]

	changed, err := wp0.SetRelationSettings(ctx, "", "wordpress/0", env.db, map[string]string{"user": "wp"})
	if err != nil || !changed {
		t.Fatalf("own settings: %v %v", changed, err)
	}
	if changed, err = wp0.SetRelationSettings(ctx, "", "wordpress/0", env.db, map[string]string{"user": "wp"}); err != nil || changed {
		t.Fatalf("same settings again: %v %v", changed, err)
	}
	// Another unit's settings: refused, and nothing changes.
	_, err = wp0.SetRelationSettings(ctx, "", "mysql/0", env.db, map[string]string{"password": "stolen"})
	wantErr(t, "setting another unit's settings", err, apierr.PermissionDenied)
	// Out of scope: refused by the store's rule.
	_, err = wp1.SetRelationSettings(ctx, "", "wordpress/1", env.db, map[string]string{"user": "wp"})
	wantErr(t, "setting settings out of scope", err, apierr.NotValid)

	got, err := my0.RelationSettings(ctx, "", "mysql/0", env.db, "wordpress/0")
	if err != nil || fmt.Sprint(got) != "map[private-address:10.0.0.1 user:wp]" {
		t.Fatalf("mysql/0 reads wordpress/0: %v %v", got, err)
	}
	if got, err = my0.RelationSettings(ctx, "", "mysql/0", env.db, ""); err != nil || fmt.Sprint(got) != "map[private-address:10.0.0.1]" {
		t.Fatalf("mysql/0 reads its own: %v %v", got, err)
	}
	_, err = wp0.RelationSettings(ctx, "", "mysql/0", env.db, "")
	wantErr(t, "reading as another unit", err, apierr.PermissionDenied)
	_, err = wp0.RelationSettings(ctx, "", "wordpress/0", env.peer, "mysql/0")
	wantErr(t, "reading a relation the application is not in", err, apierr.PermissionDenied)
	_, err = wp0.RelationSettings(ctx, "", "wordpress/0", env.db, "logging/0")
	wantErr(t, "reading a unit of an application not in the relation", err, apierr.NotValid)

	// The agent's relation listing names the interface and the members it observes.
	rels, err := wp0.UnitRelations(ctx, "", "wordpress/0")
	if err != nil {
		t.Fatal(err)
	}
	_, rev, err := env.st.UnitRelationSettings(ctx, env.model, env.db, "mysql/0")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rels {
		if r.Id != env.db {
			continue
		}
		found = true
		if r.Interface != "mysql" || len(r.Members) != 1 || r.Members[0].Unit != "mysql/0" || r.Members[0].SettingsRevision != rev {
			t.Fatalf("db relation: %v", r)
		}
	}
	if !found {
		t.Fatalf("db relation missing: %v", rels)
	}

	// The relation goes (forced) while hooks may still run: its settings stay readable to its
	// former members until cleaned up (L-R3, L-R7); others, or after the cleanup, read nothing.
	if _, err := env.st.DestroyRelation(ctx, env.model, env.db, 0); err != nil {
		t.Fatal(err)
	}
	if err := env.st.ForceLeaveRelation(ctx, env.model, env.db); err != nil {
		t.Fatal(err)
	}
	if _, err := env.st.Relation(ctx, env.model, env.db); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("relation still there: %v", err)
	}
	if got, err = my0.RelationSettings(ctx, "", "mysql/0", env.db, "wordpress/0"); err != nil || got["user"] != "wp" {
		t.Fatalf("reading a removed relation's settings: %v %v", got, err)
	}
	if got, err = wp1.RelationSettings(ctx, "", "wordpress/1", env.db, "wordpress/0"); err != nil || len(got) != 0 {
		t.Fatalf("a non-member reading a removed relation's settings: %v %v", got, err)
	}
	cleanups, err := env.st.Cleanups(ctx, env.model)
	if err != nil || len(cleanups) != 1 {
		t.Fatalf("cleanups: %v %v", cleanups, err)
	}
	if err := env.st.RunCleanup(ctx, env.model, cleanups[0]); err != nil {
		t.Fatal(err)
	}
	if got, err = my0.RelationSettings(ctx, "", "mysql/0", env.db, "wordpress/0"); err != nil || len(got) != 0 {
		t.Fatalf("reading a cleaned-up relation's settings: %v %v", got, err)
	}
}

func TestAgentLeadership(t *testing.T) {
	env := startRelTestServer(t)
	ctx := context.Background()
	wp0, wp1 := env.units["wordpress/0"], env.units["wordpress/1"]

	_, err := wp1.ClaimLeadership(ctx, "", "wordpress/0", 30)
	wantErr(t, "claiming for another unit", err, apierr.PermissionDenied)
	// A tiny ttl is clamped: leadership must not flap.
	resp, err := wp0.ClaimLeadership(ctx, "", "wordpress/0", 1)
	if err != nil || !resp.Held || resp.Leader != "wordpress/0" || resp.TtlSeconds != minLeaseSeconds {
		t.Fatalf("claim: %v %v", resp, err)
	}
	kv, err := env.st.Client().Get(ctx, state.ModelPrefix(env.model)+"leases/wordpress")
	if err != nil || len(kv.Kvs) != 1 {
		t.Fatalf("lease key: %v %v", kv, err)
	}
	ttl, err := env.st.Client().TimeToLive(ctx, clientv3.LeaseID(kv.Kvs[0].Lease))
	if err != nil || ttl.GrantedTTL != minLeaseSeconds {
		t.Fatalf("lease ttl: %v %v", ttl, err)
	}
	if resp, err = wp1.ClaimLeadership(ctx, "", "wordpress/1", 30); err != nil || resp.Held || resp.Leader != "wordpress/0" {
		t.Fatalf("second claim: %v %v", resp, err)
	}

	err = wp1.SetLeaderSettings(ctx, "", "wordpress/1", map[string]string{"k": "v"})
	wantErr(t, "non-leader leader-set", err, apierr.PermissionDenied)
	err = wp1.SetLeaderSettings(ctx, "", "wordpress/0", map[string]string{"k": "v"})
	wantErr(t, "leader-set as another unit", err, apierr.PermissionDenied)
	if err := wp0.SetLeaderSettings(ctx, "", "wordpress/0", map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	ls, err := wp1.LeaderSettings(ctx, "", "wordpress/1")
	if err != nil || fmt.Sprint(ls.Settings) != "map[k:v]" || ls.Revision == 0 {
		t.Fatalf("leader-get: %v %v", ls, err)
	}
	app, err := wp1.GetApplication(ctx, "", "wordpress")
	if err != nil || app.Leader != "wordpress/0" || app.LeaderSettingsRevision != ls.Revision {
		t.Fatalf("application: %v %v", app, err)
	}

	err = wp1.SetApplicationStatus(ctx, "", "wordpress/1", &pb.StatusInfo{Status: "active"})
	wantErr(t, "non-leader application status", err, apierr.PermissionDenied)
	if err := wp0.SetApplicationStatus(ctx, "", "wordpress/0", &pb.StatusInfo{Status: "active", Message: "ready"}); err != nil {
		t.Fatal(err)
	}
	fs, err := env.admin.FullStatus(ctx, state.DefaultModelName, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range fs.Applications {
		if a.Name == "wordpress" && (a.GetStatus().GetStatus() != "active" || a.GetStatus().GetMessage() != "ready") {
			t.Errorf("wordpress status: %v", a.GetStatus())
		}
		for _, u := range a.Units {
			if u.Leader != (u.Name == "wordpress/0") {
				t.Errorf("%s leader = %v", u.Name, u.Leader)
			}
		}
	}
	detail, err := env.admin.ShowUnit(ctx, state.DefaultModelName, "wordpress/0")
	if err != nil || !detail.Unit.Leader {
		t.Fatalf("show-unit leader: %v %v", detail, err)
	}
}

// relWatch opens a watch for an agent; a refused watch returns its error.
func relWatch(ctx context.Context, c *client.Client, kind, id string) (*client.Watcher, error) {
	w, err := c.Watch(ctx, &pb.WatchRequest{Targets: []*pb.WatchTarget{{Kind: kind, Id: id}}})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func nextEvent(t *testing.T, w *client.Watcher) *pb.WatchEvent {
	t.Helper()
	type result struct {
		ev  *pb.WatchEvent
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ev, err := w.Next()
		ch <- result{ev, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return nil
}

func TestAgentWatchesRelationDataAndLeadership(t *testing.T) {
	env := startRelTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wp0 := env.units["wordpress/0"]
	dbID := fmt.Sprint(env.db)

	tests := []struct {
		kind, id string
		change   func() error
		wantID   string
	}{
		{state.KindScope, dbID, func() error {
			_, err := env.st.EnterScope(ctx, env.model, env.db, "wordpress/1", map[string]string{"private-address": "10.0.0.2"})
			return err
		}, dbID},
		{state.KindSettings, dbID, func() error {
			_, err := env.st.SetRelationSettings(ctx, env.model, env.db, "mysql/0", map[string]string{"password": "pw"})
			return err
		}, dbID},
		{state.KindLeadership, "wordpress", func() error {
			_, err := env.st.ClaimLeadership(ctx, env.model, "wordpress/1", 30)
			return err
		}, "wordpress"},
		{state.KindLeaderSettings, "wordpress", func() error {
			return env.st.SetLeaderSettings(ctx, env.model, "wordpress/1", map[string]string{"k": "v"})
		}, "wordpress"},
	}
	for _, tt := range tests {
		w, err := relWatch(ctx, wp0, tt.kind, tt.id)
		if err != nil {
			t.Fatalf("watch %s %s: %v", tt.kind, tt.id, err)
		}
		if err := tt.change(); err != nil {
			t.Fatal(err)
		}
		if ev := nextEvent(t, w); ev.Kind != tt.kind || ev.Id != tt.wantID {
			t.Errorf("watch %s %s: event %v", tt.kind, tt.id, ev)
		}
		w.Close()
	}

	// Not its application's relation, not its application's leadership: refused.
	for _, tt := range []struct{ kind, id string }{
		{state.KindScope, fmt.Sprint(env.peer)}, {state.KindSettings, fmt.Sprint(env.peer)},
		{state.KindLeadership, "mysql"}, {state.KindLeaderSettings, "mysql"}, {state.KindScope, "nope"},
	} {
		w, err := relWatch(ctx, wp0, tt.kind, tt.id)
		if err == nil {
			_, err = w.Next()
			w.Close()
		}
		wantErr(t, fmt.Sprintf("watching %s %s", tt.kind, tt.id), err, apierr.PermissionDenied)
	}
}
