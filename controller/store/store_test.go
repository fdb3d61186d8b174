package store

import (
	"context"
	"testing"
	"time"
)

func TestEmbeddedReadyAndReachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartEmbedded(ctx, t.TempDir(), EmbeddedOptions{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Client.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	// The same data through the client URL, as another jujud would see it with --etcd-endpoints.
	ext, err := Connect(ctx, []string{s.Endpoint()})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	resp, err := ext.Client.Get(ctx, "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("got %v %v", resp, err)
	}
}

func TestConnectFailsFast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if _, err := Connect(ctx, []string{"http://127.0.0.1:1"}); err == nil {
		t.Fatal("connected to nothing")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
