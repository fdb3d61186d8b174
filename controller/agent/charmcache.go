package agent

import (
	"context"
	"slices"
	"sync"
)

// maxCachedCharms is how many charm archives the runner keeps: the charms being deployed or
// upgraded to at any one time are few.
const maxCachedCharms = 8

// charmArchives keeps the charm archives the runner's agents fetched, by model and URL. A URL
// names one archive for good (a model's charm revisions are never reused), so a deploy of
// 10,000 units of one charm fetches it once, not once per unit (issue 16). The agents of a
// runner are one process holding all their credentials: sharing what one of them fetched
// gives the others nothing they could not ask for.
type charmArchives struct {
	mu      sync.Mutex
	entries map[charmKey]*charmEntry
	order   []charmKey // oldest first
}

type charmKey struct{ model, url string }

// archiveGetter is the client method charmArchives uses.
type archiveGetter interface {
	GetCharmArchive(ctx context.Context, model, url string) ([]byte, error)
}

// charmEntry is one fetch: done closes when data or err is set.
type charmEntry struct {
	done chan struct{}
	data []byte
	err  error
}

// get returns the archive of the charm at url, fetching it with c unless another agent has
// (or is fetching it: then it waits for that fetch). A failed fetch is not kept: the next
// caller asks again, with its own credentials. The archive is shared: callers only read it.
func (ca *charmArchives) get(ctx context.Context, c archiveGetter, model, url string) ([]byte, error) {
	key := charmKey{model, url}
	ca.mu.Lock()
	e, ok := ca.entries[key]
	if !ok {
		if ca.entries == nil {
			ca.entries = map[charmKey]*charmEntry{}
		}
		e = &charmEntry{done: make(chan struct{})}
		ca.entries[key] = e
		ca.order = append(ca.order, key)
		if len(ca.order) > maxCachedCharms {
			delete(ca.entries, ca.order[0])
			ca.order = ca.order[1:]
		}
	}
	ca.mu.Unlock()
	if ok {
		select {
		case <-e.done:
			if e.err == nil {
				return e.data, nil
			}
			// The fetch of the agent that went first failed: ask with this agent's own.
			return c.GetCharmArchive(ctx, model, url)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.data, e.err = c.GetCharmArchive(ctx, model, url)
	if e.err != nil {
		ca.mu.Lock()
		if ca.entries[key] == e {
			delete(ca.entries, key)
			ca.order = slices.DeleteFunc(ca.order, func(k charmKey) bool { return k == key })
		}
		ca.mu.Unlock()
	}
	close(e.done)
	return e.data, e.err
}
