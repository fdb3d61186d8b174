// Package store starts or connects to the etcd that holds the controller's state: an embedded
// single-node etcd in the data directory by default, or an existing cluster.
//
// The store is the controller's alone. The embedded etcd serves its client and peer URLs on
// loopback only over mutual TLS: it accepts only clients whose certificate its CA signed, and
// those certificates' keys are 0600 in a 0700 directory (see docs/architecture.md, Security).
package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/jujuclone/juju/controller/bootstrap"
)

// Store is a connected etcd client plus, when embedded, the server behind it.
type Store struct {
	Client *clientv3.Client
	etcd   *embed.Etcd
	certs  bootstrap.EtcdCerts
}

// TLSFiles are a client's TLS material for an etcd cluster: the CA that signed the servers'
// certificates, and the client's certificate and key (mutual TLS). Paths; empty when unused.
type TLSFiles struct {
	CA, Cert, Key string
}

// ConnectOptions say how to reach an existing cluster.
type ConnectOptions struct {
	TLS TLSFiles
	// Insecure allows plain http:// endpoints: anyone who reaches them owns the controller.
	Insecure bool
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
	// CADir holds the CA (bootstrap.CACertFile, bootstrap.CAKeyFile) that signs the store's
	// certificates: the controller's data directory. Empty: a CA of the store's own in
	// <dir>/tls (tests, benchmarks).
	CADir string
}

// StartEmbedded starts a single-node etcd in dir (created 0700) and returns a client over
// loopback. Client and peer URLs take only mutual TLS, with certificates issued on first start
// into <dir>/tls (0700, files 0600) by the CA of opts.CADir.
// Election timing is short because one member has no peer to time out: ready in tens of ms.
func StartEmbedded(ctx context.Context, dir string, opts EmbeddedOptions) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("securing etcd data dir: %w", err)
	}
	caDir := opts.CADir
	if caDir == "" {
		caDir = filepath.Join(dir, "tls")
	}
	certs, err := bootstrap.EnsureEtcdCerts(caDir, filepath.Join(dir, "tls"))
	if err != nil {
		return nil, fmt.Errorf("issuing the store's certificates: %w", err)
	}
	var lastErr error
	// A free port can be taken between probing and binding; try a few times.
	for attempt := 0; attempt < 5; attempt++ {
		s, err := startEmbedded(ctx, dir, opts, certs)
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

func startEmbedded(ctx context.Context, dir string, opts EmbeddedOptions, certs bootstrap.EtcdCerts) (*Store, error) {
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
	// Mutual TLS on both URLs: a client or peer without a certificate of the CA fails the
	// handshake. The peer URL is bound to loopback too, and a single member never dials it.
	tlsInfo := transport.TLSInfo{
		CertFile: certs.ServerCert, KeyFile: certs.ServerKey, TrustedCAFile: certs.CA, ClientCertAuth: true,
	}
	cfg.ClientTLSInfo = tlsInfo
	cfg.PeerTLSInfo = tlsInfo
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
	// One TLS handshake per client, then one HTTP/2 connection: no cost per request.
	s := &Store{etcd: e, certs: certs}
	tlsCfg, err := clientTLS(s.ClientTLS())
	if err != nil {
		e.Close()
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{s.Endpoint()}, TLS: tlsCfg, DialTimeout: 5 * time.Second, Context: ctx, Logger: zap.NewNop(),
		DialOptions: clientDialOptions(),
	})
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("connecting to embedded etcd: %w", err)
	}
	s.Client = cli
	return s, nil
}

// Connect uses an existing etcd cluster: over TLS (https:// endpoints, with opts.TLS), or
// over plain http:// only when opts.Insecure says so.
func Connect(ctx context.Context, endpoints []string, opts ConnectOptions) (*Store, error) {
	secure, err := checkEndpoints(endpoints, opts)
	if err != nil {
		return nil, err
	}
	var tlsCfg *tls.Config
	if secure {
		if tlsCfg, err = clientTLS(opts.TLS); err != nil {
			return nil, err
		}
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         tlsCfg,
		DialTimeout: 5 * time.Second,
		Context:     ctx,
		Logger:      zap.NewNop(),
		DialOptions: clientDialOptions(),
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

// checkEndpoints refuses plain endpoints unless opts.Insecure, and mixed or unknown schemes.
// It reports whether the endpoints take TLS.
func checkEndpoints(endpoints []string, opts ConnectOptions) (bool, error) {
	var plain, secure []string
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" {
			return false, fmt.Errorf("etcd endpoint %q: want https://host:port", ep)
		}
		switch u.Scheme {
		case "https":
			secure = append(secure, ep)
		case "http":
			plain = append(plain, ep)
		default:
			return false, fmt.Errorf("etcd endpoint %q: want https://host:port, not %s://", ep, u.Scheme)
		}
	}
	switch {
	case len(plain) > 0 && len(secure) > 0:
		return false, fmt.Errorf("etcd endpoints mix http:// and https:// (%s, %s)", plain[0], secure[0])
	case len(plain) > 0 && !opts.Insecure:
		return false, fmt.Errorf("etcd endpoint %s is plain http: anyone who can reach it owns the controller; use https:// with --etcd-ca, --etcd-cert and --etcd-key, or --etcd-insecure", plain[0])
	case len(plain) > 0 && opts.TLS != (TLSFiles{}):
		return false, errors.New("--etcd-ca, --etcd-cert and --etcd-key need https:// endpoints")
	}
	return len(secure) > 0, nil
}

// clientTLS is the TLS configuration of a client with files: the CA pinned (else the system's
// roots) and the client certificate presented, when given.
func clientTLS(files TLSFiles) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if files.CA != "" {
		pemBytes, err := os.ReadFile(files.CA)
		if err != nil {
			return nil, fmt.Errorf("reading etcd CA: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("etcd CA %s: no PEM certificate", files.CA)
		}
	}
	if (files.Cert == "") != (files.Key == "") {
		return nil, errors.New("etcd client certificate and key go together (--etcd-cert and --etcd-key)")
	}
	if files.Cert != "" {
		pair, err := tls.LoadX509KeyPair(files.Cert, files.Key)
		if err != nil {
			return nil, fmt.Errorf("loading etcd client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// Endpoint is the embedded server's client URL, or "" for an external cluster.
func (s *Store) Endpoint() string {
	if s.etcd == nil || len(s.etcd.Clients) == 0 {
		return ""
	}
	return "https://" + s.etcd.Clients[0].Addr().String()
}

// ClientTLS is the material a client of the embedded server needs (a second controller over
// Endpoint, as with --etcd-endpoints); zero for an external cluster.
func (s *Store) ClientTLS() TLSFiles {
	if s.etcd == nil {
		return TLSFiles{}
	}
	return TLSFiles{CA: s.certs.CA, Cert: s.certs.ClientCert, Key: s.certs.ClientKey}
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
	return url.URL{Scheme: "https", Host: addr}, nil
}
