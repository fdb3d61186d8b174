package daemon_test

// Scenario tests of charms that run: the sample charms' real hooks, run by real unit agents,
// talking through the real hook tools (this test binary acts as them, see TestMain).

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/daemon"
)

// deployWith deploys a sample charm with config and constraints.
func deployWith(t *testing.T, c *client.Client, charm, app string, n int32, config map[string]string, cons string) {
	t.Helper()
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", zipCharm(t, filepath.Join(charmsDir(), charm)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: app, CharmUrl: up.Url, NumUnits: n,
		Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, Config: config, Constraints: cons}); err != nil {
		t.Fatal(err)
	}
}

func findUnit(fs *pb.FullStatusResponse, name string) *pb.UnitStatus {
	app, _, _ := strings.Cut(name, "/")
	for _, a := range fs.Applications {
		for _, u := range a.Units {
			if u.Name == name {
				return u
			}
		}
		_ = app
	}
	return nil
}

// workload: the unit's workload status is st and its message contains msg.
func workload(unit, st, msg string) func(*pb.FullStatusResponse) bool {
	return func(fs *pb.FullStatusResponse) bool {
		u := findUnit(fs, unit)
		return u != nil && u.GetWorkloadStatus().GetStatus() == st && strings.Contains(u.GetWorkloadStatus().GetMessage(), msg)
	}
}

func gone(unit string) func(*pb.FullStatusResponse) bool {
	return func(fs *pb.FullStatusResponse) bool { return findUnit(fs, unit) == nil }
}

// hookLog reads the hooks.log the sample charms keep in a unit's charm directory: one line per
// hook run, "<hook> <remote unit or ->".
func hookLog(t *testing.T, controllerDir, unit string) []string {
	t.Helper()
	suffix := filepath.Join("unit-"+strings.ReplaceAll(unit, "/", "-"), "charm", "hooks.log")
	var lines []string
	_ = filepath.WalkDir(controllerDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, suffix) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		return filepath.SkipAll
	})
	return lines
}

// seq: the log holds these lines in this order (others may come between).
func seq(log []string, want ...string) bool {
	i := 0
	for _, l := range log {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	return i == len(want)
}

// Seed 004, L-R2: wordpress becomes active only with mysql's data; removing the relation runs
// departed then broken (L-R3).
func TestMysqlWordpressExchangeData_LR2_LR3(t *testing.T) {
	c, _, dir := startController(t)
	deploy(t, c, "mysql", "mysql", 1)
	deploy(t, c, "wordpress", "wordpress", 1)
	waitFor(t, c, "default", "wordpress blocked without a database", workload("wordpress/0", "blocked", "database"))
	rel := integrate(t, c, "wordpress", "mysql")
	fs := waitFor(t, c, "default", "wordpress active with mysql's data", workload("wordpress/0", "active", "with database 127.1."))
	if u := findUnit(fs, "mysql/0"); !slices.Contains(u.OpenPorts, "3306/tcp") {
		t.Errorf("mysql/0 ports: %v", u.OpenPorts)
	}
	detail, err := c.ShowUnit(context.Background(), "default", "wordpress/0")
	if err != nil {
		t.Fatal(err)
	}
	var published map[string]string
	for _, r := range detail.Relations {
		for _, ru := range r.RelatedUnits {
			if ru.Unit == "mysql/0" {
				published = ru.Data
			}
		}
	}
	for _, k := range []string{"host", "port", "user", "password"} {
		if published[k] == "" {
			t.Errorf("mysql/0 did not publish %q: %v", k, published)
		}
	}
	if log := hookLog(t, dir, "wordpress/0"); !seq(log, "install -", "config-changed -", "start -", "db-relation-joined mysql/0", "db-relation-changed mysql/0") {
		t.Errorf("wordpress/0 hooks: %v", log)
	}

	if _, err := c.RemoveRelation(context.Background(), &pb.RemoveRelationRequest{Model: "default", Id: rel.Id, ById: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "default", "relation removed", func(fs *pb.FullStatusResponse) bool { return findRelation(fs, rel.Id) == nil })
	waitFor(t, c, "default", "wordpress blocked again", workload("wordpress/0", "blocked", "database"))
	for _, unit := range []string{"wordpress/0", "mysql/0"} {
		remote := map[string]string{"wordpress/0": "mysql/0", "mysql/0": "wordpress/0"}[unit]
		if log := hookLog(t, dir, unit); !seq(log, "db-relation-joined "+remote, "db-relation-departed "+remote, "db-relation-broken -") {
			t.Errorf("%s hooks: %v", unit, log)
		}
	}
}

// Seed 003, L-D7, L-U5, L-R5: integrating a subordinate gives every principal unit its own
// subordinate, which records its principal; removing the relation takes them away.
func TestSubordinatesAppearAndVanish_LD7_LR5(t *testing.T) {
	c, _, dir := startController(t)
	deploy(t, c, "wordpress", "wordpress", 3)
	deploy(t, c, "logging", "logging", 0)
	rel := integrate(t, c, "logging", "wordpress")
	fs := waitFor(t, c, "default", "three active subordinates", func(fs *pb.FullStatusResponse) bool {
		app := findApp(fs, "logging")
		if app == nil || len(app.Units) != 3 {
			return false
		}
		for _, u := range app.Units {
			if u.GetWorkloadStatus().GetStatus() != "active" || !strings.Contains(u.GetWorkloadStatus().GetMessage(), u.Principal) {
				return false
			}
		}
		return true
	})
	for _, u := range findApp(fs, "logging").Units {
		if u.Machine != "" || u.Principal == "" {
			t.Errorf("subordinate %s: machine %q principal %q", u.Name, u.Machine, u.Principal)
		}
		if log := hookLog(t, dir, u.Name); !seq(log, "install -", "start -", "juju-info-relation-joined "+u.Principal) {
			t.Errorf("%s hooks: %v", u.Name, log)
		}
	}
	if _, err := c.RemoveRelation(context.Background(), &pb.RemoveRelationRequest{Model: "default", Id: rel.Id, ById: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "default", "subordinates gone", func(fs *pb.FullStatusResponse) bool {
		return len(findApp(fs, "logging").GetUnits()) == 0 && findRelation(fs, rel.Id) == nil
	})
}

// L-U2: a failing stop hook holds a dying unit in error, with the reason in status, until
// `juju resolved`; retrying after the config is fixed lets the removal finish.
func TestFailingHookBlocksRemovalUntilResolved_LU2(t *testing.T) {
	c, _, _ := startController(t)
	ctx := context.Background()
	deployWith(t, c, "mysql", "mysql", 1, map[string]string{"fail-hook": "stop"}, "")
	waitFor(t, c, "default", "mysql active", workload("mysql/0", "active", ""))
	if r := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{"mysql/0"}}); r.Error != "" {
		t.Fatal(r.Error)
	}
	fs := waitFor(t, c, "default", "stop hook failed", workload("mysql/0", "error", `hook failed: "stop"`))
	if u := findUnit(fs, "mysql/0"); !strings.Contains(strings.Join(u.BlockedBy, " "), `hook failed: "stop"`) {
		t.Errorf("blocked by: %v", u.BlockedBy)
	}
	time.Sleep(300 * time.Millisecond) // nothing moves while in error
	if u := findUnit(waitFor(t, c, "default", "status", func(*pb.FullStatusResponse) bool { return true }), "mysql/0"); u == nil || u.GetWorkloadStatus().GetStatus() != "error" {
		t.Fatalf("unit moved on while in error: %v", u)
	}
	if err := c.SetConfig(ctx, &pb.SetConfigRequest{Model: "default", Application: "mysql", Reset_: []string{"fail-hook"}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ResolveUnitErrors(ctx, &pb.ResolveUnitErrorsRequest{Model: "default", Units: []string{"mysql/0"}, Retry: true})
	if err != nil || len(res) != 1 || res[0].Error != "" {
		t.Fatalf("resolved: %v %v", res, err)
	}
	waitFor(t, c, "default", "mysql/0 removed after resolved", gone("mysql/0"))
}

// `resolved --no-retry` skips the failed hook: the unit goes on to start.
func TestResolvedNoRetrySkipsHook_LU2(t *testing.T) {
	c, _, dir := startController(t)
	deployWith(t, c, "mysql", "mysql", 1, map[string]string{"fail-hook": "install"}, "")
	waitFor(t, c, "default", "install failed", workload("mysql/0", "error", `hook failed: "install"`))
	res, err := c.ResolveUnitErrors(context.Background(), &pb.ResolveUnitErrorsRequest{Model: "default", All: true})
	if err != nil || len(res) != 1 || res[0].Error != "" {
		t.Fatalf("resolved: %v %v", res, err)
	}
	waitFor(t, c, "default", "started after skipping install", workload("mysql/0", "active", ""))
	if log := hookLog(t, dir, "mysql/0"); !seq(log, "install -", "config-changed -", "start -") || strings.Count(strings.Join(log, "\n"), "install -") != 1 {
		t.Errorf("hooks: %v", log)
	}
}

// A hook that hangs is killed at its time limit and reported as failed.
func TestHangingHookIsKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runControllerWith(t, dir, func(cfg *daemon.Config) { cfg.HookTimeout = time.Second })
	t.Cleanup(stop)
	deployWith(t, c, "mysql", "mysql", 1, map[string]string{"hang-hook": "install"}, "")
	waitFor(t, c, "default", "install killed", workload("mysql/0", "error", `hook failed: "install"`))
	// The unit ships its log in batches: look until the line arrives.
	deadline := time.Now().Add(10 * time.Second)
	for !logHas(t, c, "mysql/0", "timed out after 1s and was killed") {
		if time.Now().After(deadline) {
			t.Fatal("the unit's log does not say the hook timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logHas: the model log holds a record of unit whose message contains text.
func logHas(t *testing.T, c *client.Client, unit, text string) bool {
	t.Helper()
	stream, err := c.DebugLog(context.Background(), &pb.DebugLogRequest{Model: "default", Replay: true, NoTail: true, Include: []string{unit}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for {
		rec, err := stream.Next()
		if err != nil {
			return false
		}
		if strings.Contains(rec.Message, text) {
			return true
		}
	}
}

// L-M5, seed 002: an unsatisfiable constraint gives a provisioning error, shown on the machine
// and its unit; retrying with replaced constraints provisions it.
func TestProvisioningErrorResolvedWithConstraints_LM5(t *testing.T) {
	c, _, _ := startController(t)
	deployWith(t, c, "mysql", "mysql", 1, nil, "mem=100000G")
	fs := waitFor(t, c, "default", "provisioning error", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 1 && fs.Machines[0].GetInstanceStatus().GetStatus() == "provisioning error"
	})
	if u := findUnit(fs, "mysql/0"); u.GetWorkloadStatus().GetMessage() != "waiting for machine" {
		t.Errorf("unit: %v", u.GetWorkloadStatus())
	}
	res, err := c.RetryProvisioning(context.Background(), &pb.RetryProvisioningRequest{Model: "default",
		Machines: []string{fs.Machines[0].Id}, Constraints: "mem=1M", ReplaceConstraints: true})
	if err != nil || len(res) != 1 || res[0].Error != "" {
		t.Fatalf("retry: %v %v", res, err)
	}
	waitFor(t, c, "default", "mysql active", workload("mysql/0", "active", ""))
}

// One leader per application, held as a lease; when it goes, another unit takes over.
func TestLeadershipMovesWhenLeaderGoes(t *testing.T) {
	c, _, _ := startController(t)
	deploy(t, c, "mysql", "mysql", 2)
	leaderOf := func(fs *pb.FullStatusResponse) []string {
		var out []string
		for _, u := range findApp(fs, "mysql").GetUnits() {
			if u.Leader {
				out = append(out, u.Name)
			}
		}
		return out
	}
	fs := waitFor(t, c, "default", "one leader", func(fs *pb.FullStatusResponse) bool { return len(leaderOf(fs)) == 1 })
	leader := leaderOf(fs)[0]
	if r := remove(t, c.RemoveUnits, &pb.RemoveRequest{Names: []string{leader}}); r.Error != "" {
		t.Fatal(r.Error)
	}
	waitFor(t, c, "default", "the other unit leads", func(fs *pb.FullStatusResponse) bool {
		l := leaderOf(fs)
		return findUnit(fs, leader) == nil && len(l) == 1 && l[0] != leader
	})
}
