package state_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/sshkey"
)

// newSSHKey returns a fresh public key line with comment.
func newSSHKey(t *testing.T, comment string) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshkey.AuthorizedLine(sp, comment)
}

func keyComments(t *testing.T, uuid string) string {
	t.Helper()
	doc, _, err := st.AuthorizedKeys(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range doc.Keys {
		out = append(out, k.Comment)
	}
	return strings.Join(out, " ")
}

func TestAuthorizedKeysAddListRemove(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	a, b, c := newSSHKey(t, "alice@host"), newSSHKey(t, "bob@host"), newSSHKey(t, "")
	if err := st.AddAuthorizedKeys(ctx, uuid, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddAuthorizedKeys(ctx, uuid, []string{c}); err != nil {
		t.Fatal(err)
	}
	doc, rev, err := st.AuthorizedKeys(ctx, uuid)
	if err != nil || rev == 0 || len(doc.Keys) != 3 {
		t.Fatalf("keys = %v, rev %d, %v", doc, rev, err)
	}
	pa, _ := sshkey.Parse(a)
	if doc.Keys[0].Key != a || doc.Keys[0].Fingerprint != pa.Fingerprint || doc.Keys[0].Comment != "alice@host" {
		t.Errorf("first key = %+v", doc.Keys[0])
	}
	// By comment, by fingerprint, by the whole key.
	pc, _ := sshkey.Parse(c)
	if err := st.RemoveAuthorizedKeys(ctx, uuid, []string{"alice@host", pc.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	if got := keyComments(t, uuid); got != "bob@host" {
		t.Errorf("after removal: %q", got)
	}
	if err := st.AddAuthorizedKeys(ctx, uuid, []string{a}); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveAuthorizedKeys(ctx, uuid, []string{a}); err != nil {
		t.Fatal(err)
	}
	if got := keyComments(t, uuid); got != "bob@host" {
		t.Errorf("after removal by key: %q", got)
	}
}

// Bad input changes nothing: the whole call fails with Juju's message for the first bad key.
func TestAuthorizedKeysBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	a, b := newSSHKey(t, "alice@host"), newSSHKey(t, "bob@host")
	if err := st.AddAuthorizedKeys(ctx, uuid, []string{a}); err != nil {
		t.Fatal(err)
	}
	_, before, _ := st.AuthorizedKeys(ctx, uuid)
	for _, tc := range []struct {
		keys     []string
		sentinel error
		want     string
	}{
		{[]string{b, "not a key"}, apierr.NotValid, `cannot add key "not a key": invalid ssh key: not a key`},
		{[]string{b, a}, apierr.AlreadyExists, `cannot add key "` + a + `": duplicate ssh key: ` + a},
		{[]string{b, b}, apierr.AlreadyExists, `cannot add key "` + b + `": duplicate ssh key: ` + b},
		{[]string{newSSHKey(t, "juju-client-key")}, apierr.NotValid, "may not add key with comment juju-client-key"},
	} {
		err := st.AddAuthorizedKeys(ctx, uuid, tc.keys)
		if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("add %q: %v, want %q", tc.keys, err, tc.want)
		}
	}
	internal := newSSHKey(t, sshkey.ClientKeyComment)
	if _, _, err := st.EnsureAuthorizedKey(ctx, uuid, internal); err != nil {
		t.Fatal(err)
	}
	_, before, _ = st.AuthorizedKeys(ctx, uuid)
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"alice@host", "nobody@host"}, `cannot remove key id "nobody@host": invalid ssh key: nobody@host`},
		{[]string{"juju-client-key"}, `cannot remove key id "juju-client-key": may not delete internal key: juju-client-key`},
	} {
		if err := st.RemoveAuthorizedKeys(ctx, uuid, tc.ids); err == nil || err.Error() != tc.want {
			t.Errorf("remove %q: %v, want %q", tc.ids, err, tc.want)
		}
	}
	pi, _ := sshkey.Parse(internal)
	if err := st.RemoveAuthorizedKeys(ctx, uuid, []string{"alice@host", pi.Fingerprint}); err == nil || err.Error() != "cannot delete all keys" {
		t.Errorf("removing every key: %v", err)
	}
	if _, after, _ := st.AuthorizedKeys(ctx, uuid); after != before {
		t.Errorf("a refused call changed the keys (revision %d → %d)", before, after)
	}
	if got := keyComments(t, uuid); got != "alice@host juju-client-key" {
		t.Errorf("keys = %q", got)
	}
}

func TestEnsureAuthorizedKeyIsIdempotent(t *testing.T) {
	ctx := context.Background()
	uuid := newModel(t, "")
	key := newSSHKey(t, sshkey.ClientKeyComment)
	added, rev1, err := st.EnsureAuthorizedKey(ctx, uuid, key)
	if err != nil || !added || rev1 == 0 {
		t.Fatalf("first ensure: %v %d %v", added, rev1, err)
	}
	added, rev2, err := st.EnsureAuthorizedKey(ctx, uuid, key)
	if err != nil || added || rev2 != rev1 {
		t.Fatalf("second ensure: %v %d %v (first revision %d)", added, rev2, err, rev1)
	}
	if _, _, err := st.EnsureAuthorizedKey(ctx, "no-such-model", key); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown model: %v", err)
	}
}

func TestWatchAuthorizedKeysSendsEachChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	ch, err := st.WatchAuthorizedKeys(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	next := func() state.KeysUpdate {
		t.Helper()
		select {
		case u, ok := <-ch:
			if !ok {
				t.Fatal("watch closed")
			}
			return u
		case <-ctx.Done():
			t.Fatal("no update")
		}
		return state.KeysUpdate{}
	}
	if u := next(); u.Revision != 0 || len(u.Keys.Keys) != 0 {
		t.Errorf("first update = %+v", u)
	}
	if err := st.AddAuthorizedKeys(ctx, uuid, []string{newSSHKey(t, "a@b")}); err != nil {
		t.Fatal(err)
	}
	_, rev, _ := st.AuthorizedKeys(ctx, uuid)
	if u := next(); u.Revision != rev || len(u.Keys.Keys) != 1 || u.Keys.Keys[0].Comment != "a@b" {
		t.Errorf("after add = %+v (revision %d)", u, rev)
	}
}

// Every machine's agent watches its model's keys: the watchers share one etcd watch, each gets
// every change, and the watch ends with its last watcher (issue 16).
func TestWatchAuthorizedKeysSharesOneWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	const n = 50
	var chans []<-chan state.KeysUpdate
	var stops []context.CancelFunc
	for range n {
		wctx, stop := context.WithCancel(ctx)
		stops = append(stops, stop)
		ch, err := st.WatchAuthorizedKeys(wctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	if got := st.KeysWatchers(uuid); got != n {
		t.Fatalf("watchers of the shared watch = %d, want %d", got, n)
	}
	if err := st.AddAuthorizedKeys(ctx, uuid, []string{newSSHKey(t, "a@b")}); err != nil {
		t.Fatal(err)
	}
	_, rev, _ := st.AuthorizedKeys(ctx, uuid)
	for i, ch := range chans {
		// The first update may have been superseded by the change already: each watcher gets
		// the latest keys, not necessarily every revision.
		for {
			var u state.KeysUpdate
			select {
			case u = <-ch:
			case <-ctx.Done():
				t.Fatalf("watcher %d: no update with the key", i)
			}
			if u.Revision == rev {
				if len(u.Keys.Keys) != 1 || u.Keys.Keys[0].Comment != "a@b" {
					t.Errorf("watcher %d: %+v", i, u)
				}
				break
			}
		}
	}
	// A watcher that leaves has its channel closed; the last one out ends the etcd watch.
	stops[0]()
	for range chans[0] {
	}
	for _, stop := range stops[1:] {
		stop()
	}
	for _, ch := range chans[1:] {
		for range ch {
		}
	}
	if got := st.KeysWatchers(uuid); got != -1 {
		t.Errorf("after every watcher left: %d watchers, want no watch", got)
	}
	// A watcher after that starts a fresh watch and reads the keys.
	ch, err := st.WatchAuthorizedKeys(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if u := <-ch; u.Revision != rev || len(u.Keys.Keys) != 1 {
		t.Errorf("fresh watcher: %+v (revision %d)", u, rev)
	}
}

func TestSSHHostRecordAndWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uuid := newModel(t, "")
	id, err := st.AddMachine(ctx, uuid, state.MachineParams{Base: "ubuntu@22.04"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSSHHost(ctx, uuid, "42", &storepb.SSHHost{Address: "127.1.0.1"}); !errors.Is(err, apierr.NotFound) {
		t.Errorf("unknown machine: %v", err)
	}
	if h, err := st.SSHHost(ctx, uuid, id); h != nil || err != nil {
		t.Errorf("before the agent: %v %v", h, err)
	}
	got := make(chan *storepb.SSHHost, 1)
	go func() {
		h, err := st.WaitSSHHost(ctx, uuid, id, func(h *storepb.SSHHost) bool { return h != nil && h.KeysRevision >= 7 })
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	if err := st.SetSSHHost(ctx, uuid, id, &storepb.SSHHost{Address: "127.1.0.1", Port: 22, KeysRevision: 3}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSSHHost(ctx, uuid, id, &storepb.SSHHost{Address: "127.1.0.1", Port: 22, KeysRevision: 7}); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-got:
		if h.GetKeysRevision() != 7 || h.GetAddress() != "127.1.0.1" {
			t.Errorf("waited for %v", h)
		}
	case <-ctx.Done():
		t.Fatal("WaitSSHHost did not return")
	}
	// A deadline ends the wait with the last record seen.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	h, err := st.WaitSSHHost(short, uuid, id, func(h *storepb.SSHHost) bool { return h.GetKeysRevision() > 100 })
	if !errors.Is(err, context.DeadlineExceeded) || h.GetKeysRevision() != 7 {
		t.Errorf("wait past deadline: %v %v", h, err)
	}
}
