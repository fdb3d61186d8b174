package state

import (
	"context"
	"fmt"
	"strings"

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
// or the store's watch fails; then it closes the channel (the caller watches again).
func (s *State) WatchAuthorizedKeys(ctx context.Context, uuid string) (<-chan KeysUpdate, error) {
	key := sshKeysKey(uuid)
	resp, err := s.kv.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading ssh keys: %w", err)
	}
	first := KeysUpdate{Keys: &storepb.AuthorizedKeys{}}
	if len(resp.Kvs) > 0 {
		if err := unmarshal(resp.Kvs[0], first.Keys); err != nil {
			return nil, err
		}
		first.Revision = resp.Kvs[0].ModRevision
	}
	out := make(chan KeysUpdate, 1)
	out <- first
	wc := s.kv.Watch(clientv3.WithRequireLeader(ctx), key, clientv3.WithRev(resp.Header.Revision+1))
	go func() {
		defer close(out)
		for wr := range wc {
			if wr.Err() != nil {
				return
			}
			for _, ev := range wr.Events {
				u := KeysUpdate{Keys: &storepb.AuthorizedKeys{}, Revision: ev.Kv.ModRevision}
				if ev.Type == clientv3.EventTypePut {
					if err := proto.Unmarshal(ev.Kv.Value, u.Keys); err != nil {
						return
					}
				}
				select {
				case out <- u:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
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
