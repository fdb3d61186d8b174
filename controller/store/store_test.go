package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/controller/bootstrap"
)

func TestEmbeddedReadyAndReachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	// The same data through the client URL, as another jujud would see it with --etcd-endpoints.
	ext, err := Connect(ctx, []string{s.Endpoint()}, ConnectOptions{TLS: s.ClientTLS()})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	resp, err := ext.Client.Get(ctx, "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("got %v %v", resp, err)
	}
}

// The store's certificates come from the CA it is given (the controller's), are kept across
// restarts, and only the controller's user can read them.
func TestEmbeddedCertificatesFromTheControllersCA(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dataDir := t.TempDir()
	if _, _, err := bootstrap.EnsureCerts(dataDir); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, "etcd")
	s, err := StartEmbedded(ctx, dir, EmbeddedOptions{NoFsync: true, CADir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	files := s.ClientTLS()
	if files.CA != filepath.Join(dataDir, bootstrap.CACertFile) {
		t.Errorf("store trusts %s, want the controller's CA", files.CA)
	}
	if _, err := s.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(files.Cert)
	s.Close()
	if fi, err := os.Stat(filepath.Join(dir, "tls")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("tls dir: %v %v", fi, err)
	}
	for _, name := range []string{bootstrap.EtcdServerCertFile, bootstrap.EtcdServerKeyFile, bootstrap.EtcdClientCertFile, bootstrap.EtcdClientKeyFile} {
		if fi, err := os.Stat(filepath.Join(dir, "tls", name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", name, fi, err)
		}
	}
	// A restart keeps the certificates and the data.
	s, err = StartEmbedded(ctx, dir, EmbeddedOptions{NoFsync: true, CADir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if again, _ := os.ReadFile(s.ClientTLS().Cert); string(again) != string(first) {
		t.Error("client certificate reissued on restart")
	}
	if resp, err := s.Client.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("after restart: %v %v", resp, err)
	}
}

func TestConnectFailsFast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if _, err := Connect(ctx, []string{"http://127.0.0.1:1"}, ConnectOptions{Insecure: true}); err == nil {
		t.Fatal("connected to nothing")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

// Plain endpoints only when the user says so; TLS material only with TLS endpoints.
func TestConnectRefusesPlainHTTP(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		endpoints []string
		opts      ConnectOptions
		want      string
	}{
		{[]string{"http://127.0.0.1:2379"}, ConnectOptions{}, "etcd endpoint http://127.0.0.1:2379 is plain http: anyone who can reach it owns the controller; use https:// with --etcd-ca, --etcd-cert and --etcd-key, or --etcd-insecure"},
		{[]string{"https://127.0.0.1:2379", "http://127.0.0.1:2380"}, ConnectOptions{Insecure: true}, "etcd endpoints mix http:// and https:// (http://127.0.0.1:2380, https://127.0.0.1:2379)"},
		{[]string{"127.0.0.1:2379"}, ConnectOptions{}, `etcd endpoint "127.0.0.1:2379": want https://host:port`},
		{[]string{"unix:///tmp/etcd.sock"}, ConnectOptions{}, `etcd endpoint "unix:///tmp/etcd.sock": want https://host:port`},
		{[]string{"http://127.0.0.1:2379"}, ConnectOptions{Insecure: true, TLS: TLSFiles{CA: "ca.crt"}}, "--etcd-ca, --etcd-cert and --etcd-key need https:// endpoints"},
		{[]string{"https://127.0.0.1:2379"}, ConnectOptions{TLS: TLSFiles{Cert: "c.crt"}}, "etcd client certificate and key go together (--etcd-cert and --etcd-key)"},
	} {
		_, err := Connect(ctx, c.endpoints, c.opts)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v %+v: got %v, want %q", c.endpoints, c.opts, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error of more than one line: %q", err)
		}
	}
}
