package agent_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/core/fdlimit"
)

// hooklessCharm is a charm with a peer relation and no hooks: what the scale figures of issue
// 16 deploy.
func hooklessCharm(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"metadata.yaml": "name: idle\nsummary: idle\ndescription: idle\npeers:\n  cluster:\n    interface: idle-ha\n",
		"manifest.yaml": "bases:\n  - name: ubuntu\n    channel: \"22.04\"\n    architectures: [amd64, arm64]\n",
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// startController runs a real controller (embedded etcd, TLS gRPC, provisioner) with its
// agents in this process, as --agents-in-process does, so that this process's goroutines and
// descriptors are those of the agents and of the controller serving them.
func startController(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan bootstrap.Info, 1)
	done := make(chan error, 1)
	cfg := daemon.Config{
		DataDir: filepath.Join(t.TempDir(), "controller"), ControllerName: "test", APIAddr: "127.0.0.1:0", NoFsync: true,
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready: func(info bootstrap.Info) { ready <- info },
	}
	go func() { done <- daemon.Run(ctx, cfg) }()
	var info bootstrap.Info
	select {
	case info = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("controller stopped: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("controller not ready")
	}
	c, err := client.Dial(context.Background(), client.Config{
		Endpoint: info.APIAddr, CACert: []byte(info.CACert), Tag: info.AdminTag, Password: info.AdminPassword,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("controller did not stop")
		}
	})
	return c
}

// idleUnits waits until the model has n units, each idle on a started machine, for as long
// as the count of idle units grows.
func idleUnits(t *testing.T, c *client.Client, n int) {
	t.Helper()
	best, since := -1, time.Now()
	for {
		fs, err := c.FullStatus(context.Background(), "default", nil)
		if err != nil {
			t.Fatal(err)
		}
		idle := 0
		for _, a := range fs.Applications {
			for _, u := range a.Units {
				if u.GetAgentStatus().GetStatus() == "idle" {
					idle++
				}
			}
		}
		for _, m := range fs.Machines {
			if m.GetAgentStatus().GetStatus() != "started" {
				idle-- // its unit is not counted idle until its machine is started
			}
		}
		if idle >= n {
			return
		}
		if idle > best {
			best, since = idle, time.Now()
		}
		if time.Since(since) > 30*time.Second {
			t.Fatalf("%d of %d units idle, no progress for 30s", idle, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settled waits until the process's goroutines stop changing (the agents gone idle, the last
// log records shipped) and returns their count and the descriptors open, less the agent log
// files the shared writer keeps open (at most agent.MaxOpenLogs for the whole process).
func settled(t *testing.T) (goroutines, fds int) {
	t.Helper()
	last, same := -1, 0
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		n := runtime.NumGoroutine()
		if n == last {
			if same++; same == 10 {
				f, err := fdlimit.InUse()
				if err != nil {
					t.Fatal(err)
				}
				return n, f - agent.OpenLogFiles()
			}
			continue
		}
		last, same = n, 0
	}
	t.Fatal("goroutines never settled")
	return 0, 0
}

// An idle unit (with its machine, one per unit as the local provider deploys them) costs the
// agents and the controller serving them no file descriptor and a handful of goroutines:
// measured as the growth of this process, which runs both, when units are added to a model
// whose units are idle. Before issue 16's work: 3 descriptors (the unit's and the machine's
// logs, the unit's hook-tool listener) and 30 goroutines. Now 3: the unit's, the machine's and
// its ssh server's loops. Their watches share the agent process's one WatchMany stream, and
// the machines' ssh servers one stream of the model's keys, so the controller spends no
// goroutine on them.
// IDLE_GOROUTINES=<file> writes the goroutines' stacks before and after.
func TestIdleUnitCost(t *testing.T) {
	c := startController(t)
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", hooklessCharm(t))
	if err != nil {
		t.Fatal(err)
	}
	const first, added = 2, 20
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "idle", CharmUrl: up.Url, NumUnits: first,
		Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}}); err != nil {
		t.Fatal(err)
	}
	idleUnits(t, c, first)
	g0, f0 := settled(t)
	if path := os.Getenv("IDLE_GOROUTINES"); path != "" {
		if f, err := os.Create(path + ".before"); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
	}
	if _, err := c.AddUnits(ctx, &pb.AddUnitsRequest{Model: "default", Application: "idle", NumUnits: added}); err != nil {
		t.Fatal(err)
	}
	idleUnits(t, c, first+added)
	g1, f1 := settled(t)
	if path := os.Getenv("IDLE_GOROUTINES"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
	}
	perG, perF := float64(g1-g0)/added, float64(f1-f0)/added
	t.Logf("per idle unit and its machine: %.2f goroutines (%d -> %d), %.2f file descriptors (%d -> %d)", perG, g0, g1, perF, f0, f1)
	if n := agent.OpenLogFiles(); n > agent.MaxOpenLogs {
		t.Errorf("%d agent log files open, more than %d", n, agent.MaxOpenLogs)
	}
	if perF >= 0.5 {
		t.Errorf("%.2f file descriptors per idle unit, want none", perF)
	}
	if perG > 4 {
		t.Errorf("%.2f goroutines per idle unit and machine", perG)
	}
}

// A unit of a charm without hooks is written four times on its way to idle: created, its
// password (deployed), its peer relation's scope, and its statuses once. The statuses of hooks
// the charm lacks are queued and written with the pass's idle, not one write before and one
// after each (issue 16: three status writes per unit were a third of a deploy's transactions).
// Counted from a watch of the unit's document, which hears of every write.
func TestHooklessUnitIsWrittenOnceForItsStatuses(t *testing.T) {
	c := startController(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	up, err := c.UploadCharm(ctx, "default", hooklessCharm(t))
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, &pb.WatchRequest{Model: "default", Targets: []*pb.WatchTarget{{Kind: "unit", Id: "idle/0"}}})
	if err != nil {
		t.Fatal(err)
	}
	writes := make(chan int, 100)
	go func() {
		for {
			ev, err := w.Next()
			if err != nil {
				close(writes)
				return
			}
			if ev.GetKind() == "unit" && ev.GetId() == "idle/0" {
				writes <- 1
			}
		}
	}()
	if _, err := c.Deploy(ctx, &pb.DeployRequest{Model: "default", Application: "idle", CharmUrl: up.Url, NumUnits: 1,
		Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}}); err != nil {
		t.Fatal(err)
	}
	idleUnits(t, c, 1)
	// Then until the writes stop: nothing more is due.
	n := 0
	for quiet := false; !quiet; {
		select {
		case k := <-writes:
			n += k
		case <-time.After(2 * time.Second):
			quiet = true
		}
	}
	fs, err := c.FullStatus(ctx, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	var u *pb.UnitStatus
	for _, a := range fs.Applications {
		for _, unit := range a.Units {
			if unit.GetName() == "idle/0" {
				u = unit
			}
		}
	}
	if u.GetWorkloadStatus().GetStatus() != "unknown" || u.GetAgentStatus().GetStatus() != "idle" || u.GetPublicAddress() == "" {
		t.Errorf("unit's status: workload %v, agent %v, address %q", u.GetWorkloadStatus(), u.GetAgentStatus(), u.GetPublicAddress())
	}
	if n != 4 {
		t.Errorf("the unit's document was written %d times, want 4 (created, password, scope, statuses)", n)
	}
}
