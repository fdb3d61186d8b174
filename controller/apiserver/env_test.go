package apiserver

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/logsink"
	"github.com/jujuclone/juju/controller/provider/local"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
	"github.com/jujuclone/juju/controller/worker/provisioner"
)

// testEnv is a real controller API for tests: an embedded etcd in a temp dir, bootstrapped
// state, a TLS gRPC server on a local port and a client for the admin.
type testEnv struct {
	st     *state.State
	model  string // the default model's UUID
	addr   string
	caCert []byte
	admin  *client.Client
	stop   context.CancelFunc // ends the server's context, as a controller shutdown does
}

type testEnvOptions struct {
	logSink   bool
	provision bool
	log       io.Writer
	now       func() time.Time
	noAdmin   bool
	capacity  func(context.Context) error
}

type testEnvOption func(*testEnvOptions)

// withLogSink gives the server a log sink in the env's dir.
func withLogSink() testEnvOption { return func(o *testEnvOptions) { o.logSink = true } }

// withServerLog gives the server a text log written to w, and the clock now (nil: the
// server's default), and leaves env.admin unset, so that no login happens before the test's.
func withServerLog(w io.Writer, now func() time.Time) testEnvOption {
	return func(o *testEnvOptions) { o.log, o.now, o.noAdmin = w, now, true }
}

// withCapacity gives the server its answer to "could the agents' processes take more".
func withCapacity(f func(context.Context) error) testEnvOption {
	return func(o *testEnvOptions) { o.capacity = f }
}

// withProvisioner runs the provisioner with the real local provider (its agents not started).
func withProvisioner() testEnvOption { return func(o *testEnvOptions) { o.provision = true } }

func startTestEnv(t *testing.T, opts ...testEnvOption) *testEnv {
	t.Helper()
	var o testEnvOptions
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	es, err := store.StartEmbedded(ctx, filepath.Join(dir, "etcd"), store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	st := state.New(es.Client)
	if _, err := st.Bootstrap(ctx, state.BootstrapArgs{
		ControllerName: "test", AdminPasswordHash: state.HashPassword("admin-secret"),
		Cloud: "localhost", Region: "localhost", Base: "ubuntu@22.04",
	}); err != nil {
		t.Fatal(err)
	}
	m, err := st.Model(ctx, state.DefaultModelName)
	if err != nil {
		t.Fatal(err)
	}
	cert, caPEM, err := bootstrap.EnsureCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		State: st, ControllerName: "test", Cloud: "localhost", Region: "localhost", Context: ctx,
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Now: o.now, Capacity: o.capacity,
	}
	if o.log != nil {
		cfg.Log = slog.New(slog.NewTextHandler(o.log, nil))
	}
	if o.logSink {
		sink, err := logsink.New(filepath.Join(dir, "logs"), logsink.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sink.Close() })
		cfg.LogSink = sink
	}
	srv := New(cfg)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	env := &testEnv{st: st, model: m.Uuid, addr: lis.Addr().String(), caCert: caPEM, stop: cancel}
	if !o.noAdmin {
		env.admin = env.dial(t, AdminTag, "admin-secret", "")
	}
	if o.provision {
		p, err := local.New(dir, env.addr, caPEM, noAgents{})
		if err != nil {
			t.Fatal(err)
		}
		w := provisioner.New(st, p, slog.New(slog.NewTextHandler(io.Discard, nil)))
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return env
}

// dial connects to the server as tag; the client is closed when the test ends.
func (e *testEnv) dial(t *testing.T, tag, password, model string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), client.Config{
		Endpoint: e.addr, CACert: e.caCert, Tag: tag, Password: password, Model: model,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// noAgents is a launcher that starts no agents: these tests look at provisioning only.
type noAgents struct{}

func (noAgents) StartMachineAgent(string) error { return nil }
func (noAgents) StopTree(string)                {}

// charmArchive zips files (name to content) into a charm archive.
func charmArchive(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, content); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// deploy adds a charm with just metadata.yaml to the default model and deploys it as name,
// with units units, straight through state.
func (e *testEnv) deploy(t *testing.T, name, meta string, units int) {
	t.Helper()
	ctx := context.Background()
	ch, err := e.st.AddCharm(ctx, e.model, charmArchive(t, map[string]string{"metadata.yaml": meta}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Deploy(ctx, e.model, state.DeployArgs{Name: name, CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
		t.Fatal(err)
	}
	if units > 0 {
		if _, err := e.st.AddUnits(ctx, e.model, name, units, nil); err != nil {
			t.Fatal(err)
		}
	}
}
