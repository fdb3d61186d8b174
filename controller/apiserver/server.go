// Package apiserver serves the gRPC API: thin handlers that validate, call state and map errors
// (through apierr, in the interceptors).
package apiserver

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/logsink"
	"github.com/jujuclone/juju/controller/state"
)

// Config is what the API server needs.
type Config struct {
	State          *state.State
	TLS            *tls.Config
	ControllerName string
	Cloud, Region  string
	Now            func() time.Time
	// Context, when set, bounds background work: forgetting the cached credentials of removed
	// entities.
	Context context.Context
	// ForceGrace is how long forced removals wait for agents (default DefaultForceGrace).
	ForceGrace time.Duration
	// LogSink keeps the model logs (LogService); without one LogService answers NotSupported.
	LogSink *logsink.Sink
	// Log is the controller's log, where failed logins are reported; none when nil.
	Log *slog.Logger
	// PresenceGrace is how long an agent may be without a watch before status shows it lost
	// (default DefaultPresenceGrace), counted from the server's start or the agent's last watch.
	PresenceGrace time.Duration
	// MemberID names this controller member in the store's presence records (the agents with
	// a watch open on it, which every member reads for status); empty: a random id.
	MemberID string
	// PresenceLease is the lease this member's presence records are put on: the daemon keeps it
	// alive (TTL about PresenceGrace), so that a killed member's agents turn lost on the other
	// members once it runs out. The API server never revokes it. 0: the server grants a lease of
	// its own (TTL PresenceGrace) and keeps it alive while Context lasts.
	PresenceLease clientv3.LeaseID
	// Members manages the controller's members (enable-ha); nil: one member, no HA.
	Members Members
	// Degraded says why this member cannot serve writes now ("" while it can): it has lost the
	// store's quorum (health.Monitor.Degraded). Then reads are served from this member's copy
	// with a warning header, and writes refused with apierr.NoQuorum (degraded.go). nil: never.
	Degraded func() string
	// Peers lists the API addresses of the controller's other live members (LivePeers), whose
	// model logs DebugLog merges with this member's (logpeers.go); nil or none: this member's
	// only. CACert (PEM) is the CA that issued the members' certificates.
	Peers  func(ctx context.Context) ([]string, error)
	CACert []byte
	// Capacity says why this controller's processes could not take more agents (an error that
	// is fdlimit.ErrTooManyOpenFiles: jujud or the agent host near its open-file limit), asked
	// before units or machines are added; nil: they always can.
	Capacity func(ctx context.Context) error
}

// streamWorkers is how many goroutines the server keeps to run calls on. A 10,000-unit deploy
// has dozens of calls in flight at once, most waiting on the store's commit.
const streamWorkers = 64

// New builds the gRPC server with authentication and every service registered.
func New(cfg Config) *grpc.Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ForceGrace == 0 {
		cfg.ForceGrace = DefaultForceGrace
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.PresenceGrace == 0 {
		cfg.PresenceGrace = DefaultPresenceGrace
	}
	closing := cfg.Context
	if closing == nil {
		closing = context.Background()
	}
	auth := &authenticator{st: cfg.State, log: cfg.Log, throttle: newLoginThrottle(cfg.Now), cache: map[string]cachedHash{}, closing: closing}
	if cfg.Context != nil {
		go auth.forgetRemoved(cfg.Context)
	}
	gate := newDegradedGate(cfg.Degraded)
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(cfg.TLS)),
		// Authentication before any refusal; the degraded verdict is taken before it, so
		// that a degraded member checks credentials without the quorum (degraded.go).
		grpc.ChainUnaryInterceptor(gate.markUnary, auth.unary, gate.unary),
		grpc.ChainStreamInterceptor(gate.markStream, auth.stream, gate.stream),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.MaxRecvMsgSize(maxMessageSize), grpc.MaxSendMsgSize(maxMessageSize),
		// Calls run on kept goroutines whose stacks have grown already: a goroutine per call
		// grew its stack anew each time (4 % of jujud's CPU in a 10,000-unit deploy, issue
		// 16). When all are busy (calls waiting on the store), a call gets a goroutine of its own.
		grpc.NumStreamWorkers(streamWorkers),
	)
	hubCtx := cfg.Context
	if hubCtx == nil {
		hubCtx = context.Background()
	}
	// Presence is shared with the controller's other members through the store (presence.go).
	presence := newSharedPresence(hubCtx, cfg.State, cfg.MemberID, cfg.PresenceLease, cfg.Now, cfg.PresenceGrace, cfg.Log)
	b := &service{st: cfg.State, cfg: cfg, hub: cfg.State.NewHub(hubCtx), presence: presence}
	pb.RegisterControllerServiceServer(srv, &controllerServer{service: b})
	pb.RegisterApplicationServiceServer(srv, &applicationServer{service: b})
	pb.RegisterMachineServiceServer(srv, &machineServer{service: b})
	pb.RegisterStatusServiceServer(srv, &statusServer{service: b, auth: auth})
	pb.RegisterAgentServiceServer(srv, &agentServer{service: b})
	pb.RegisterLogServiceServer(srv, &logServer{service: b})
	pb.RegisterCompletionServiceServer(srv, &completionServer{service: b})
	pb.RegisterActionServiceServer(srv, &actionServer{service: b})
	pb.RegisterKeyServiceServer(srv, &keyServer{service: b})
	pb.RegisterSSHAgentServiceServer(srv, &sshAgentServer{service: b})
	pb.RegisterResourceServiceServer(srv, &resourceServer{service: b})
	pb.RegisterBundleServiceServer(srv, &bundleServer{service: b})
	return srv
}

// service holds what every service shares.
type service struct {
	st  *state.State
	cfg Config
	hub *state.Hub // every Watch call shares one store watch per model
	// presence: which agents have a watch open (status shows the others lost).
	presence *presence
}

// checkCapacity refuses a call that adds units or machines while the processes that would run
// their agents are near their open-file limit: refused whole, before anything is written, rather
// than agents failing to start (or a process crashing) later.
func (b *service) checkCapacity(ctx context.Context, what string) error {
	if b.cfg.Capacity == nil {
		return nil
	}
	if err := b.cfg.Capacity(ctx); err != nil {
		return apierr.Errorf(apierr.Unavailable, "cannot add %s: %v", what, err)
	}
	return nil
}

// model resolves a model reference (name or UUID) to its document.
func (b *service) model(ctx context.Context, ref string) (*storepb.Model, error) {
	if ref == "" {
		return nil, apierr.Errorf(apierr.NotValid, "no model specified")
	}
	return b.st.Model(ctx, ref)
}

func statusInfo(s *storepb.Status) *pb.StatusInfo {
	if s == nil {
		return nil
	}
	return &pb.StatusInfo{Status: s.Status, Message: s.Message, Since: s.Since}
}
