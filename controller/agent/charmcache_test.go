package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// countingGetter answers every fetch with the URL's bytes, or fails while failing is set.
type countingGetter struct {
	calls   atomic.Int32
	failing atomic.Bool
	gate    chan struct{} // nil: answers at once
}

func (g *countingGetter) GetCharmArchive(ctx context.Context, model, url string) ([]byte, error) {
	g.calls.Add(1)
	if g.gate != nil {
		<-g.gate
	}
	if g.failing.Load() {
		return nil, errors.New("no answer")
	}
	return []byte(model + " " + url), nil
}

// Units deployed at once from one charm fetch its archive once (issue 16); a URL of another
// model is another archive.
func TestCharmArchivesFetchOncePerModelAndURL(t *testing.T) {
	g := &countingGetter{gate: make(chan struct{})}
	var ca charmArchives
	var wg sync.WaitGroup
	got := make([][]byte, 20)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = ca.get(context.Background(), g, "m1", "local:wp-0")
		}()
	}
	close(g.gate)
	wg.Wait()
	for i, b := range got {
		if string(b) != "m1 local:wp-0" {
			t.Fatalf("caller %d got %q", i, b)
		}
	}
	if n := g.calls.Load(); n != 1 {
		t.Errorf("20 agents fetched the archive %d times, want once", n)
	}
	if b, _ := ca.get(context.Background(), g, "m2", "local:wp-0"); string(b) != "m2 local:wp-0" || g.calls.Load() != 2 {
		t.Errorf("another model's charm: %q after %d fetches", b, g.calls.Load())
	}
}

// A failed fetch is not kept: the next agent asks again.
func TestCharmArchivesForgetFailures(t *testing.T) {
	g := &countingGetter{}
	g.failing.Store(true)
	var ca charmArchives
	if _, err := ca.get(context.Background(), g, "m", "local:wp-0"); err == nil {
		t.Fatal("a failed fetch succeeded")
	}
	g.failing.Store(false)
	if b, err := ca.get(context.Background(), g, "m", "local:wp-0"); err != nil || string(b) != "m local:wp-0" {
		t.Fatalf("after a failure: %q %v", b, err)
	}
	if n := g.calls.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
}

// Only the last maxCachedCharms archives are kept.
func TestCharmArchivesKeepTheLatestFew(t *testing.T) {
	g := &countingGetter{}
	var ca charmArchives
	for i := range maxCachedCharms + 1 {
		if _, err := ca.get(context.Background(), g, "m", fmt.Sprintf("local:c-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(ca.entries) != maxCachedCharms || len(ca.order) != maxCachedCharms {
		t.Fatalf("%d archives kept (%d in order), want %d", len(ca.entries), len(ca.order), maxCachedCharms)
	}
	before := g.calls.Load()
	if _, err := ca.get(context.Background(), g, "m", fmt.Sprintf("local:c-%d", maxCachedCharms)); err != nil || g.calls.Load() != before {
		t.Errorf("the latest archive was fetched again")
	}
	if _, err := ca.get(context.Background(), g, "m", "local:c-0"); err != nil || g.calls.Load() != before+1 {
		t.Errorf("the oldest archive was still kept")
	}
}
