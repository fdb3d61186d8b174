package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/internal/testutil/deadaddr"
)

func endpoints(base Config, addrs ...string) []Config {
	var out []Config
	for _, a := range addrs {
		c := base
		c.Endpoint = a
		out = append(out, c)
	}
	return out
}

// A controller with several addresses is reached through a live one, whatever the earlier
// ones do, in far less than the per-address deadline; the password is checked once.
func TestDialAnyFallsOver(t *testing.T) {
	ca := newTestCA(t)
	live, fake := startServer(t, ca)
	for _, tt := range []struct {
		name  string
		addrs func(t *testing.T) []string
	}{
		{"refused first", func(t *testing.T) []string { return []string{deadaddr.Refused(t), live} }},
		{"silent first", func(t *testing.T) []string { return []string{deadaddr.Silent(t), live} }},
		{"two dead first", func(t *testing.T) []string { return []string{deadaddr.Silent(t), deadaddr.Refused(t), live} }},
		{"live first", func(t *testing.T) []string { return []string{live, deadaddr.Silent(t)} }},
	} {
		for _, tag := range []string{"user-admin", "machine-0"} {
			t.Run(tt.name+"/"+tag, func(t *testing.T) {
				base := userConfig("", ca)
				base.Tag = tag
				base.DialTimeout = 5 * time.Second
				fake.mu.Lock()
				before := len(fake.calls)
				fake.mu.Unlock()
				start := time.Now()
				c, err := DialAny(context.Background(), endpoints(base, tt.addrs(t)...))
				if err != nil {
					t.Fatalf("DialAny: %v", err)
				}
				defer c.Close()
				if d := time.Since(start); d > time.Second {
					t.Errorf("DialAny took %v; the per-address deadline is %v", d, base.DialTimeout)
				}
				if c.Endpoint() != live {
					t.Errorf("connected to %s, want %s", c.Endpoint(), live)
				}
				fake.mu.Lock()
				logins := len(fake.calls) - before
				fake.mu.Unlock()
				if want := map[bool]int{true: 1, false: 0}[tag == "user-admin"]; logins != want {
					t.Errorf("%d login calls, want %d", logins, want)
				}
				if _, err := c.GetUnit(context.Background(), "", "mysql/0"); err != nil {
					t.Errorf("call after DialAny: %v", err)
				}
			})
		}
	}
}

// When no address answers, the error names each with its reason, and each address had its own
// deadline.
func TestDialAnyAllDown(t *testing.T) {
	ca := newTestCA(t)
	refused, silent := deadaddr.Refused(t), deadaddr.Silent(t)
	cfg := userConfig("", ca)
	cfg.DialTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err := DialAny(context.Background(), endpoints(cfg, refused, silent))
	if !errors.Is(err, apierr.Unavailable) {
		t.Fatalf("DialAny = %v, want Unavailable", err)
	}
	want := "cannot connect to controller at any of its addresses: " + refused + " (connect: connection refused), " +
		silent + " (no answer after 300ms)"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("DialAny took %v", d)
	}
}

// A wrong password is refused by the first controller address that answers and is not tried on
// the others: one failed login, not one per address.
func TestDialAnyWrongPasswordTriedOnce(t *testing.T) {
	ca := newTestCA(t)
	one, fakeOne := startServer(t, ca)
	two, fakeTwo := startServer(t, ca)
	cfg := userConfig("", ca)
	cfg.Password = "wrong"
	_, err := DialAny(context.Background(), endpoints(cfg, one, two))
	if !errors.Is(err, apierr.Unauthenticated) || !strings.HasPrefix(err.Error(), "logging in to controller at "+one+": ") {
		t.Fatalf("DialAny = %v, want Unauthenticated from %s", err, one)
	}
	fakeOne.mu.Lock()
	fakeTwo.mu.Lock()
	defer fakeOne.mu.Unlock()
	defer fakeTwo.mu.Unlock()
	if len(fakeOne.calls)+len(fakeTwo.calls) != 1 {
		t.Errorf("login calls: %d and %d, want 1 in all", len(fakeOne.calls), len(fakeTwo.calls))
	}
}
