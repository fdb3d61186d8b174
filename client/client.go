// Package client is the Go client of the controller API: it dials over TLS pinned to the
// controller's CA, authenticates every call, and turns gRPC errors back into the apierr
// sentinels, so that errors.Is(err, apierr.NotFound) works in callers. The CLI and the agents
// reach the controller only through this package.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
)

// ServerName is the name the controller's certificate is issued for; clients verify it instead
// of the address they dial, which is a loopback or cluster address.
const ServerName = "juju-controller"

// Metadata keys carrying the credentials of every call.
const (
	MetadataTag      = "x-juju-tag"
	MetadataPassword = "x-juju-password"
	MetadataModel    = "x-juju-model"
)

const (
	defaultTimeout     = 30 * time.Second
	defaultDialTimeout = 5 * time.Second
	// maxMessageSize bounds charm archives in both directions.
	maxMessageSize = 257 << 20
)

// Config says where the controller is and who is calling.
type Config struct {
	// Endpoint is the controller's host:port, e.g. 127.0.0.1:17070.
	Endpoint string
	// CACert is the controller's CA certificate (PEM); it is the only root trusted.
	CACert []byte
	// Tag names the caller: "user-admin", "machine-0", "unit-mysql-0".
	Tag      string
	Password string
	// Model is the UUID of the agent's model, sent as metadata; empty for users. It is also the
	// model used by methods that are given an empty model.
	Model string
	// Timeout bounds each call whose context has no deadline; 30s when zero.
	Timeout time.Duration
	// DialTimeout bounds the connection check of Dial; 5s when zero.
	DialTimeout time.Duration
	// OnDegraded, when set, is called with the controller's reason after each call that a
	// degraded controller served (header MetadataDegraded): reads still work but may be
	// stale, and writes fail with apierr.NoQuorum. Calls on several goroutines may call it at
	// once. Only connections this package makes (Dial, DialAny, NewConn) report it.
	OnDegraded func(reason string)
}

func (cfg Config) withDefaults() Config {
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = defaultDialTimeout
	}
	return cfg
}

// isUser reports whether the caller is a user (rather than an agent).
func (cfg Config) isUser() bool { return strings.HasPrefix(cfg.Tag, "user-") }

// Client is a connection to one controller with one identity. Its methods are safe for
// concurrent use.
type Client struct {
	cfg      Config
	conn     *grpc.ClientConn
	owned    bool
	dialer   *dialer
	callOpts []grpc.CallOption

	// loginDegraded is what the member said of its quorum at login ("" when it has it).
	loginDegraded string

	ctrl    jujupb.ControllerServiceClient
	app     jujupb.ApplicationServiceClient
	machine jujupb.MachineServiceClient
	status  jujupb.StatusServiceClient
	agent   jujupb.AgentServiceClient
	log     jujupb.LogServiceClient
	action  jujupb.ActionServiceClient
	res     jujupb.ResourceServiceClient
	bundle  jujupb.BundleServiceClient

	// login is the answer to check's Version call; set before Dial returns, never after.
	login *jujupb.VersionResponse
}

// Dial connects to the controller and checks that it answers: it waits for the connection to
// be ready, then users call Version (so a wrong password fails here). Each step is bounded by
// cfg.DialTimeout. A controller that cannot be reached gives an error wrapping
// apierr.Unavailable: "cannot connect to controller at <endpoint>: <reason>".
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	return DialAny(ctx, []Config{cfg})
}

// DialInterval is how long DialAny waits for one address to connect before it also tries the
// next, as Juju's DialAddressInterval: a dead or silent address delays the connection by this
// much, not by a whole DialTimeout.
const DialInterval = 50 * time.Millisecond

// DialAny connects to one controller that has several addresses (an HA controller, or one that
// moved), one Config per address with the same credentials. It starts connecting to each
// address in turn, DialInterval apart or as soon as the previous ones have failed, each
// bounded by its DialTimeout, and keeps the first connection made; the others are dropped.
// Only then does it check, as Dial does, that the controller answers the caller, so a wrong
// password is one failed login, not one per address. When no address can be reached the error
// wraps apierr.Unavailable and gives each address's reason.
func DialAny(ctx context.Context, cfgs []Config) (*Client, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("no controller endpoint")
	}
	withDefaults := make([]Config, len(cfgs))
	for i, cfg := range cfgs {
		withDefaults[i] = cfg.withDefaults()
	}
	c, err := connectFirst(ctx, withDefaults)
	if err != nil {
		return nil, err
	}
	if err := c.check(ctx); err != nil {
		_ = c.conn.Close()
		return nil, err
	}
	if c.loginDegraded != "" && len(withDefaults) > 1 {
		// A member cut off from its store's quorum takes no writes: another member that has
		// the quorum serves the caller better, if one answers soon.
		if other := dialHealthy(ctx, withDefaults, c.cfg.Endpoint); other != nil {
			_ = c.conn.Close()
			return other, nil
		}
	}
	return c, nil
}

// dialHealthy connects to the addresses other than skip and returns a client logged in to a
// member that is not degraded, or nil when none answers within a second.
func dialHealthy(ctx context.Context, cfgs []Config, skip string) *Client {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var rest []Config
	for _, cfg := range cfgs {
		if cfg.Endpoint != skip {
			cfg.DialTimeout = min(cfg.DialTimeout, time.Second)
			rest = append(rest, cfg)
		}
	}
	for len(rest) > 0 {
		c, err := connectFirst(ctx, rest)
		if err != nil {
			return nil
		}
		if c.check(ctx) == nil && c.loginDegraded == "" {
			return c
		}
		_ = c.conn.Close()
		rest = slices.DeleteFunc(rest, func(cfg Config) bool { return cfg.Endpoint == c.cfg.Endpoint })
	}
	return nil
}

// ConnectAny is DialAny without the login check: the first connection made to any address, for
// a caller whose own call checks the credentials and whose ctx is a fraction of a second (shell
// completion). A dead or silent address costs DialInterval, not the whole ctx.
func ConnectAny(ctx context.Context, cfgs []Config) (*Client, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("no controller endpoint")
	}
	withDefaults := make([]Config, len(cfgs))
	for i, cfg := range cfgs {
		withDefaults[i] = cfg.withDefaults()
	}
	return connectFirst(ctx, withDefaults)
}

// connectFirst races the addresses, staggered, and returns a client whose connection is ready.
func connectFirst(ctx context.Context, cfgs []Config) (*Client, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		i   int
		c   *Client
		err error
	}
	results := make(chan result, len(cfgs))
	errs := make([]error, len(cfgs))
	started, running := 0, 0
	start := func() {
		i := started
		started++
		running++
		go func() {
			c, err := connectOne(ctx, cfgs[i])
			results <- result{i, c, err}
		}()
	}
	start()
	next := time.NewTimer(DialInterval)
	defer next.Stop()
	for running > 0 {
		select {
		case r := <-results:
			running--
			if r.err == nil || !errors.Is(r.err, apierr.Unavailable) {
				// The others give up once ctx is cancelled; close what they made meanwhile.
				go func(n int) {
					for range n {
						if l := <-results; l.c != nil {
							_ = l.c.conn.Close()
						}
					}
				}(running)
				return r.c, r.err // an error here is a bad configuration, not a bad address
			}
			errs[r.i] = r.err
			if running == 0 && started < len(cfgs) {
				start()
				next.Reset(DialInterval)
			}
		case <-next.C:
			if started < len(cfgs) {
				start()
				next.Reset(DialInterval)
			}
		}
	}
	return nil, unreachable(cfgs, errs)
}

// connectOne connects to one address and waits, within its DialTimeout, until the connection is
// ready (TCP and TLS done).
func connectOne(ctx context.Context, cfg Config) (*Client, error) {
	d := &dialer{}
	conn, err := newConn(cfg, d)
	if err != nil {
		return nil, err
	}
	c := NewFromConn(conn, cfg)
	c.owned = true
	c.dialer = d
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := c.waitReady(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return c, nil
}

// unreachable is the error of a controller none of whose addresses could be reached: with one
// address, that address's error; with several, each address and its reason.
func unreachable(cfgs []Config, errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	var parts []string
	for i, err := range errs {
		reason := strings.TrimPrefix(err.Error(), "cannot connect to controller at "+cfgs[i].Endpoint+": ")
		parts = append(parts, cfgs[i].Endpoint+" ("+reason+")")
	}
	return apierr.Errorf(apierr.Unavailable, "cannot connect to controller at any of its addresses: %s", strings.Join(parts, ", "))
}

// NewConn returns a TLS connection to the controller that carries no credentials, to be shared
// by several clients made with NewFromConn. It does not connect until first used.
func NewConn(cfg Config) (*grpc.ClientConn, error) {
	return newConn(cfg.withDefaults(), &dialer{})
}

func newConn(cfg Config, d *dialer) (*grpc.ClientConn, error) {
	if cfg.Endpoint == "" {
		return nil, errors.New("no controller endpoint")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CACert) {
		return nil, fmt.Errorf("cannot connect to controller at %s: no valid CA certificate", cfg.Endpoint)
	}
	tlsCfg := &tls.Config{
		RootCAs:    pool,
		ServerName: ServerName,
		MinVersion: tls.VersionTLS12,
	}
	target := cfg.Endpoint
	if !strings.Contains(target, "://") {
		target = "passthrough:///" + target
	}
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(recordingCreds{TransportCredentials: credentials.NewTLS(tlsCfg), d: d}),
		grpc.WithContextDialer(d.dial),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
		grpc.WithChainUnaryInterceptor(reportDegradedUnary),
		grpc.WithChainStreamInterceptor(reportDegradedStream),
	)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to controller at %s: %w", cfg.Endpoint, err)
	}
	return conn, nil
}

// NewFromConn returns a client that uses conn with cfg's credentials, sent on every call (the
// connection itself carries none), so agents can share one connection between identities.
// Close on such a client does not close conn.
func NewFromConn(conn *grpc.ClientConn, cfg Config) *Client {
	cfg = cfg.withDefaults()
	md := map[string]string{MetadataTag: cfg.Tag, MetadataPassword: cfg.Password}
	if cfg.Model != "" {
		md[MetadataModel] = cfg.Model
	}
	c := &Client{
		cfg:  cfg,
		conn: conn,
		callOpts: []grpc.CallOption{
			grpc.PerRPCCredentials(callCredentials(md)),
			grpc.MaxCallRecvMsgSize(maxMessageSize),
			grpc.MaxCallSendMsgSize(maxMessageSize),
		},
		ctrl:    jujupb.NewControllerServiceClient(conn),
		app:     jujupb.NewApplicationServiceClient(conn),
		machine: jujupb.NewMachineServiceClient(conn),
		status:  jujupb.NewStatusServiceClient(conn),
		agent:   jujupb.NewAgentServiceClient(conn),
		log:     jujupb.NewLogServiceClient(conn),
		action:  jujupb.NewActionServiceClient(conn),
		res:     jujupb.NewResourceServiceClient(conn),
		bundle:  jujupb.NewBundleServiceClient(conn),
	}
	if cfg.OnDegraded != nil {
		c.callOpts = append(c.callOpts, degradedReport{report: cfg.OnDegraded})
	}
	return c
}

// Conn returns the underlying connection, to share it with NewFromConn.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Endpoint returns the address the client talks to.
func (c *Client) Endpoint() string { return c.cfg.Endpoint }

// LoginVersion is the controller's answer to Dial's login check (a user's Version call): its
// version and every member's API address, the one dialled first. Nil for agents and for clients
// made with NewFromConn, which make no such call.
func (c *Client) LoginVersion() *jujupb.VersionResponse { return c.login }

// Close closes the connection if the client made it (Dial); clients made with NewFromConn
// leave the shared connection open.
func (c *Client) Close() error {
	if !c.owned {
		return nil
	}
	return c.conn.Close()
}

// check makes sure the controller answers the caller: a user's Version call is a login, so a
// wrong password fails here. Agents have nothing to check beyond the connection. The connection
// is up by now (within DialTimeout), so the login has a call's time: a controller busy with a
// hundred thousand agents answers late, not never.
func (c *Client) check(ctx context.Context) error {
	if !c.cfg.isUser() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var md metadata.MD
	v, err := invoke(withoutDegradedReport(ctx), c, func(ctx context.Context, req *jujupb.VersionRequest, opts ...grpc.CallOption) (*jujupb.VersionResponse, error) {
		return c.ctrl.Version(ctx, req, append(opts, grpc.Header(&md))...)
	}, &jujupb.VersionRequest{})
	switch {
	case err == nil:
		c.login = v
		if d := md.Get(MetadataDegraded); len(d) > 0 {
			c.loginDegraded = d[0]
		}
		return nil
	case errors.Is(err, apierr.Unavailable):
		return err // mapErr already says why the controller cannot be reached
	case errors.Is(err, context.DeadlineExceeded):
		return apierr.Errorf(apierr.Unavailable, "cannot connect to controller at %s: no answer to the login after %s", c.cfg.Endpoint, c.cfg.Timeout)
	default:
		return fmt.Errorf("logging in to controller at %s: %w", c.cfg.Endpoint, err)
	}
}

// waitReady waits until the connection is ready or has failed.
func (c *Client) waitReady(ctx context.Context) error {
	c.conn.Connect()
	for {
		s := c.conn.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return c.connectError(ctx, errors.New(s.String()))
		}
		if !c.conn.WaitForStateChange(ctx, s) {
			return c.connectError(ctx, ctx.Err())
		}
	}
}

// connectError explains why the controller could not be reached, preferring the network
// error of the last dial over gRPC's wrapping of it.
func (c *Client) connectError(ctx context.Context, err error) error {
	var reason string
	switch {
	case c.dialer != nil && c.dialer.lastError() != nil:
		reason = netReason(c.dialer.lastError())
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		reason = fmt.Sprintf("no answer after %s", c.cfg.DialTimeout)
	default:
		reason = cleanReason(err.Error())
	}
	return apierr.Errorf(apierr.Unavailable, "cannot connect to controller at %s: %s", c.cfg.Endpoint, reason)
}

// callContext applies the per-call timeout unless ctx already has a deadline.
func (c *Client) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.cfg.Timeout)
}

// mapErr turns a gRPC error into one that wraps an apierr sentinel. Our server always attaches
// details to its errors, so an Unavailable without them is the transport failing: it reads like
// a failed dial.
func (c *Client) mapErr(err error) error {
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable && len(st.Details()) == 0 {
		return c.connectError(context.Background(), err)
	}
	return apierr.FromStatus(err)
}

// streamErr maps the error that ended a stream's Recv: context.Canceled as it is (the
// caller's Close or context), anything else as mapErr does.
func (c *Client) streamErr(err error) error {
	err = c.mapErr(err)
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	return err
}

// model returns m, or the client's own model when m is empty.
func (c *Client) model(m string) string {
	if m == "" {
		return c.cfg.Model
	}
	return m
}

// invoke runs one unary call with the client's credentials and timeout, mapping its error.
func invoke[Req, Resp any](ctx context.Context, c *Client, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx, cancel := c.callContext(ctx)
	defer cancel()
	resp, err := fn(ctx, req, c.callOpts...)
	if err != nil {
		var zero Resp
		return zero, c.mapErr(err)
	}
	return resp, nil
}

// callCredentials sends the caller's identity with every call; it refuses to travel in clear.
type callCredentials map[string]string

func (m callCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return m, nil
}

func (callCredentials) RequireTransportSecurity() bool { return true }

// dialer opens TCP connections for gRPC and remembers the last failure, whose text is clearer
// than gRPC's wrapping of it.
type dialer struct {
	mu   sync.Mutex
	last error
}

func (d *dialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", addr)
	d.record(err)
	return conn, err
}

func (d *dialer) record(err error) {
	d.mu.Lock()
	d.last = err
	d.mu.Unlock()
}

func (d *dialer) lastError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// recordingCreds is TLS that records a failed handshake in the dialer too: "x509: certificate
// signed by unknown authority" says more than the connection's TRANSIENT_FAILURE.
type recordingCreds struct {
	credentials.TransportCredentials
	d *dialer
}

func (r recordingCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := r.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		r.d.record(err)
	}
	return conn, info, err
}

func (r recordingCreds) Clone() credentials.TransportCredentials {
	return recordingCreds{TransportCredentials: r.TransportCredentials.Clone(), d: r.d}
}

// netReason shortens "dial tcp 127.0.0.1:1: connect: connection refused" to
// "connect: connection refused": the address is already in the message.
func netReason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// cleanReason strips gRPC's wrapping from a transport error message.
func cleanReason(msg string) string {
	msg = strings.TrimPrefix(msg, "rpc error: ")
	if i := strings.Index(msg, "desc = "); i >= 0 {
		msg = msg[i+len("desc = "):]
	}
	msg = strings.Trim(msg, `"`)
	msg = strings.TrimPrefix(msg, "transport: ")
	msg = strings.TrimPrefix(msg, "Error while dialing: ")
	msg = strings.TrimPrefix(msg, "error while dialing: ")
	return msg
}
