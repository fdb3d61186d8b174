package daemon_test

// Scenario tests of the lifecycle rules, end to end through the API with real agents: each
// starts a controller, drives it as the CLI would and waits, through status, for the agents
// to do their part.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/state"
)

// deploy uploads testdata/charms/<charm> and deploys it as app with n units.
func deploy(t *testing.T, c *client.Client, charm, app string, n int32) {
	t.Helper()
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", zipCharm(t, filepath.Join(charmsDir(), charm)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: app, CharmUrl: up.Url, NumUnits: n, Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}}); err != nil {
		t.Fatal(err)
	}
}

func integrate(t *testing.T, c *client.Client, a, b string) *pb.IntegrateResponse {
	t.Helper()
	rel, err := c.Integrate(context.Background(), "default", []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func findApp(fs *pb.FullStatusResponse, name string) *pb.ApplicationStatus {
	for _, a := range fs.Applications {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func findRelation(fs *pb.FullStatusResponse, id int64) *pb.RelationStatus {
	for _, r := range fs.Relations {
		if r.Id == id {
			return r
		}
	}
	return nil
}

func unitNames(a *pb.ApplicationStatus) []string {
	var out []string
	for _, u := range a.GetUnits() {
		out = append(out, u.Name)
	}
	return out
}

// inScope: the relation's scope holds exactly these units.
func inScope(id int64, units ...string) func(*pb.FullStatusResponse) bool {
	return func(fs *pb.FullStatusResponse) bool {
		r := findRelation(fs, id)
		if r == nil {
			return false
		}
		got := slices.Clone(r.ScopeUnits)
		slices.Sort(got)
		want := slices.Clone(units)
		slices.Sort(want)
		return slices.Equal(got, want) && int(r.UnitsInScope) == len(units)
	}
}

func remove(t *testing.T, call func(context.Context, *pb.RemoveRequest) ([]*pb.RemoveResult, error), req *pb.RemoveRequest) *pb.RemoveResult {
	t.Helper()
	req.Model = "default"
	res, err := call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("results: %v", res)
	}
	return res[0]
}

// L-D5, L-R2: integrate relates the apps; every unit writes its settings and enters scope.
func TestIntegrateUnitsEnterScope_LD5_LR2(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "wordpress", "wordpress", 2)
	deploy(t, c, "mysql", "mysql", 1)
	rel := integrate(t, c, "wordpress", "mysql")
	if rel.Key != "wordpress:db mysql:db" {
		t.Fatalf("key = %q", rel.Key)
	}
	waitFor(t, c, "default", "all units in scope", inScope(rel.Id, "mysql/0", "wordpress/0", "wordpress/1"))
	detail, err := c.ShowUnit(context.Background(), "default", "wordpress/0")
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, ri := range detail.Relations {
		if ri.RelationId == rel.Id {
			found = true
			if ri.LocalUnit.Data["private-address"] == "" || len(ri.RelatedUnits) != 1 || ri.RelatedUnits[0].Unit != "mysql/0" {
				t.Errorf("relation info: %v", ri)
			}
		}
	}
	if !found {
		t.Fatalf("show-unit has no relation %d: %v", rel.Id, detail)
	}
	// L-G5: the same relation again is refused.
	if _, err := c.Integrate(context.Background(), "default", []string{"mysql", "wordpress"}); !errors.Is(err, apierr.AlreadyExists) {
		t.Fatalf("duplicate relation: %v", err)
	}
}

// L-A1, L-U6, L-R3, L-R4, L-U3: removing an application in a relation with units in scope sets
// it dying; its units follow, leave scope and go; the last unit out removes the relation, the
// last unit removed removes the application, and the counterpart's count goes back.
func TestRemoveApplicationInRelation_LA1_LR4(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "wordpress", "wordpress", 2)
	deploy(t, c, "mysql", "mysql", 1)
	rel := integrate(t, c, "wordpress", "mysql")
	waitFor(t, c, "default", "all units in scope", inScope(rel.Id, "mysql/0", "wordpress/0", "wordpress/1"))

	res := remove(t, c.RemoveApplications, &pb.RemoveRequest{Names: []string{"wordpress"}})
	if res.Error != "" || res.Outcome != "dying" || strings.Join(res.Units, ",") != "wordpress/0,wordpress/1" {
		t.Fatalf("result: %v", res)
	}
	fs := waitFor(t, c, "default", "wordpress gone", func(fs *pb.FullStatusResponse) bool {
		return findApp(fs, "wordpress") == nil && findRelation(fs, rel.Id) == nil
	})
	mysql := findApp(fs, "mysql")
	if mysql.RelationCount != 1 || len(mysql.Units) != 1 { // its peer relation only
		t.Fatalf("mysql after: %v", mysql)
	}
	// L-G5: the name is free again once the application is gone.
	deploy(t, c, "wordpress", "wordpress", 0)
}

// L-A1: an application nothing holds goes at once; its relations with nobody in scope too.
func TestRemoveApplicationAtOnce_LA1(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "wordpress", "wordpress", 0)
	deploy(t, c, "mysql", "mysql", 0)
	integrate(t, c, "wordpress", "mysql")
	res := remove(t, c.RemoveApplications, &pb.RemoveRequest{Names: []string{"wordpress"}})
	if res.Error != "" || res.Outcome != "removed" {
		t.Fatalf("result: %v", res)
	}
	fs, err := c.FullStatus(context.Background(), "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if findApp(fs, "wordpress") != nil || len(fs.Relations) != 1 || findApp(fs, "mysql").RelationCount != 1 {
		t.Fatalf("after: %v", fs)
	}
}

// L-R1: a relation nobody is in goes at once; with units in scope it goes dying, and the units'
// agents take it from there (L-R3, L-R4).
func TestRemoveRelation_LR1(t *testing.T) {
	c, _, _ := startController(t)
	ctx := context.Background()
	deploy(t, c, "wordpress", "wordpress", 0)
	deploy(t, c, "mysql", "mysql", 0)
	rel := integrate(t, c, "wordpress", "mysql")
	out, err := c.RemoveRelation(ctx, &pb.RemoveRelationRequest{Model: "default", Endpoints: []string{"mysql", "wordpress"}})
	if err != nil || out.Outcome != "removed" || out.Id != rel.Id {
		t.Fatalf("remove: %v %v", out, err)
	}
	// With units in scope.
	if _, err := c.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "mysql", NumUnits: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "wordpress", NumUnits: 1}); err != nil {
		t.Fatal(err)
	}
	rel = integrate(t, c, "wordpress:db", "mysql:db")
	waitFor(t, c, "default", "units in scope", inScope(rel.Id, "mysql/0", "wordpress/0"))
	out, err = c.RemoveRelation(ctx, &pb.RemoveRelationRequest{Model: "default", ById: true, Id: rel.Id})
	if err != nil || out.Outcome != "dying" {
		t.Fatalf("remove: %v %v", out, err)
	}
	fs := waitFor(t, c, "default", "relation gone", func(fs *pb.FullStatusResponse) bool { return findRelation(fs, rel.Id) == nil })
	for _, app := range []string{"mysql", "wordpress"} {
		if a := findApp(fs, app); a.RelationCount != 1 || a.Life != "alive" || len(a.Units) != 1 {
			t.Errorf("%s after: %v", app, a)
		}
	}
	// Unknown relations.
	if _, err := c.RemoveRelation(ctx, &pb.RemoveRelationRequest{Model: "default", ById: true, Id: 99}); !errors.Is(err, apierr.NotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := c.RemoveRelation(ctx, &pb.RemoveRelationRequest{Model: "default", Endpoints: []string{"mysql", "wordpress"}}); !errors.Is(err, apierr.NotFound) ||
		!strings.Contains(err.Error(), `relation matching "mysql wordpress" not found`) {
		t.Fatalf("unknown endpoints: %v", err)
	}
}

// L-M1, L-U1, L-U3, L-M2, L-M3: a machine with a unit cannot be removed (the error names the
// unit); once the unit is gone the machine goes dying, its agent sets it dead and the
// provisioner releases and removes it.
func TestRemoveMachine_LM1_LM2_LM3(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "mysql", "mysql", 1)
	waitFor(t, c, "default", "idle", func(fs *pb.FullStatusResponse) bool { return len(fs.Machines) == 1 && allIdle(fs) })
	res := remove(t, c.RemoveMachines, &pb.RemoveRequest{Names: []string{"0"}})
	if res.Error != `machine 0 has unit "mysql/0" assigned` || !res.RequiresForce {
		t.Fatalf("result: %v", res)
	}
	res = remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"mysql/0"}})
	if res.Error != "" || res.Outcome != "dying" {
		t.Fatalf("remove unit: %v", res)
	}
	waitFor(t, c, "default", "unit gone", func(fs *pb.FullStatusResponse) bool { return len(findApp(fs, "mysql").GetUnits()) == 0 })
	res = remove(t, c.RemoveMachines, &pb.RemoveRequest{Names: []string{"0"}})
	if res.Error != "" || res.Outcome != "dying" {
		t.Fatalf("remove machine: %v", res)
	}
	waitFor(t, c, "default", "machine gone", func(fs *pb.FullStatusResponse) bool { return len(fs.Machines) == 0 })
	// L-G2: removing what is gone or going is an error only when it does not exist.
	res = remove(t, c.RemoveMachines, &pb.RemoveRequest{Names: []string{"0"}})
	if res.Error != "machine 0 not found" {
		t.Fatalf("again: %v", res)
	}
	// The controller machine stays.
	res, err := func() (*pb.RemoveResult, error) {
		r, err := c.RemoveMachines(context.Background(), &pb.RemoveRequest{Model: "controller", Names: []string{"0"}})
		if err != nil {
			return nil, err
		}
		return r[0], nil
	}()
	if err != nil || res.Error != "machine 0 is required by the model" {
		t.Fatalf("controller machine: %v %v", res, err)
	}
}

// L-D7, L-U5, L-R5: a container-scoped relation gives every principal unit a subordinate; a
// dying principal takes its subordinate; removing the relation takes the rest.
func TestSubordinates_LD7_LU5_LR5(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "wordpress", "wordpress", 2)
	deploy(t, c, "logging", "logging", 0)
	rel := integrate(t, c, "logging", "wordpress")
	if rel.Key != "logging:juju-info wordpress:juju-info" {
		t.Fatalf("key %q", rel.Key)
	}
	fs := waitFor(t, c, "default", "two subordinates idle", func(fs *pb.FullStatusResponse) bool {
		return len(findApp(fs, "logging").GetUnits()) == 2 && allIdle(fs) && inScope(rel.Id, "logging/0", "logging/1", "wordpress/0", "wordpress/1")(fs)
	})
	principals := map[string]string{}
	for _, u := range findApp(fs, "logging").Units {
		principals[u.Principal] = u.Name
		if u.Machine != "" {
			t.Errorf("subordinate %s has machine %q", u.Name, u.Machine)
		}
	}
	// A subordinate cannot be removed on its own.
	res := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"logging/0"}})
	if !strings.Contains(res.Error, `unit "logging/0" is a subordinate, to remove use remove-relation`) {
		t.Fatalf("subordinate: %v", res)
	}
	res = remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"wordpress/0"}})
	if res.Error != "" || strings.Join(res.Units, ",") != principals["wordpress/0"] {
		t.Fatalf("remove principal: %v", res)
	}
	waitFor(t, c, "default", "principal and its subordinate gone", func(fs *pb.FullStatusResponse) bool {
		return slices.Equal(unitNames(findApp(fs, "wordpress")), []string{"wordpress/1"}) &&
			slices.Equal(unitNames(findApp(fs, "logging")), []string{principals["wordpress/1"]})
	})
	out, err := c.RemoveRelation(context.Background(), &pb.RemoveRelationRequest{Model: "default", Endpoints: []string{"logging", "wordpress"}})
	if err != nil || out.Outcome != "dying" {
		t.Fatalf("remove relation: %v %v", out, err)
	}
	fs = waitFor(t, c, "default", "subordinates gone", func(fs *pb.FullStatusResponse) bool {
		return len(findApp(fs, "logging").GetUnits()) == 0 && findRelation(fs, rel.Id) == nil
	})
	if a := findApp(fs, "logging"); a.Life != "alive" || a.RelationCount != 0 || a.UnitCount != 0 {
		t.Fatalf("logging after: %v", a)
	}
}

// L-F1: --force --no-wait: the controller does the agents' work at once and keeps the counts.
func TestForceRemoveUnit_LF1(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "wordpress", "wordpress", 1)
	deploy(t, c, "mysql", "mysql", 1)
	deploy(t, c, "logging", "logging", 0)
	rel := integrate(t, c, "wordpress", "mysql")
	sub := integrate(t, c, "logging", "wordpress")
	waitFor(t, c, "default", "in scope", func(fs *pb.FullStatusResponse) bool {
		return inScope(rel.Id, "mysql/0", "wordpress/0")(fs) && inScope(sub.Id, "logging/0", "wordpress/0")(fs)
	})
	_, err := c.RemoveUnits(context.Background(), &pb.RemoveRequest{Model: "default", Names: []string{"wordpress/0"}, NoWait: true})
	if !errors.Is(err, apierr.NotValid) || !strings.Contains(err.Error(), "--no-wait without --force not valid") {
		t.Fatalf("no-wait without force: %v", err)
	}
	res := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"wordpress/0"}, Force: true, NoWait: true})
	if res.Error != "" {
		t.Fatalf("force: %v", res)
	}
	fs := waitFor(t, c, "default", "unit and subordinate gone", func(fs *pb.FullStatusResponse) bool {
		return len(findApp(fs, "wordpress").GetUnits()) == 0 && len(findApp(fs, "logging").GetUnits()) == 0
	})
	if r := findRelation(fs, rel.Id); r == nil || r.UnitsInScope != 1 {
		t.Fatalf("relation after: %v", r)
	}
	if a := findApp(fs, "wordpress"); a.UnitCount != 0 || a.RelationCount != 3 {
		t.Fatalf("wordpress after: %v", a)
	}
}

// unitConf finds the agent.conf of a unit (its directory's name, unit-<app>-<n>) in the
// controller's data directory dir, and reads it.
func unitConf(t *testing.T, dir, unitDir string) (path string, conf agent.Conf) {
	t.Helper()
	confs, err := filepath.Glob(filepath.Join(dir, "instances", "*", "units", unitDir, agent.ConfFile))
	if err != nil || len(confs) != 1 {
		t.Fatalf("unit agent conf: %v %v", confs, err)
	}
	conf, err = agent.ReadConf(filepath.Dir(confs[0]))
	if err != nil {
		t.Fatal(err)
	}
	return confs[0], conf
}

// A removed unit's credential is refused at once: the API server forgets cached credentials
// of removed entities as the store deletes them.
func TestRemovedUnitCredentialIsRefused(t *testing.T) {
	c, info, dir := startController(t)
	deploy(t, c, "mysql", "mysql", 1)
	waitFor(t, c, "default", "idle", func(fs *pb.FullStatusResponse) bool { return len(fs.Machines) == 1 && allIdle(fs) })
	_, conf := unitConf(t, dir, "unit-mysql-0")
	ac := client.NewFromConn(mustConn(t, info), client.Config{Tag: conf.Tag, Password: conf.Password, Model: conf.Model})
	if _, err := ac.GetUnit(context.Background(), conf.Model, "mysql/0"); err != nil {
		t.Fatalf("unit agent before removal: %v", err)
	}
	res := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"mysql/0"}})
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	waitFor(t, c, "default", "unit gone", func(fs *pb.FullStatusResponse) bool { return len(findApp(fs, "mysql").GetUnits()) == 0 })
	// Well within the cache's 5 s lifetime: the deletion event reaches the API server in
	// milliseconds.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := ac.GetUnit(context.Background(), conf.Model, "mysql/0")
		if errors.Is(err, apierr.Unauthenticated) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("removed unit's credential: %v", err)
		}
	}
}

// L-F2 then L-F1: a unit whose agent has stopped working stays dying with a visible reason;
// forcing it (here with --no-wait) has the controller finish the job and keep the counts.
func TestStuckUnitShowsWhyAndForceFinishes_LF2_LF1(t *testing.T) {
	ext := externalStore(t)
	c, _, _ := startControllerWith(t, ext)
	ctx := context.Background()
	deploy(t, c, "wordpress", "wordpress", 1)
	deploy(t, c, "mysql", "mysql", 1)
	rel := integrate(t, c, "wordpress", "mysql")
	waitFor(t, c, "default", "in scope", inScope(rel.Id, "mysql/0", "wordpress/0"))

	// Break the unit agent: its credential no longer matches, so once the API server's cached
	// credential expires its next call is refused and it stops.
	m, err := c.GetModel(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if err := state.New(ext.Client).SetUnitPassword(ctx, m.Uuid, "mysql/0", state.HashPassword("not-the-agents")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5200 * time.Millisecond)

	if res := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"mysql/0"}}); res.Error != "" || res.Outcome != "dying" {
		t.Fatalf("remove: %v", res)
	}
	time.Sleep(300 * time.Millisecond)
	fs, err := c.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	u := findApp(fs, "mysql").Units[0]
	want := fmt.Sprintf("still in relation %d (wordpress:db mysql:db)", rel.Id)
	if u.Life != "dying" || !slices.Contains(u.BlockedBy, want) {
		t.Fatalf("stuck unit: life %s, blocked by %q; want %q", u.Life, u.BlockedBy, want)
	}
	if r := findRelation(fs, rel.Id); r.UnitsInScope != 2 {
		t.Fatalf("relation: %v", r)
	}

	// Forcing what is already dying shortens its grace period to none.
	if res := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"mysql/0"}, Force: true, NoWait: true}); res.Error != "" || res.Outcome != "none" {
		t.Fatalf("force: %v", res)
	}
	fs = waitFor(t, c, "default", "forced out", func(fs *pb.FullStatusResponse) bool { return len(findApp(fs, "mysql").GetUnits()) == 0 })
	if r := findRelation(fs, rel.Id); r == nil || r.UnitsInScope != 1 || strings.Join(r.ScopeUnits, ",") != "wordpress/0" {
		t.Fatalf("relation after: %v", r)
	}
	if a := findApp(fs, "mysql"); a.UnitCount != 0 || a.RelationCount != 2 {
		t.Fatalf("mysql after: %v", a)
	}
}

// L-R6: scope membership is the store's record, not the agent's memory: after a controller
// restart (every agent starts afresh) the units still leave a removed relation, so it goes.
func TestScopesSurviveAgentRestart_LR6(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "controller")
	run := func() (*client.Client, func()) {
		c, _, stop := runController(t, dir, nil)
		return c, stop
	}
	c, stop := run()
	deploy(t, c, "wordpress", "wordpress", 1)
	deploy(t, c, "mysql", "mysql", 1)
	rel := integrate(t, c, "wordpress", "mysql")
	waitFor(t, c, "default", "in scope", inScope(rel.Id, "mysql/0", "wordpress/0"))
	stop()

	c, stop = run()
	defer stop()
	out, err := c.RemoveRelation(context.Background(), &pb.RemoveRelationRequest{Model: "default", ById: true, Id: rel.Id})
	if err != nil || out.Outcome != "dying" {
		t.Fatalf("remove: %v %v", out, err)
	}
	waitFor(t, c, "default", "relation gone", func(fs *pb.FullStatusResponse) bool { return findRelation(fs, rel.Id) == nil })
}
