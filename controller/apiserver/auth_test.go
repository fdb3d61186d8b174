package apiserver

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/state"
)

// syncBuffer is a log destination the server writes to from its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lockedClock is a clock the test moves by hand while the server reads it.
type lockedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *lockedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *lockedClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// startAuthEnv is a real API server (embedded etcd, TLS) whose log and clock the test holds.
func startAuthEnv(t *testing.T) (*testEnv, *syncBuffer, *lockedClock) {
	t.Helper()
	logs := &syncBuffer{}
	clock := &lockedClock{t: time.Now()}
	return startTestEnv(t, withServerLog(logs, clock.now)), logs, clock
}

// loginErr is what one call as tag gets back: users log in with Dial; an agent's Dial only
// connects, so it makes a call.
func (e *testEnv) loginErr(tag, password, model string) error {
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Config{Endpoint: e.addr, CACert: e.caCert, Tag: tag, Password: password, Model: model})
	if err != nil {
		return err
	}
	defer c.Close()
	if kind, id, _ := parseTag(tag); kind == "machine" {
		_, err = c.GetMachine(ctx, "", id)
	} else if kind == "unit" {
		_, err = c.GetUnit(ctx, "", id)
	}
	return err
}

// Wrong admin passwords are answered freely a few times, then refused without being checked
// until the lockout ends; an agent's logins from the same address are not slowed; each failure
// is logged with its source and user, never its password.
func TestFailedLoginsAreThrottledAndLogged(t *testing.T) {
	env, logs, clock := startAuthEnv(t)
	ctx := context.Background()

	// 200 guesses over one connection, as fast as they go: five reach the password check.
	conn, err := client.NewConn(client.Config{Endpoint: env.addr, CACert: env.caCert})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	guesser := client.NewFromConn(conn, client.Config{Tag: AdminTag, Password: "guess-0123456789"})
	var checked, refused int
	for range 200 {
		_, err := guesser.Version(ctx)
		switch {
		case errors.Is(err, apierr.Unauthenticated):
			checked++
		case errors.Is(err, apierr.Throttled):
			refused++
			if want := "too many failed logins of user-admin from 127.0.0.1, retry in 1s"; err.Error() != want {
				t.Fatalf("refusal = %q, want %q", err, want)
			}
		default:
			t.Fatalf("guess: %v", err)
		}
	}
	if checked != throttleFreeFailures || refused != 200-throttleFreeFailures {
		t.Fatalf("%d guesses checked and %d refused, want %d checked", checked, refused, throttleFreeFailures)
	}

	// The right password waits too: the lockout gives nothing away.
	if err := env.loginErr(AdminTag, "admin-secret", ""); !errors.Is(err, apierr.Throttled) {
		t.Fatalf("right password while locked = %v, want Throttled", err)
	}

	// An agent on the same address logs in and works, and its own failures are its own.
	id, err := env.st.AddMachine(ctx, env.model, state.MachineParams{})
	if err != nil {
		t.Fatal(err)
	}
	machine := (&workloadEnv{env}).machineAgent(t, id)
	if _, err := machine.GetMachine(ctx, "", id); err != nil {
		t.Fatalf("agent while the admin is throttled: %v", err)
	}
	if err := env.loginErr("machine-"+id, "not-the-password", env.model); !errors.Is(err, apierr.Unauthenticated) {
		t.Fatalf("agent's wrong password = %v, want Unauthenticated", err)
	}

	// Once the lockout has passed, the right password works and forgives the failures.
	clock.advance(time.Second)
	admin := env.dial(t, AdminTag, "admin-secret", "")
	if _, err := admin.ListModels(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.loginErr(AdminTag, "wrong-again", ""); !errors.Is(err, apierr.Unauthenticated) {
		t.Fatalf("first failure after a success = %v, want Unauthenticated", err)
	}

	// The log: one WARN line per checked failure, with source and user, and no password.
	out := logs.String()
	if strings.Contains(out, "guess-0123456789") || strings.Contains(out, "not-the-password") || strings.Contains(out, "admin-secret") {
		t.Fatalf("a password reached the log:\n%s", out)
	}
	var adminFailures, lockouts, machineFailures int
	for line := range strings.Lines(out) {
		if !strings.Contains(line, `level=WARN msg="failed login" source=127.0.0.1:`) {
			continue
		}
		switch {
		case strings.Contains(line, " user=user-admin reason=\"wrong password\""):
			adminFailures++
			if strings.Contains(line, " refused-for=1s") {
				lockouts++
			}
		case strings.Contains(line, " user=machine-"+id+" reason=\"wrong password\"") && strings.Contains(line, " model="+env.model):
			machineFailures++
		}
	}
	if adminFailures != throttleFreeFailures+1 || lockouts != 1 || machineFailures != 1 {
		t.Fatalf("logged %d admin failures (%d starting a lockout) and %d machine failures, want %d (1) and 1:\n%s",
			adminFailures, lockouts, machineFailures, throttleFreeFailures+1, out)
	}
}

// Names that are no entity count as failures of that name, so guessing them costs the same.
func TestFailedLoginsOfUnknownEntities(t *testing.T) {
	env, logs, _ := startAuthEnv(t)
	for range throttleFreeFailures {
		if err := env.loginErr("user-bob", "pw-0123456789", ""); !errors.Is(err, apierr.Unauthenticated) {
			t.Fatalf("unknown user = %v", err)
		}
	}
	err := env.loginErr("user-bob", "pw-0123456789", "")
	if !errors.Is(err, apierr.Throttled) || !strings.Contains(err.Error(), "too many failed logins of user-bob from 127.0.0.1, retry in ") {
		t.Fatalf("unknown user after %d failures = %v", throttleFreeFailures, err)
	}
	if err := env.loginErr("unit-ghost-0", "pw-0123456789", env.model); !errors.Is(err, apierr.Unauthenticated) {
		t.Fatalf("unknown unit = %v", err)
	}
	if err := env.loginErr("machine-0", "pw-0123456789", "no-such-model"); !errors.Is(err, apierr.Unauthenticated) {
		t.Fatalf("machine of an unknown model = %v", err)
	}
	if out := logs.String(); !strings.Contains(out, `user=user-bob reason="invalid entity name"`) ||
		!strings.Contains(out, `user=unit-ghost-0 reason="unknown entity"`) {
		t.Fatalf("log:\n%s", out)
	}
	// The admin is not slowed by another name's failures.
	if err := env.loginErr(AdminTag, "admin-secret", ""); err != nil {
		t.Fatal(err)
	}
}
