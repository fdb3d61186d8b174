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
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
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

	ctrl    jujupb.ControllerServiceClient
	app     jujupb.ApplicationServiceClient
	machine jujupb.MachineServiceClient
	status  jujupb.StatusServiceClient
	agent   jujupb.AgentServiceClient
	log     jujupb.LogServiceClient
	action  jujupb.ActionServiceClient
}

// Dial connects to the controller and checks that it answers: users call Version (so a wrong
// password fails here), agents wait for the connection to be ready. Both are bounded by
// cfg.DialTimeout. A controller that cannot be reached gives an error wrapping
// apierr.Unavailable: "cannot connect to controller at <endpoint>: <reason>".
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	d := &dialer{}
	conn, err := newConn(cfg, d)
	if err != nil {
		return nil, err
	}
	c := NewFromConn(conn, cfg)
	c.owned = true
	c.dialer = d
	if err := c.check(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return c, nil
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
		grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)),
		grpc.WithContextDialer(d.dial),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
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
	return &Client{
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
	}
}

// Conn returns the underlying connection, to share it with NewFromConn.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Endpoint returns the address the client talks to.
func (c *Client) Endpoint() string { return c.cfg.Endpoint }

// Close closes the connection if the client made it (Dial); clients made with NewFromConn
// leave the shared connection open.
func (c *Client) Close() error {
	if !c.owned {
		return nil
	}
	return c.conn.Close()
}

// check makes sure the controller answers within DialTimeout.
func (c *Client) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	if c.cfg.isUser() {
		_, err := c.Version(ctx)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, apierr.Unavailable):
			return err // mapErr already says why the controller cannot be reached
		case errors.Is(err, context.DeadlineExceeded):
			return c.connectError(ctx, err)
		default:
			return fmt.Errorf("logging in to controller at %s: %w", c.cfg.Endpoint, err)
		}
	}
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
	d.mu.Lock()
	d.last = err
	d.mu.Unlock()
	return conn, err
}

func (d *dialer) lastError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
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
