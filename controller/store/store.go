// Package store starts or connects to the etcd that holds the controller's state: an embedded
// single-node etcd in the data directory by default, or an existing cluster.
package store

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Store is a connected etcd client plus, when embedded, the server behind it.
type Store struct {
	Client *clientv3.Client
	etcd   *embed.Etcd
}

// MaxTxnOps is how many operations (and how many comparisons) one transaction may hold in the
// embedded etcd; etcd's default is 128. A deploy writes its application, units and new
// machines in one transaction, whole or not at all, and a unit with a new machine is three
// writes (limits.MaxUnitsPerCall units per call): one transaction that etcd applies as one raft
// entry beats a recovery worker finishing half-done deploys. An external cluster
// (--etcd-endpoints) needs --max-txn-ops of at least this for deploys of more than about 40
// units per call; below that, etcd refuses the transaction and nothing is written.
const MaxTxnOps = 4096

// EmbeddedOptions tune the embedded server.
type EmbeddedOptions struct {
	// NoFsync trades durability for speed; only for tests and benchmarks.
	NoFsync bool
}

// StartEmbedded starts a single-node etcd in dir (created 0700) and returns a client over loopback.
// Election timing is short because one member has no peer to time out: ready in tens of ms.
func StartEmbedded(ctx context.Context, dir string, opts EmbeddedOptions) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data dir: %w", err)
	}
	var lastErr error
	// A free port can be taken between probing and binding; try a few times.
	for attempt := 0; attempt < 5; attempt++ {
		s, err := startEmbedded(ctx, dir, opts)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, lastErr
}

func startEmbedded(ctx context.Context, dir string, opts EmbeddedOptions) (*Store, error) {
	clientURL, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}
	peerURL, err := freeLoopbackURL()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "jujud"
	cfg.Dir = filepath.Join(dir, "member")
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	cfg.LogLevel = "error"
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = opts.NoFsync
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"
	cfg.MaxTxnOps = MaxTxnOps
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("starting embedded etcd: %w", err)
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("starting embedded etcd: not ready after 30s")
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	// A loopback TCP client rather than etcd's in-process one: the in-process client can
	// deadlock for good when many watches are cancelled at once on its shared stream (etcd
	// issues #18879, #20716), and agents' watches come and go by the thousand.
	endpoint := "http://" + e.Clients[0].Addr().String()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Context: ctx, Logger: zap.NewNop(),
	})
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("connecting to embedded etcd: %w", err)
	}
	return &Store{Client: cli, etcd: e}, nil
}

// Connect uses an existing etcd cluster.
func Connect(ctx context.Context, endpoints []string) (*Store, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Context:     ctx,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v: %w", endpoints, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Get(pingCtx, "/juju/controller"); err != nil {
		cli.Close()
		return nil, fmt.Errorf("connecting to etcd %v: %w", endpoints, err)
	}
	return &Store{Client: cli}, nil
}

// Endpoint is the embedded server's client URL, or "" for an external cluster.
func (s *Store) Endpoint() string {
	if s.etcd == nil || len(s.etcd.Clients) == 0 {
		return ""
	}
	return "http://" + s.etcd.Clients[0].Addr().String()
}

// Close closes the client and stops the embedded server, if any.
func (s *Store) Close() error {
	err := s.Client.Close()
	if s.etcd != nil {
		s.etcd.Close()
	}
	return err
}

func freeLoopbackURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	return url.URL{Scheme: "http", Host: addr}, nil
}
