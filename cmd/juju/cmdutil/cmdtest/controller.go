package cmdtest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/daemon"
	"github.com/jujuclone/juju/core/modelconfig"
)

// Controller is a real controller (daemon.Run: embedded etcd, TLS gRPC, workers, agents) running
// in the test's process. Only tests import this package, so the juju binary never links the
// controller.
type Controller struct {
	Info bootstrap.Info
	// DataDir is the controller's data directory (instances, logs, etcd).
	DataDir string
}

// StartController runs a controller until the test ends.
//
// Its agents link the hook tools to the test binary, so the calling package's TestMain must
// start with `if code, ran := hooktool.RunIfTool(); ran { os.Exit(code) }`.
func StartController(t *testing.T) *Controller {
	t.Helper()
	c := &Controller{DataDir: filepath.Join(t.TempDir(), "controller")}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan bootstrap.Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{
			DataDir: c.DataDir, ControllerName: "local", APIAddr: "127.0.0.1:0",
			NoFsync: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Ready: func(info bootstrap.Info) { ready <- info },
			// Tests of failed hooks expect them to wait for `juju resolved` (L-U2), as CI
			// bootstraps often ask with --model-default; a model may still opt in.
			ModelDefaults: map[string]string{modelconfig.AutomaticallyRetryHooks: "false"},
		})
	}()
	select {
	case c.Info = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("controller stopped: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("controller not ready within 30s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("controller did not stop")
		}
	})
	return c
}

// ModelUUID is the UUID of the model created at bootstrap with that name.
func (c *Controller) ModelUUID(name string) string {
	for _, m := range c.Info.Models {
		if m.Name == name {
			return m.UUID
		}
	}
	return ""
}

// UseStore points a fresh $JUJU_DATA (and a clean environment) at the controller, recorded as
// "local", current, with model "default" current; it returns that client store. The store has
// no data dir or pid for it, so no kill-controller can signal the test process.
func (c *Controller) UseStore(t *testing.T) *cmdutil.Store {
	t.Helper()
	data := filepath.Join(t.TempDir(), "juju")
	t.Setenv("JUJU_DATA", data)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	t.Setenv("JUJU_REPOSITORY", "")
	t.Setenv("NO_COLOR", "1")
	store := cmdutil.NewStore(data)
	models := map[string]cmdutil.ModelDetails{}
	for _, m := range c.Info.Models {
		models[m.Name] = cmdutil.ModelDetails{UUID: m.UUID, Type: "iaas"}
	}
	for _, err := range []error{
		store.AddController("local", cmdutil.ControllerDetails{
			UUID: c.Info.ControllerUUID, APIEndpoints: []string{c.Info.APIAddr}, CACert: c.Info.CACert,
			Cloud: "localhost", Region: "localhost",
		}),
		store.UpdateAccount("local", cmdutil.AccountDetails{User: strings.TrimPrefix(c.Info.AdminTag, "user-"), Password: c.Info.AdminPassword}),
		store.SetModels("local", models),
		store.SetCurrentController("local"),
		store.SetCurrentModel("local", "default"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return store
}
