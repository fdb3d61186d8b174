// Package store starts or connects to the etcd that holds the controller's state: an embedded
// etcd member in the data directory by default (alone, or one of the controller members'
// cluster, see cluster.go), or an existing cluster.
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
	// name and peerURL are the embedded member's.
	name, peerURL string
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
const MaxTxnOps = 32_768

// MaxRequestBytes is the embedded etcd's --max-request-bytes (etcd's default is 1.5 MiB): a
// deploy of 10,000 units with their machines is one transaction of some 5 MiB. Every other
// transaction stays within etcd's default (controller/state), so that an external cluster
// with it takes everything but the largest deploys, which it refuses whole.
const MaxRequestBytes = 16 << 20

// maxCallSendBytes is what an etcd client sends in one message: a request of MaxRequestBytes
// and its framing (clientv3's default is 2 MiB).
const maxCallSendBytes = MaxRequestBytes + 1<<20

// EmbeddedOptions tune the embedded server.
type EmbeddedOptions struct {
	// NoFsync trades durability for speed; only for tests and benchmarks.
	NoFsync bool
	// CADir holds the CA (bootstrap.CACertFile, bootstrap.CAKeyFile) that signs the store's
	// certificates: the controller's data directory. Empty: a CA of the store's own in
	// <dir>/tls (tests, benchmarks). Members of one cluster need the same CA: they trust
	// each other's peer certificates through it.
	CADir string
	// Name is the etcd member's name, unique in its cluster. Empty: the name the member
	// had (recorded in <dir>/urls.json), else DefaultMemberName, the bootstrap member's.
	Name string
}

// DefaultMemberName is the etcd name of the bootstrap member; data directories made before
// members had names hold a member of this name.
const DefaultMemberName = "jujud"

// Raft timing of every embedded member: a heartbeat each tickMs, an election when a follower
// has heard no leader for electionMs (etcd draws the real timeout between electionMs and
// twice that, so that followers do not all campaign at once). A killed leader is replaced
// within 0.75-1.5 s plus a vote round trip; a stopped one hands its leadership over at once.
// 750 ms is 15 heartbeats: a member of a loaded 2-core host must stall for that long before a
// healthy leader is voted out, and pre-vote (on by default) keeps a member that merely
// stalled from deposing it. The same values for a single member: it may become a cluster's
// first member later, without a restart, and members with different timing flap (a leader
// with a short timeout steps down whenever its peers answer its heartbeats late). The cost:
// a single member waits for its random part at start, 0.3 s more than with 10/100 ms on
// average.
const (
	tickMs     = 50
	electionMs = 750
)

// StartEmbedded starts the etcd member in dir (created 0700) and returns a client of it over
// loopback. A new dir gets a new single-member cluster; an existing one restarts its member,
// alone or in a cluster (see JoinEmbedded). Client and peer URLs take only mutual TLS, with
// certificates issued on first start into <dir>/tls (0700, files 0600) by the CA of
// opts.CADir. The URLs are picked on first start and kept in <dir>/urls.json: peers know a
// member by them. A restart whose recorded port is taken fails if the member has peers; a
// lone member moves to new ports.
func StartEmbedded(ctx context.Context, dir string, opts EmbeddedOptions) (*Store, error) {
	certs, err := prepareDir(dir, opts)
	if err != nil {
		return nil, err
	}
	saved, err := readURLs(dir)
	if err != nil {
		return nil, err
	}
	name, err := memberName(dir, opts, saved)
	if err != nil {
		return nil, err
	}
	if saved != nil && !hasMember(dir) {
		// Recorded only by a first start that succeeded, or by a join before its add.
		return nil, fmt.Errorf("%s records etcd member %s but %s holds no data of it: a join that did not finish; join again", filepath.Join(dir, urlsFile), name, dir)
	}
	if saved != nil {
		saved.Name = name
		s, err := startStore(ctx, dir, opts, certs, *saved, "")
		if err == nil || !addrInUse(err) {
			return s, err
		}
		peers, perr := storedMembers(dir)
		if perr != nil {
			return nil, fmt.Errorf("%w (and %v)", err, perr)
		}
		if peers > 1 {
			return nil, fmt.Errorf("cannot keep etcd member %s's URLs (client %s, peer %s, recorded in %s): its %d-member cluster knows it by them: %w; free the port",
				name, saved.Client, saved.Peer, filepath.Join(dir, urlsFile), peers, err)
		}
		// A lone member: nobody knows its URLs, so new ones do (as before urls.json).
	} else if hasMember(dir) {
		// A member from before urls.json: new ports are fine for a lone one only.
		peers, err := storedMembers(dir)
		if err != nil {
			return nil, err
		}
		if peers > 1 {
			return nil, fmt.Errorf("the etcd member in %s belongs to a %d-member cluster but has no %s: its URLs are lost; remove it from the cluster and join again", dir, peers, urlsFile)
		}
	}
	var lastErr error
	// A free port can be taken between probing and binding; try a few times.
	for attempt := 0; attempt < 5; attempt++ {
		m, err := newMemberURLs(name)
		if err != nil {
			return nil, err
		}
		s, err := startStore(ctx, dir, opts, certs, m, "")
		if err == nil {
			if err := writeURLs(dir, m); err != nil {
				s.Close()
				return nil, err
			}
			return s, nil
		}
		lastErr = err
		if !addrInUse(err) {
			break
		}
	}
	return nil, lastErr
}

// prepareDir creates dir (0700) and the member's certificates, issued by the CA of
// opts.CADir.
func prepareDir(dir string, opts EmbeddedOptions) (bootstrap.EtcdCerts, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return bootstrap.EtcdCerts{}, fmt.Errorf("creating etcd data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return bootstrap.EtcdCerts{}, fmt.Errorf("securing etcd data dir: %w", err)
	}
	caDir := opts.CADir
	if caDir == "" {
		caDir = filepath.Join(dir, "tls")
	}
	certs, err := bootstrap.EnsureEtcdCerts(caDir, filepath.Join(dir, "tls"))
	if err != nil {
		return certs, fmt.Errorf("issuing the store's certificates: %w", err)
	}
	return certs, nil
}

// startStore starts the member and connects a client to it. initialCluster is empty for a
// new single-member cluster or a restart, else the cluster the member joins.
func startStore(ctx context.Context, dir string, opts EmbeddedOptions, certs bootstrap.EtcdCerts, m memberURLs, initialCluster string) (*Store, error) {
	e, err := startMember(ctx, dir, opts, certs, m, initialCluster)
	if err != nil {
		return nil, err
	}
	s, err := newStore(ctx, e, certs, m)
	if err != nil {
		e.Close()
		return nil, err
	}
	return s, nil
}

func startMember(ctx context.Context, dir string, opts EmbeddedOptions, certs bootstrap.EtcdCerts, m memberURLs, initialCluster string) (*embed.Etcd, error) {
	clientURL, err := url.Parse(m.Client)
	if err != nil {
		return nil, fmt.Errorf("etcd client URL %q: %w", m.Client, err)
	}
	peerURL, err := url.Parse(m.Peer)
	if err != nil {
		return nil, fmt.Errorf("etcd peer URL %q: %w", m.Peer, err)
	}
	cfg := embed.NewConfig()
	cfg.Name = m.Name
	cfg.Dir = filepath.Join(dir, "member")
	cfg.TickMs = tickMs
	cfg.ElectionMs = electionMs
	cfg.LogLevel = "error"
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = opts.NoFsync
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	// On a restart etcd ignores the initial cluster: the member's data says which it is in.
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if initialCluster != "" {
		cfg.InitialCluster = initialCluster
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"
	cfg.MaxTxnOps = MaxTxnOps
	cfg.MaxRequestBytes = MaxRequestBytes
	// Mutual TLS on both URLs: a client or peer without a certificate of the CA fails the
	// handshake. The server certificate is also the member's client certificate towards its
	// peers (it has both usages), so members of one CA trust each other and nobody else.
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
		return e, nil
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
}

// newStore connects a client to the member e, and to it only: a member cut off from its
// cluster's majority then sees its own reads and writes fail, rather than being served by
// the others.
func newStore(ctx context.Context, e *embed.Etcd, certs bootstrap.EtcdCerts, m memberURLs) (*Store, error) {
	// A loopback TCP client rather than etcd's in-process one for watches, leases and the
	// cluster: the in-process client can deadlock for good when many watches are cancelled at
	// once on its shared stream (etcd issues #18879, #20716), and agents' watches come and go
	// by the thousand. Reads and writes are function calls (localkv.go).
	// One TLS handshake per client, then one HTTP/2 connection: no cost per request.
	s := &Store{etcd: e, certs: certs, name: m.Name, peerURL: m.Peer}
	tlsCfg, err := clientTLS(s.ClientTLS())
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{s.Endpoint()}, TLS: tlsCfg, DialTimeout: 5 * time.Second, Context: ctx, Logger: zap.NewNop(),
		DialOptions: clientDialOptions(), MaxCallSendMsgSize: maxCallSendBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to embedded etcd: %w", err)
	}
	// Reads and writes by function calls (localkv.go); the connection serves the rest.
	cli.KV = clientv3.NewKVFromKVClient(newLocalKV(e), cli)
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
		DialOptions: clientDialOptions(), MaxCallSendMsgSize: maxCallSendBytes,
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

// Close closes the client and stops the embedded server, if any. A leader of a cluster
// first hands its leadership over (see handOver).
func (s *Store) Close() error {
	err := s.Client.Close()
	if s.etcd != nil {
		if !s.handOver() {
			// etcd's own hand-over, in Close, would wait up to 6.5 s for a peer that died a
			// moment ago: none then, as when the process is killed.
			s.etcd.Server.HardStop()
		}
		s.etcd.Close()
	}
	return err
}

// newMemberURLs picks a free loopback port for each of a member's URLs, holding the first
// while picking the second so that they differ.
func newMemberURLs(name string) (memberURLs, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return memberURLs{}, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
	}
	return memberURLs{Name: name, Client: "https://" + ls[0].Addr().String(), Peer: "https://" + ls[1].Addr().String()}, nil
}

// freeLoopbackURL is an https URL on a loopback port that was free a moment ago.
func freeLoopbackURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	return url.URL{Scheme: "https", Host: addr}, nil
}
