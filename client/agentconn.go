package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// AgentReconnectMax is the longest an agent process waits between two attempts to reach a
// controller that went away.
const AgentReconnectMax = 5 * time.Second

// NewAgentConn returns the connection an agent process shares between its agents: it reaches
// whichever of the controller's addresses answers, reconnects with backoff (up to
// AgentReconnectMax apart) when the controller goes away, and makes calls wait for the
// controller to be back instead of failing at once, so a hook calling a tool while the
// controller restarts only waits (each call's own deadline still bounds the wait).
func NewAgentConn(endpoints []string, caCert []byte) (*grpc.ClientConn, error) {
	conn, _, err := NewUpdatableAgentConn(endpoints, caCert)
	return conn, err
}

// NewUpdatableAgentConn is NewAgentConn with a function that replaces the controller's
// addresses (members added or removed): calls go on over the current connection while it
// lasts, and the next connection picks from the new addresses.
func NewUpdatableAgentConn(endpoints []string, caCert []byte) (*grpc.ClientConn, func([]string), error) {
	if len(endpoints) == 0 {
		return nil, nil, errors.New("no controller endpoint")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caCert) {
		return nil, nil, errors.New("cannot connect to controller: no valid CA certificate")
	}
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: ServerName, MinVersion: tls.VersionTLS12}
	r := manual.NewBuilderWithScheme("jujuagent")
	r.InitialState(resolver.State{Addresses: resolverAddrs(endpoints)})
	d := &dialer{}
	conn, err := grpc.NewClient(r.Scheme()+":///controller",
		grpc.WithResolvers(r),
		grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)),
		grpc.WithContextDialer(d.dial),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: AgentReconnectMax},
			MinConnectTimeout: 5 * time.Second,
		}),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true), grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
		grpc.WithChainUnaryInterceptor(retryTransient),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot connect to controller at %v: %w", endpoints, err)
	}
	update := func(endpoints []string) {
		if len(endpoints) > 0 {
			r.UpdateState(resolver.State{Addresses: resolverAddrs(endpoints)})
		}
	}
	return conn, update, nil
}

func resolverAddrs(endpoints []string) []resolver.Address {
	addrs := make([]resolver.Address, len(endpoints))
	for i, ep := range endpoints {
		addrs[i] = resolver.Address{Addr: ep}
	}
	return addrs
}
