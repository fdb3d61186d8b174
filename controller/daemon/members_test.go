package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

// runFails runs a controller that must refuse to start, and returns its error.
func runFails(t *testing.T, dir string, change func(*daemon.Config)) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := daemon.Config{
		DataDir: dir, ControllerName: "test", APIAddr: "127.0.0.1:0", NoFsync: true, AgentBinary: jujucPath,
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready: func(bootstrap.Info) { t.Error("a controller that should refuse to start is serving") },
	}
	change(&cfg)
	err := daemon.Run(ctx, cfg)
	if err == nil {
		t.Fatal("the controller started")
	}
	if ctx.Err() != nil {
		t.Fatalf("refusing took until the deadline: %v", err)
	}
	return err
}

// memberCount is how many controller members the store records.
func memberCount(t *testing.T, ext *store.Store) int {
	t.Helper()
	ms, err := state.New(ext.Client).Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// A jujud pointed at a store that holds a controller it is not a member of refuses to serve it,
// whether its data directory is fresh or belongs to another controller, and changes nothing.
func TestMemberOfAnotherControllerIsRefused(t *testing.T) {
	ext := externalStore(t)
	_, info, _ := startControllerWith(t, ext)
	if n := memberCount(t, ext); n != 1 {
		t.Fatalf("%d members after bootstrap, want 1", n)
	}

	err := runFails(t, filepath.Join(t.TempDir(), "fresh"), func(cfg *daemon.Config) { useEtcd(cfg, ext) })
	if !strings.Contains(err.Error(), "already holds controller "+info.ControllerUUID) || !strings.Contains(err.Error(), "enable-ha") {
		t.Errorf("fresh member: %v", err)
	}

	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	ident, _ := json.Marshal(map[string]string{"controller_uuid": "0e3c6a52-0000-4000-8000-000000000000", "id": "0"})
	if err := os.WriteFile(filepath.Join(other, daemon.MemberFile), ident, 0o600); err != nil {
		t.Fatal(err)
	}
	err = runFails(t, other, func(cfg *daemon.Config) { useEtcd(cfg, ext) })
	if !strings.Contains(err.Error(), "belongs to controller 0e3c6a52-0000-4000-8000-000000000000") {
		t.Errorf("another controller's member: %v", err)
	}
	if n := memberCount(t, ext); n != 1 {
		t.Errorf("%d members after the refusals, want 1", n)
	}
}

// A new member that cannot reach any of the store's members gives up with a clear error and
// leaves neither an etcd member nor a record behind.
func TestMemberThatCannotReachTheClusterIsRefused(t *testing.T) {
	_, info, dir := startController(t)
	newDir := filepath.Join(t.TempDir(), "member")
	if err := os.MkdirAll(newDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bootstrap.CACertFile, bootstrap.CAKeyFile} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(newDir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	join, _ := json.Marshal(map[string]any{
		"controller_uuid": info.ControllerUUID, "id": "9", "cloud_dir": dir,
		"peers": []string{"https://127.0.0.1:1"}, "store_key": strings.Repeat("ab", 32),
	})
	if err := os.WriteFile(filepath.Join(newDir, daemon.JoinFile), join, 0o600); err != nil {
		t.Fatal(err)
	}
	err := runFails(t, newDir, func(*daemon.Config) {})
	if !strings.Contains(err.Error(), "joining the controller's store") {
		t.Errorf("unreachable cluster: %v", err)
	}
	if _, err := os.Stat(filepath.Join(newDir, "etcd", "member")); err == nil {
		t.Error("the refused member left an etcd member directory")
	}
	if _, err := os.Stat(filepath.Join(newDir, daemon.MemberFile)); err == nil {
		t.Error("the refused member recorded itself")
	}
}

// On an external cluster (jujud --etcd-endpoints), enable-ha starts members that embed no
// etcd: more jujud processes on the same cluster, with copies of its TLS files. Exactly one of
// them runs the workers; enable-ha down to one member stops and forgets the others.
func TestEnableHAOnAnExternalCluster(t *testing.T) {
	if jujudPath == "" {
		t.Fatal("no jujud built")
	}
	ext := externalStore(t)
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runControllerWith(t, dir, func(cfg *daemon.Config) {
		useEtcd(cfg, ext)
		cfg.MemberBinary = jujudPath
	})
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var pids []int
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	resp, err := c.EnableHA(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resp.GetMaintained(), []string{"0"}) || !slices.Equal(resp.GetAdded(), []string{"1", "2"}) {
		t.Fatalf("enable-ha: %v", resp)
	}
	members, degraded, err := c.ControllerMembers(ctx)
	if err != nil || degraded != "" {
		t.Fatalf("members: %v %q", err, degraded)
	}
	owners := 0
	for _, m := range members {
		if m.GetId() != "0" {
			pids = append(pids, int(m.GetPid()))
		}
		if m.GetHealth() != "healthy" || m.GetStoreRole() != "" {
			t.Errorf("member %s: health %q, store role %q", m.GetId(), m.GetHealth(), m.GetStoreRole())
		}
		if m.GetWorkers() {
			owners++
		}
	}
	if len(members) != 3 || owners != 1 {
		t.Fatalf("%d members, %d running the workers: %v", len(members), owners, members)
	}
	member1 := filepath.Join(dir, "members", "1")
	if _, err := os.Stat(filepath.Join(member1, "etcd")); err == nil {
		t.Error("a member of an external cluster embeds an etcd")
	}
	if _, err := os.Stat(filepath.Join(member1, "etcd-client.crt")); err != nil {
		t.Errorf("the member has no copy of the cluster's TLS files: %v", err)
	}

	resp, err = c.EnableHA(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resp.GetRemoved(), []string{"2", "1"}) || !slices.Equal(resp.GetMaintained(), []string{"0"}) {
		t.Fatalf("enable-ha -n 1: %v", resp)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil && !strings.Contains(string(stat), ") Z") {
				t.Errorf("removed member's jujud (pid %d) still runs", pid)
			}
		}
	}
	if n := memberCount(t, ext); n != 1 {
		t.Errorf("%d members recorded after enable-ha -n 1", n)
	}
	if err := c.RemoveControllerMember(ctx, "0"); err == nil || !strings.Contains(err.Error(), "last member") {
		t.Errorf("removing the last member: %v", err)
	}
}

// A member that removes itself answers, stops, and marks its directory: started again from
// it, it refuses to serve (it would otherwise start a store, or a controller, of its own).
func TestRemovedMemberNeverServesAgain(t *testing.T) {
	if jujudPath == "" {
		t.Fatal("no jujud built")
	}
	ext := externalStore(t)
	dir := filepath.Join(t.TempDir(), "controller")
	c, _, stop := runControllerWith(t, dir, func(cfg *daemon.Config) {
		useEtcd(cfg, ext)
		cfg.MemberBinary = jujudPath
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := c.EnableHA(ctx, 3)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	members, _, err := c.ControllerMembers(ctx)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, m := range members {
			if m.GetId() != "0" {
				_ = syscall.Kill(int(m.GetPid()), syscall.SIGKILL)
			}
		}
	})
	if len(resp.GetAdded()) != 2 {
		t.Fatalf("enable-ha: %v", resp)
	}
	if err := c.RemoveControllerMember(ctx, "0"); err != nil {
		t.Fatal(err)
	}
	stop() // waits for the member to have stopped by itself
	if n := memberCount(t, ext); n != 2 {
		t.Errorf("%d members recorded after member 0 left, want 2", n)
	}
	err = runFails(t, dir, func(cfg *daemon.Config) { useEtcd(cfg, ext) })
	if !strings.Contains(err.Error(), "was member 0") || !strings.Contains(err.Error(), "removed") {
		t.Errorf("the removed member started again: %v", err)
	}
}
