// Package workertest holds what the workers' tests share: a real embedded etcd (design: no fake
// store), models and charms to fill it, a fake clock, and waiting for a condition.
package workertest

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

// Main runs a test package against one embedded etcd, set in *st before the tests run; each
// test works in a model of its own.
func Main(m *testing.M, st **state.State) {
	dir, err := os.MkdirTemp("", "worker-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := store.StartEmbedded(context.Background(), dir, store.EmbeddedOptions{NoFsync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	*st = state.New(s.Client)
	code := m.Run()
	s.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

var modelSeq atomic.Int64

// NewModel adds a model with a fresh name and returns its UUID.
func NewModel(t testing.TB, st *state.State) string {
	t.Helper()
	name := fmt.Sprintf("m%d-%d", modelSeq.Add(1), time.Now().UnixNano()%1000000)
	m, err := st.AddModel(context.Background(), name, "admin", "", "localhost", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	return m.Uuid
}

// Charm metadata for the tests: a principal with a peer and a requirer endpoint, its provider,
// and a container-scoped subordinate.
const (
	WordpressMeta = `name: wordpress
summary: blog
requires:
  db: mysql
provides:
  website: http
peers:
  cluster: wordpress-peers
bases: [ubuntu@22.04]
`
	MySQLMeta = `name: mysql
summary: database
provides:
  db: mysql
bases: [ubuntu@22.04]
`
	LoggingMeta = `name: logging
summary: logs
subordinate: true
requires:
  juju-info:
    interface: juju-info
    scope: container
bases: [ubuntu@22.04]
`
)

// CharmZip is a charm archive holding only metadata.yaml.
func CharmZip(t testing.TB, meta string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(meta)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Deploy adds a charm and deploys it as name, with n units.
func Deploy(t testing.TB, st *state.State, uuid, name, meta string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ch, err := st.AddCharm(ctx, uuid, CharmZip(t, meta))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deploy(ctx, uuid, state.DeployArgs{Name: name, CharmURL: ch.Url, Base: "ubuntu@22.04"}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return nil
	}
	units, err := st.AddUnits(ctx, uuid, name, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return units
}

// Integrate relates two applications and returns the relation's id.
func Integrate(t testing.TB, st *state.State, uuid, a, b string) int64 {
	t.Helper()
	ea, err := state.ParseEndpoint(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := state.ParseEndpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := st.Integrate(context.Background(), uuid, ea, eb)
	if err != nil {
		t.Fatal(err)
	}
	return rel.Id
}

// EnterScope enters a unit into a relation's scope, as its agent would (L-R2), and returns the
// subordinate created for it, if any.
func EnterScope(t testing.TB, st *state.State, uuid string, rel int64, unit string) string {
	t.Helper()
	sub, err := st.EnterScope(context.Background(), uuid, rel, unit, map[string]string{"private-address": "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// Snapshot reads a model.
func Snapshot(t testing.TB, st *state.State, uuid string) *state.Snapshot {
	t.Helper()
	snap, err := st.Snapshot(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Find returns the element of list that matches, or nil.
func Find[T any](list []*T, match func(*T) bool) *T {
	for _, x := range list {
		if match(x) {
			return x
		}
	}
	return nil
}

// App returns an application of a snapshot, or nil.
func App(snap *state.Snapshot, name string) *storepb.Application {
	return Find(snap.Applications, func(a *storepb.Application) bool { return a.Name == name })
}

// Unit returns a unit of a snapshot, or nil.
func Unit(snap *state.Snapshot, name string) *storepb.Unit {
	return Find(snap.Units, func(u *storepb.Unit) bool { return u.Name == name })
}

// Machine returns a machine of a snapshot, or nil.
func Machine(snap *state.Snapshot, id string) *storepb.Machine {
	return Find(snap.Machines, func(m *storepb.Machine) bool { return m.Id == id })
}

// Relation returns a relation of a snapshot, or nil.
func Relation(snap *state.Snapshot, id int64) *storepb.Relation {
	return Find(snap.Relations, func(r *storepb.Relation) bool { return r.Id == id })
}

// Eventually waits up to 10 seconds for cond, failing the test with what otherwise.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Clock is a fake clock: time moves only by Advance, and After fires when it passes.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a fake clock set at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After fires once the fake time reaches now+d.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Advance moves the fake time on and fires the timers it passes.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// HasTimerAt reports whether a timer waits for exactly at (a worker armed its deadline).
func (c *Clock) HasTimerAt(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.waiters {
		if w.at.Equal(at) {
			return true
		}
	}
	return false
}
