package agent

import (
	"context"
	"testing"
	"time"
)

// At most maxBusy agents work at once; one waits until another's pass ends, and a process's
// run (a hook, an action, a command) gives its permit back meanwhile, in parallel too.
func TestWorkSlotsBoundWorkNotProcesses(t *testing.T) {
	ctx := context.Background()
	slots := newWorkSlots(2)
	a, b, c := &slot{slots: slots}, &slot{slots: slots}, &slot{slots: slots}
	if err := a.take(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.take(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := c.take(short); err == nil {
		t.Fatal("a third agent worked with two permits")
	}
	// a runs two processes in parallel: its permit is free until the last ends.
	done1, done2 := a.during(ctx), a.during(ctx)
	if err := c.take(ctx); err != nil {
		t.Fatal(err)
	}
	done1()
	got := make(chan struct{})
	go func() { done2(); close(got) }() // takes a permit again: waits for one
	select {
	case <-got:
		t.Fatal("a took a permit back while none was free")
	case <-time.After(20 * time.Millisecond):
	}
	c.give()
	<-got
	if !a.held || len(slots) != 2 {
		t.Fatalf("after its processes, a holds %v; permits in use %d", a.held, len(slots))
	}
	a.give()
	a.give() // twice is once
	b.give()
	if len(slots) != 0 {
		t.Fatalf("%d permits still taken", len(slots))
	}
	// Without a runner (nil), nothing is bounded.
	var none *slot
	if err := none.take(ctx); err != nil {
		t.Fatal(err)
	}
	none.during(ctx)()
	none.give()
}
