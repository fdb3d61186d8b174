package apiserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/controller/state"
)

// Metadata keys that carry credentials on every call.
const (
	MetaTag      = "x-juju-tag"
	MetaPassword = "x-juju-password"
	MetaModel    = "x-juju-model"
)

// AdminTag is the controller's one user.
const AdminTag = "user-admin"

// Entity is the authenticated caller.
type Entity struct {
	Tag   string
	Kind  string // "user", "machine" or "unit"
	ID    string // machine id or unit name
	Model string // agents: their model's UUID
}

// IsAdmin reports whether the caller is the admin user.
func (e Entity) IsAdmin() bool { return e.Kind == "user" }

type entityKey struct{}

func entityFrom(ctx context.Context) Entity {
	e, _ := ctx.Value(entityKey{}).(Entity)
	return e
}

// authenticator checks credentials against the store, caching stored hashes briefly so an agent's
// calls do not each cost a store read. Failed logins are logged and throttled (throttle.go).
type authenticator struct {
	st       *state.State
	log      *slog.Logger
	throttle *loginThrottle
	// closing ends every stream (watches, log shipping) when the server stops, so that a
	// graceful stop does not wait for agents that never hang up.
	closing context.Context
	mu      sync.Mutex
	cache   map[string]cachedHash
}

type cachedHash struct {
	hash    string
	expires time.Time
}

const authCacheTTL = 5 * time.Second

// parseTag turns "machine-3" / "unit-my-app-0" / "user-admin" into kind and id.
func parseTag(tag string) (kind, id string, ok bool) {
	kind, rest, found := strings.Cut(tag, "-")
	if !found || rest == "" {
		return "", "", false
	}
	switch kind {
	case "user", "machine":
		return kind, rest, true
	case "unit":
		i := strings.LastIndex(rest, "-")
		if i <= 0 || i == len(rest)-1 {
			return "", "", false
		}
		return kind, rest[:i] + "/" + rest[i+1:], true
	}
	return "", "", false
}

func (a *authenticator) authenticate(ctx context.Context) (Entity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	tag, password, model := first(MetaTag), first(MetaPassword), first(MetaModel)
	if tag == "" || password == "" {
		return Entity{}, apierr.Errorf(apierr.Unauthenticated, "no credentials provided")
	}
	var addr net.Addr
	source := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		addr, source = p.Addr, p.Addr.String()
	}
	key := throttleKeyFor(addr, tag)
	// A throttled caller is refused before its password is looked at, so waiting out the
	// lockout is the only way to make another guess.
	wait, known := a.throttle.wait(key)
	if wait > 0 {
		retry := (wait + time.Second - 1).Truncate(time.Second) // whole seconds, rounded up
		return Entity{}, apierr.Errorf(apierr.Throttled, "too many failed logins of %s from %s, retry in %s", key.tag, key.source, retry)
	}
	kind, id, ok := parseTag(tag)
	if !ok || (kind == "user" && tag != AdminTag) || (kind != "user" && model == "") {
		return Entity{}, a.failed(key, source, model, "invalid entity name")
	}
	hashed := state.HashPassword(password)
	matches := func(stored string) bool {
		return stored != "" && subtle.ConstantTimeCompare([]byte(stored), []byte(hashed)) == 1
	}
	stored, cached, err := a.storedHash(ctx, kind, id, model, false)
	if err == nil && !matches(stored) && cached {
		// The cached hash may predate a new credential (a redeployed unit): ask the store.
		stored, _, err = a.storedHash(ctx, kind, id, model, true)
	}
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return Entity{}, err
	case err != nil && !errors.Is(err, apierr.NotFound) && !errors.Is(err, apierr.NotValid):
		// The store could not answer: not the caller's failure, so not counted against it.
		a.log.Warn("cannot check a login", "source", source, "user", key.tag, "err", err)
		return Entity{}, apierr.Errorf(apierr.Unavailable, "the controller cannot check credentials now: its store does not answer")
	case err != nil:
		return Entity{}, a.failed(key, source, model, "unknown entity")
	case !matches(stored):
		return Entity{}, a.failed(key, source, model, "wrong password")
	}
	if known {
		a.throttle.succeeded(key) // the common case, an agent's call, takes one lock, not two
	}
	return Entity{Tag: tag, Kind: kind, ID: id, Model: model}, nil
}

// failed counts a failed login against its key and logs it (never the password), with the
// lockout it starts.
func (a *authenticator) failed(key throttleKey, source, model, reason string) error {
	failures, lockout := a.throttle.failed(key)
	attrs := []any{"source", source, "user", key.tag, "reason", reason, "failures", failures}
	if model != "" {
		attrs = append(attrs, "model", model)
	}
	if lockout > 0 {
		attrs = append(attrs, "refused-for", lockout)
	}
	a.log.Warn("failed login", attrs...)
	return apierr.Errorf(apierr.Unauthenticated, "invalid entity name or password")
}

func (a *authenticator) storedHash(ctx context.Context, kind, id, model string, fresh bool) (hash string, cached bool, err error) {
	key := kind + "|" + id + "|" + model
	now := time.Now()
	if !fresh {
		a.mu.Lock()
		c, ok := a.cache[key]
		a.mu.Unlock()
		if ok && now.Before(c.expires) {
			return c.hash, true, nil
		}
	}
	switch kind {
	case "user":
		ctrl, err := a.st.Controller(ctx)
		if err != nil {
			return "", false, err
		}
		hash = ctrl.AdminPasswordHash
	case "machine":
		m, err := a.st.Machine(ctx, model, id)
		if err != nil {
			return "", false, err
		}
		hash = m.PasswordHash
	case "unit":
		u, err := a.st.Unit(ctx, model, id)
		if err != nil {
			return "", false, err
		}
		hash = u.PasswordHash
	}
	a.mu.Lock()
	a.cache[key] = cachedHash{hash: hash, expires: now.Add(authCacheTTL)}
	a.mu.Unlock()
	return hash, false, nil
}

// forgetRemoved drops the cached credential of every removed machine or unit, so a removed
// agent is refused at once rather than when its cache entry expires.
func (a *authenticator) forgetRemoved(ctx context.Context) {
	for d := range a.st.WatchRemovals(ctx) {
		var kind string
		switch d.Kind {
		case state.KindMachine:
			kind = "machine"
		case state.KindUnit:
			kind = "unit"
		default:
			continue
		}
		a.mu.Lock()
		delete(a.cache, kind+"|"+d.ID+"|"+d.Model)
		a.mu.Unlock()
	}
}

// agentMethods may be called by agents; every other method is the admin's alone (ActionService
// among them: agents reach their own tasks through AgentService).
func agentAllowed(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/juju.v1.AgentService/") || fullMethod == "/juju.v1.StatusService/Watch" ||
		fullMethod == "/juju.v1.StatusService/WatchMany" ||
		fullMethod == "/juju.v1.LogService/WriteLogs" || strings.HasPrefix(fullMethod, "/juju.v1.SSHAgentService/")
}

func (a *authenticator) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	e, err := a.authenticate(ctx)
	if err != nil {
		return nil, apierr.ToStatus(err)
	}
	if !e.IsAdmin() && !agentAllowed(info.FullMethod) {
		return nil, apierr.ToStatus(apierr.Errorf(apierr.PermissionDenied, "permission denied"))
	}
	resp, err := handler(context.WithValue(ctx, entityKey{}, e), req)
	return resp, apierr.ToStatus(err)
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *authedStream) Context() context.Context { return s.ctx }

func (a *authenticator) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	e, err := a.authenticate(ss.Context())
	if err != nil {
		return apierr.ToStatus(err)
	}
	if !e.IsAdmin() && !agentAllowed(info.FullMethod) {
		return apierr.ToStatus(apierr.Errorf(apierr.PermissionDenied, "permission denied"))
	}
	ctx, cancel := context.WithCancel(context.WithValue(ss.Context(), entityKey{}, e))
	defer cancel()
	defer context.AfterFunc(a.closing, cancel)()
	return apierr.ToStatus(handler(srv, &authedStream{ServerStream: ss, ctx: ctx}))
}
