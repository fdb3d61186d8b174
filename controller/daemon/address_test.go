package daemon_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/bootstrap"
	"github.com/jujuclone/juju/controller/daemon"
)

// A controller started again as bootstrap started it (--api-addr 127.0.0.1:0) binds the address
// it had, so the client store written at bootstrap still reaches it; if that port is taken it
// fails and says so; an explicit port moves it.
func TestRestartKeepsAPIAddress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "controller")
	_, first, stop := runController(t, dir, nil)
	stop()

	// What `juju bootstrap` wrote to the client store.
	old := client.Config{Endpoint: first.APIAddr, CACert: []byte(first.CACert), Tag: first.AdminTag, Password: first.AdminPassword}
	c, second, stop := runController(t, dir, nil)
	if second.APIAddr != first.APIAddr {
		t.Fatalf("restarted controller moved from %s to %s", first.APIAddr, second.APIAddr)
	}
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	oldClient, err := client.Dial(context.Background(), old)
	if err != nil {
		t.Fatalf("the bootstrap-time client configuration no longer connects: %v", err)
	}
	if _, err := oldClient.ListModels(context.Background()); err != nil {
		t.Fatalf("listing models with the old configuration: %v", err)
	}
	oldClient.Close()
	stop()

	// Someone else holds the port: the controller refuses to start rather than move.
	squatter, err := net.Listen("tcp", first.APIAddr)
	if err != nil {
		t.Fatalf("taking the controller's port: %v", err)
	}
	err = runUntilReady(t, dir, "127.0.0.1:0")
	squatter.Close()
	if err == nil || !strings.Contains(err.Error(), "cannot keep this controller's API address "+first.APIAddr) ||
		!strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "--api-addr") {
		t.Fatalf("start with the port taken = %v, want a refusal naming the address", err)
	}

	// An explicit port is what the operator asked for: the controller moves and records it.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	moved := free.Addr().String()
	free.Close()
	_, third, stop := runControllerWith(t, dir, func(cfg *daemon.Config) { cfg.APIAddr = moved })
	stop()
	if third.APIAddr != moved {
		t.Fatalf("explicit --api-addr %s gave %s", moved, third.APIAddr)
	}
	recorded, err := bootstrap.ReadInfo(dir)
	if err != nil || recorded.APIAddr != moved {
		t.Fatalf("bootstrap.json records %q (%v), want %s", recorded.APIAddr, err, moved)
	}
}

// runUntilReady runs a controller on dir and returns the error it stopped with, or nil once it
// served (it is then stopped).
func runUntilReady(t *testing.T, dir, apiAddr string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- daemon.Run(ctx, daemon.Config{
			DataDir: dir, ControllerName: "test", APIAddr: apiAddr, NoFsync: true, AgentBinary: jujucPath,
			Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Ready: func(bootstrap.Info) { close(ready) },
		})
	}()
	select {
	case err := <-done:
		return err
	case <-ready:
		cancel()
		<-done
		return nil
	case <-time.After(30 * time.Second):
		t.Fatal("controller neither failed nor served")
		return nil
	}
}
