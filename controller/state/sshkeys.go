package state

import (
	"context"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/sshkey"
)

// The model's authorized keys are one document; each machine's ssh server one more.
func sshKeysKey(uuid string) string          { return ModelPrefix(uuid) + "sshkeys" }
func sshHostKey(uuid, machine string) string { return ModelPrefix(uuid) + "sshhosts/" + machine }

// AuthorizedKeys returns the model's keys in the order they were added, internal ones
// included, and the revision of the document (0 when no key was ever added).
func (s *State) AuthorizedKeys(ctx context.Context, uuid string) (*storepb.AuthorizedKeys, int64, error) {
	resp, err := s.kv.Get(ctx, sshKeysKey(uuid))
	if err != nil {
		return nil, 0, fmt.Errorf("reading ssh keys: %w", err)
	}
	keys := &storepb.AuthorizedKeys{}
	if len(resp.Kvs) == 0 {
		return keys, 0, nil
	}
	if err := unmarshal(resp.Kvs[0], keys); err != nil {
		return nil, 0, err
	}
	return keys, resp.Kvs[0].ModRevision, nil
}

// AddAuthorizedKeys adds keys to the model in one transaction. A key that does not parse,
// carries an internal comment or is in the model already (or twice in lines) fails the whole
// call with Juju's message for it, and nothing is added.
func (s *State) AddAuthorizedKeys(ctx context.Context, uuid string, lines []string) error {
	parsed := make([]sshkey.Key, 0, len(lines))
	for _, line := range lines {
		k, err := sshkey.Parse(line)
		if err != nil {
			return apierr.Errorf(apierr.NotValid, "cannot add key %q: invalid ssh key: %s", line, strings.ReplaceAll(line, "\n", `\n`))
		}
		if sshkey.IsInternal(k.Comment) {
			return apierr.Errorf(apierr.NotValid, "cannot add key %q: may not add key with comment %s: %s", k.Line, k.Comment, k.Line)
		}
		parsed = append(parsed, k)
	}
	return s.run(ctx, "cannot add ssh keys", func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		doc := &storepb.AuthorizedKeys{}
		if _, err := r.get(ctx, sshKeysKey(uuid), doc); err != nil {
			return nil, err
		}
		have := map[string]bool{}
		for _, k := range doc.Keys {
			have[k.Fingerprint] = true
		}
		for _, k := range parsed {
			if have[k.Fingerprint] {
				return nil, apierr.Errorf(apierr.AlreadyExists, "cannot add key %q: duplicate ssh key: %s", k.Line, k.Line)
			}
			have[k.Fingerprint] = true
			doc.Keys = append(doc.Keys, &storepb.AuthorizedKey{Key: k.Line, Fingerprint: k.Fingerprint, Comment: k.Comment})
		}
		w := &writes{}
		w.put(sshKeysKey(uuid), doc)
		return w, nil
	})
}

// RemoveAuthorizedKeys removes the keys named by ids (fingerprints, comments or whole keys)
// in one transaction. An id that names no key, an internal key named by its comment, or
// leaving the model without keys fails the whole call, and nothing is removed.
func (s *State) RemoveAuthorizedKeys(ctx context.Context, uuid string, ids []string) error {
	return s.run(ctx, "cannot remove ssh keys", func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		doc := &storepb.AuthorizedKeys{}
		if _, err := r.get(ctx, sshKeysKey(uuid), doc); err != nil {
			return nil, err
		}
		drop := map[string]bool{}
		for _, id := range ids {
			fp, err := matchKey(doc.Keys, id)
			if err != nil {
				return nil, err
			}
			drop[fp] = true
		}
		kept := make([]*storepb.AuthorizedKey, 0, len(doc.Keys))
		for _, k := range doc.Keys {
			if !drop[k.Fingerprint] {
				kept = append(kept, k)
			}
		}
		if len(kept) == 0 {
			return nil, apierr.Errorf(apierr.NotValid, "cannot delete all keys")
		}
		w := &writes{}
		w.put(sshKeysKey(uuid), &storepb.AuthorizedKeys{Keys: kept})
		return w, nil
	})
}

// matchKey returns the fingerprint of the key id names: by fingerprint first, then by
// comment, then as a whole key, as Juju looks keys up.
func matchKey(keys []*storepb.AuthorizedKey, id string) (string, error) {
	id = strings.TrimSpace(id)
	for _, k := range keys {
		if k.Fingerprint == id {
			return k.Fingerprint, nil
		}
	}
	for _, k := range keys {
		if k.Comment != "" && k.Comment == id {
			if sshkey.IsInternal(id) {
				return "", apierr.Errorf(apierr.NotValid, "cannot remove key id %q: may not delete internal key: %s", id, id)
			}
			return k.Fingerprint, nil
		}
	}
	if parsed, err := sshkey.Parse(id); err == nil {
		for _, k := range keys {
			if k.Fingerprint == parsed.Fingerprint {
				return k.Fingerprint, nil
			}
		}
	}
	return "", apierr.Errorf(apierr.NotFound, "cannot remove key id %q: invalid ssh key: %s", id, id)
}

// EnsureAuthorizedKey adds line to the model unless a key with its fingerprint is there
// already; internal comments are allowed (this is how Juju's own keys get in). It returns
// whether it added the key and the revision of the keys from which the key is there.
func (s *State) EnsureAuthorizedKey(ctx context.Context, uuid, line string) (bool, int64, error) {
	k, err := sshkey.Parse(line)
	if err != nil {
		return false, 0, apierr.Errorf(apierr.NotValid, "%v", err)
	}
	added := false
	err = s.run(ctx, "cannot add the client's ssh key", func(ctx context.Context, r *reader) (*writes, error) {
		added = false
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, err
		}
		doc := &storepb.AuthorizedKeys{}
		if _, err := r.get(ctx, sshKeysKey(uuid), doc); err != nil {
			return nil, err
		}
		for _, have := range doc.Keys {
			if have.Fingerprint == k.Fingerprint {
				return nil, nil
			}
		}
		added = true
		doc.Keys = append(doc.Keys, &storepb.AuthorizedKey{Key: k.Line, Fingerprint: k.Fingerprint, Comment: k.Comment})
		w := &writes{}
		w.put(sshKeysKey(uuid), doc)
		return w, nil
	})
	if err != nil {
		return false, 0, err
	}
	// The document's revision now is at least the one that brought the key: waiting for it is
	// waiting for the key (or for a later change, which agents apply as quickly).
	_, rev, err := s.AuthorizedKeys(ctx, uuid)
	return added, rev, err
}

// KeysUpdate is the model's keys as of one revision.
type KeysUpdate struct {
	Keys     *storepb.AuthorizedKeys
	Revision int64
}

// WatchAuthorizedKeys sends the model's keys, then the keys after each change, until ctx ends
// or the store's watch fails; then it closes the channel (the caller watches again). A watcher
// that falls behind gets the latest keys, not every revision in between.
//
// Every machine's agent watches its model's keys (issue 16: 100,000 machines): they share one
// etcd watch per model, and each costs a channel and an entry, no watcher or goroutine of its own.
func (s *State) WatchAuthorizedKeys(ctx context.Context, uuid string) (<-chan KeysUpdate, error) {
	sub := &keysSub{ch: make(chan KeysUpdate, 1)}
	for {
		m, err := s.keysModel(ctx, uuid)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		if m.dead {
			// Its watch failed or its last watcher left since we looked it up.
			m.mu.Unlock()
			s.keys.forget(m)
			continue
		}
		m.subs[sub] = struct{}{}
		m.mu.Unlock()
		// Registered first, read second: a change committed after this read is dispatched
		// after the registration, so it reaches sub; the read covers everything before it.
		resp, err := s.kv.Get(ctx, sshKeysKey(uuid))
		var first KeysUpdate
		if err == nil {
			first, err = keysFrom(resp)
		}
		if err != nil {
			m.unsubscribe(sub)
			return nil, fmt.Errorf("reading ssh keys: %w", err)
		}
		stop := context.AfterFunc(ctx, func() { m.unsubscribe(sub) })
		m.mu.Lock()
		defer m.mu.Unlock()
		if sub.done {
			stop() // the watch ended meanwhile: the channel is closed, the caller watches again
		} else {
			sub.stop = stop
			m.offer(sub, first)
		}
		return sub.ch, nil
	}
}

// keysFrom is the keys document a read returned, at the read's revision when there is none.
func keysFrom(resp *clientv3.GetResponse) (KeysUpdate, error) {
	u := KeysUpdate{Keys: &storepb.AuthorizedKeys{}}
	if len(resp.Kvs) > 0 {
		if err := unmarshal(resp.Kvs[0], u.Keys); err != nil {
			return KeysUpdate{}, err
		}
		u.Revision = resp.Kvs[0].ModRevision
	}
	return u, nil
}

// keysWatches is the models whose keys are watched, each with one etcd watch.
type keysWatches struct {
	mu     sync.Mutex
	models map[string]*keysWatch
}

// keysWatch is one model's keys watch and its watchers.
type keysWatch struct {
	uuid string
	stop context.CancelFunc

	mu   sync.Mutex
	subs map[*keysSub]struct{}
	// dead: the watch ended or its last watcher left; a later watcher starts a fresh one.
	dead bool
}

// keysSub is one watcher: ch holds at most the latest update it has not taken.
type keysSub struct {
	ch   chan KeysUpdate
	rev  int64 // revision of the last update offered
	sent bool
	done bool
	stop func() bool
}

// keysModel returns uuid's keys watch, starting it if nobody watches the model's keys.
func (s *State) keysModel(ctx context.Context, uuid string) (*keysWatch, error) {
	s.keys.mu.Lock()
	m, ok := s.keys.models[uuid]
	s.keys.mu.Unlock()
	if ok {
		return m, nil
	}
	// The watch starts from a revision read before any watcher registers with it, so that each
	// watcher's own read and the watch leave no gap; read without the lock.
	rev, err := s.Revision(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading ssh keys: %w", err)
	}
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	if m, ok := s.keys.models[uuid]; ok {
		return m, nil
	}
	if s.keys.models == nil {
		s.keys.models = map[string]*keysWatch{}
	}
	// The watch lives as long as somebody watches, not as long as the call that started it.
	wctx, stop := context.WithCancel(context.Background())
	m = &keysWatch{uuid: uuid, stop: stop, subs: map[*keysSub]struct{}{}}
	wc := s.kv.Watch(clientv3.WithRequireLeader(wctx), sshKeysKey(uuid), clientv3.WithRev(rev+1))
	s.keys.models[uuid] = m
	go s.runKeys(m, wc)
	return m, nil
}

// forget removes m if it is still the model's watch.
func (k *keysWatches) forget(m *keysWatch) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.models[m.uuid] == m {
		delete(k.models, m.uuid)
	}
}

// runKeys hands every change of the model's keys, decoded once, to each watcher; when the watch
// ends it closes every watcher's channel.
func (s *State) runKeys(m *keysWatch, wc clientv3.WatchChan) {
	defer s.keys.forget(m)
	defer m.stop()
	for wr := range wc {
		if wr.Err() != nil || !m.dispatch(wr.Events) {
			break
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dead = true
	for sub := range m.subs {
		m.drop(sub)
	}
}

// dispatch offers each event to every watcher; false when one does not decode.
func (m *keysWatch) dispatch(events []*clientv3.Event) bool {
	for _, ev := range events {
		u := KeysUpdate{Keys: &storepb.AuthorizedKeys{}, Revision: ev.Kv.ModRevision}
		if ev.Type == clientv3.EventTypePut {
			if err := proto.Unmarshal(ev.Kv.Value, u.Keys); err != nil {
				return false
			}
		}
		m.mu.Lock()
		for sub := range m.subs {
			m.offer(sub, u)
		}
		m.mu.Unlock()
	}
	return true
}

// offer puts u in sub's channel in place of an update not taken yet, unless sub has a newer one
// already; m.mu is held (the only sender).
func (m *keysWatch) offer(sub *keysSub, u KeysUpdate) {
	if sub.done || (sub.sent && u.Revision <= sub.rev) {
		return
	}
	sub.sent, sub.rev = true, u.Revision
	select {
	case <-sub.ch: // superseded
	default:
	}
	sub.ch <- u
}

func (m *keysWatch) unsubscribe(sub *keysSub) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drop(sub)
	if len(m.subs) == 0 && !m.dead {
		m.dead = true
		m.stop() // runKeys then leaves
	}
}

// drop closes sub's channel once; m.mu is held.
func (m *keysWatch) drop(sub *keysSub) {
	if sub.done {
		return
	}
	sub.done = true
	delete(m.subs, sub)
	// Stopping the AfterFunc from within it is a no-op; from the watch's end, it frees it.
	if sub.stop != nil {
		sub.stop()
	}
	close(sub.ch)
}

// SetSSHHost records where a machine's ssh server listens (the machine's agent writes it).
func (s *State) SetSSHHost(ctx context.Context, uuid, machine string, h *storepb.SSHHost) error {
	h.Updated = s.now().UnixNano()
	return s.run(ctx, fmt.Sprintf("cannot record the ssh server of machine %s", machine), func(ctx context.Context, r *reader) (*writes, error) {
		found, err := r.get(ctx, machineKey(uuid, machine), nil)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, apierr.Errorf(apierr.NotFound, "machine %s not found", machine)
		}
		w := &writes{}
		w.put(sshHostKey(uuid, machine), h)
		return w, nil
	})
}

// SSHHost returns what a machine's agent recorded of its ssh server (nil when nothing yet).
func (s *State) SSHHost(ctx context.Context, uuid, machine string) (*storepb.SSHHost, error) {
	h := &storepb.SSHHost{}
	ok, err := s.getDoc(ctx, sshHostKey(uuid, machine), h)
	if err != nil || !ok {
		return nil, err
	}
	return h, nil
}

// WaitSSHHost waits until what a machine's agent recorded of its ssh server satisfies done,
// watching the document; it returns the last record seen (nil if none) and ctx's error when
// ctx ends first.
func (s *State) WaitSSHHost(ctx context.Context, uuid, machine string, done func(*storepb.SSHHost) bool) (*storepb.SSHHost, error) {
	key := sshHostKey(uuid, machine)
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading the ssh server of machine %s: %w", machine, err)
	}
	var last *storepb.SSHHost
	if len(resp.Kvs) > 0 {
		last = &storepb.SSHHost{}
		if err := unmarshal(resp.Kvs[0], last); err != nil {
			return nil, err
		}
	}
	if done(last) {
		return last, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wr := range s.kv.Watch(clientv3.WithRequireLeader(wctx), key, clientv3.WithRev(resp.Header.Revision+1)) {
		if err := wr.Err(); err != nil {
			return last, fmt.Errorf("watching the ssh server of machine %s: %w", machine, err)
		}
		for _, ev := range wr.Events {
			last = nil
			if ev.Type == clientv3.EventTypePut {
				last = &storepb.SSHHost{}
				if err := proto.Unmarshal(ev.Kv.Value, last); err != nil {
					return nil, fmt.Errorf("decoding the ssh server of machine %s: %w", machine, err)
				}
			}
			if done(last) {
				return last, nil
			}
		}
	}
	if ctx.Err() != nil {
		return last, ctx.Err()
	}
	return last, fmt.Errorf("watching the ssh server of machine %s: watch closed", machine)
}
