package daemon_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/core/modelconfig"
)

// startController runs a real controller (embedded etcd, TLS gRPC, provisioner, agents) in this
// process and returns an admin client.
func startController(t *testing.T) (*client.Client, bootstrap.Info, string) {
	return startControllerWith(t, nil)
}

func startControllerWith(t *testing.T, ext *store.Store) (*client.Client, bootstrap.Info, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "controller")
	c, info, stop := runController(t, dir, ext)
	t.Cleanup(stop)
	return c, info, dir
}

// runController starts a controller on dir (over ext, an existing etcd, when it is given) and
// returns an admin client and a stop function that waits for a clean shutdown.
func runController(t *testing.T, dir string, ext *store.Store) (*client.Client, bootstrap.Info, func()) {
	t.Helper()
	return runControllerWith(t, dir, func(cfg *daemon.Config) { useEtcd(cfg, ext) })
}

// useEtcd has the controller use ext (when not nil) as --etcd-endpoints with its TLS material,
// as --etcd-ca, --etcd-cert and --etcd-key would.
func useEtcd(cfg *daemon.Config, ext *store.Store) {
	if ext == nil {
		return
	}
	files := ext.ClientTLS()
	cfg.EtcdEndpoints = []string{ext.Endpoint()}
	cfg.EtcdCA, cfg.EtcdCert, cfg.EtcdKey = files.CA, files.Cert, files.Key
}

// runControllerWith is runController with a changed configuration.
func runControllerWith(t *testing.T, dir string, change func(*daemon.Config)) (*client.Client, bootstrap.Info, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan bootstrap.Info, 1)
	done := make(chan error, 1)
	cfg := daemon.Config{
		DataDir: dir, ControllerName: "test", APIAddr: "127.0.0.1:0", NoFsync: true, AgentBinary: jujucPath,
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready: func(info bootstrap.Info) { ready <- info },
		// Tests of failed hooks expect them to wait for `juju resolved` (L-U2); Juju's default
		// (retry) is tested with the model configuration.
		ModelDefaults: map[string]string{modelconfig.AutomaticallyRetryHooks: "false"},
	}
	change(&cfg)
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
	stop := func() {
		c.Close()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller shutdown: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("controller did not stop")
		}
	}
	return c, info, stop
}

// zipCharm archives a charm directory with its hooks, keeping file modes, as the CLI does.
func zipCharm(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := os.Stat(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func charmsDir() string { return filepath.Join("..", "..", "testdata", "charms") }

// waitFor waits until ok says the model is as wanted, for as long as the model makes progress
// (waitStatus, settle_lifecycle_test.go); a model that stops moving fails the test with what
// is unsettled and why.
func waitFor(t *testing.T, c *client.Client, model string, what string, ok func(*pb.FullStatusResponse) bool) *pb.FullStatusResponse {
	t.Helper()
	fs, err := waitStatus(context.Background(), c, model, waitQuiet, waitLimit, ok)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return fs
}

func allIdle(fs *pb.FullStatusResponse) bool {
	for _, a := range fs.Applications {
		for _, u := range a.Units {
			if u.GetAgentStatus().GetStatus() != "idle" {
				return false
			}
		}
	}
	for _, m := range fs.Machines {
		if m.GetAgentStatus().GetStatus() != "started" {
			return false
		}
	}
	return true
}

func TestDeployReachesIdle(t *testing.T) {
	c, _, dir := startController(t)
	ctx := context.Background()
	up, err := c.UploadCharm(ctx, "default", zipCharm(t, filepath.Join(charmsDir(), "wordpress")))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Deploy(ctx, &pb.DeployRequest{
		Model: "default", Application: "wordpress", CharmUrl: up.Url, NumUnits: 2,
		Base: &pb.Base{Name: "ubuntu", Channel: "22.04"}, Constraints: "mem=1G",
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(resp.Units, ",") != "wordpress/0,wordpress/1" {
		t.Fatalf("units = %v", resp.Units)
	}
	fs := waitFor(t, c, "default", "units idle", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 2 && len(fs.Applications) == 1 && len(fs.Applications[0].Units) == 2 && allIdle(fs)
	})
	for _, m := range fs.Machines {
		if m.InstanceId == "" || m.Constraints != "mem=1024M" || !strings.Contains(m.Hardware, "cores=") {
			t.Errorf("machine %s: %v", m.Id, m)
		}
		// The instance is a directory with the agent's configuration, 0600.
		fi, err := os.Stat(filepath.Join(dir, "instances", m.InstanceId, agent.ConfFile))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("agent conf of %s: %v %v", m.Id, fi, err)
		}
	}
	// wordpress's hooks ran: without a database it says so; one unit leads.
	app := fs.Applications[0]
	leaders := 0
	for _, u := range app.Units {
		if u.WorkloadStatus.Status != "blocked" || u.WorkloadStatus.Message != "waiting for database" {
			t.Errorf("unit %s workload: %v", u.Name, u.WorkloadStatus)
		}
		if u.Leader {
			leaders++
		}
	}
	if leaders != 1 || app.CharmRev != 0 {
		t.Errorf("application status: %v", app)
	}
	if len(app.Relations) != 1 || app.Relations[0].Endpoint != "cluster" {
		t.Errorf("peer relation missing: %v", app.Relations)
	}
	// The controller model's machine 0 gets an agent too.
	waitFor(t, c, "controller", "machine 0 started", allIdle)
}

func TestUnsatisfiableConstraintsShowInStatus_LM5(t *testing.T) {
	c, _, _ := startController(t)
	res, err := c.AddMachines(context.Background(), &pb.AddMachinesRequest{
		Model: "default", Params: []*pb.AddMachineParams{{Constraints: "mem=100000G"}},
	})
	if err != nil || res[0].Error != "" {
		t.Fatalf("add machine: %v %v", res, err)
	}
	fs := waitFor(t, c, "default", "provisioning error", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 1 && fs.Machines[0].GetInstanceStatus().GetStatus() == "provisioning error"
	})
	m := fs.Machines[0]
	if m.InstanceId != "" || m.AgentStatus.GetStatus() != "pending" ||
		!strings.Contains(m.InstanceStatus.Message, "cannot satisfy constraints: mem=102400000M (host has") {
		t.Fatalf("machine = %v", m)
	}
}

func TestCredentialsAreChecked(t *testing.T) {
	admin, info, dir := startController(t)
	ctx := context.Background()
	bad, err := client.Dial(ctx, client.Config{
		Endpoint: info.APIAddr, CACert: []byte(info.CACert), Tag: "user-admin", Password: "wrong",
	})
	if !errors.Is(err, apierr.Unauthenticated) {
		t.Fatalf("wrong password: %v %v", bad, err)
	}
	// An agent's credential works only for its own entities, never for the admin API.
	// The provisioner creates machine 0's instance soon after start; wait for it.
	var conf agent.Conf
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		instances, _ := os.ReadDir(filepath.Join(dir, "instances"))
		if len(instances) > 0 {
			if conf, err = agent.ReadConf(filepath.Join(dir, "instances", instances[0].Name())); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no instance for machine 0")
		}
	}
	// agent.conf is written before the provisioner records the instance with the credential's
	// hash: the credential works once the machine shows its instance.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		fs, err := admin.FullStatus(ctx, conf.Model, nil)
		if err != nil {
			t.Fatal(err)
		}
		recorded := false
		for _, m := range fs.Machines {
			recorded = recorded || m.Id == conf.ID && m.InstanceId != ""
		}
		if recorded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("machine 0's instance never recorded")
		}
	}
	ac := client.NewFromConn(mustConn(t, info), client.Config{Tag: conf.Tag, Password: conf.Password, Model: conf.Model})
	if _, err := ac.GetMachine(ctx, conf.Model, conf.ID); err != nil {
		t.Fatalf("agent reading its machine: %v", err)
	}
	if _, err := ac.GetMachine(ctx, conf.Model, "99"); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("agent reading another machine: %v", err)
	}
	if _, err := ac.AddModel(ctx, "sneaky", "", nil); !errors.Is(err, apierr.PermissionDenied) {
		t.Fatalf("agent calling the admin API: %v", err)
	}
}

func mustConn(t *testing.T, info bootstrap.Info) *grpc.ClientConn {
	t.Helper()
	conn, err := client.NewConn(client.Config{Endpoint: info.APIAddr, CACert: []byte(info.CACert)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestSecretsArePrivate(t *testing.T) {
	_, _, dir := startController(t)
	top := os.FileMode(0o700)
	if on, _ := local.Isolation(); on {
		top = 0o711 // its machines' uids pass through to their instances (isolation_test.go)
	}
	for name, want := range map[string]os.FileMode{
		".": top, bootstrap.InfoFile: 0o600, bootstrap.CAKeyFile: 0o600, bootstrap.ServerKeyFile: 0o600, "etcd": 0o700,
		// The embedded store's TLS material: its client key is the key to every document.
		"etcd/tls": 0o700, "etcd/tls/" + bootstrap.EtcdClientKeyFile: 0o600, "etcd/tls/" + bootstrap.EtcdServerKeyFile: 0o600,
	} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
}

// --etcd-endpoints: the same controller over an existing etcd instead of the embedded one.
func TestExternalEtcd(t *testing.T) {
	ext := externalStore(t)
	c, _, dir := startControllerWith(t, ext)
	if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
		t.Fatalf("embedded etcd started anyway: %v", err)
	}
	waitFor(t, c, "controller", "machine 0 started", func(fs *pb.FullStatusResponse) bool {
		return len(fs.Machines) == 1 && allIdle(fs)
	})
	resp, err := ext.Client.Get(context.Background(), "/juju/controller")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("controller document not in the external etcd: %v %v", resp, err)
	}
}
