package apiserver

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestThrottle() (*loginThrottle, *fakeClock) {
	clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	return newLoginThrottle(clock.now), clock
}

func TestThrottleLockouts(t *testing.T) {
	admin := throttleKey{source: "192.0.2.7", tag: "user-admin"}
	tests := []struct {
		name string
		// steps: "f" a failure, "s" a success, "+<duration>" the clock moves.
		steps []string
		// wantWait is wait(admin) after the steps.
		wantWait time.Duration
		// wantLockout is the lockout the last failure started.
		wantLockout time.Duration
	}{
		{name: "first failures are free", steps: []string{"f", "f", "f", "f"}, wantWait: 0},
		{name: "the fifth locks for a second", steps: []string{"f", "f", "f", "f", "f"}, wantWait: time.Second, wantLockout: time.Second},
		{name: "doubling", steps: []string{"f", "f", "f", "f", "f", "+1s", "f", "+2s", "f"}, wantWait: 4 * time.Second, wantLockout: 4 * time.Second},
		{name: "capped", steps: []string{"f", "f", "f", "f", "f", "f", "f", "f", "f", "f", "f", "f"}, wantWait: 30 * time.Second, wantLockout: 30 * time.Second},
		{name: "lockout ends", steps: []string{"f", "f", "f", "f", "f", "+1s"}, wantWait: 0, wantLockout: time.Second},
		{name: "lockout counts down", steps: []string{"f", "f", "f", "f", "f", "f", "+1500ms"}, wantWait: 500 * time.Millisecond, wantLockout: 2 * time.Second},
		{name: "success forgives", steps: []string{"f", "f", "f", "f", "s", "f"}, wantWait: 0},
		{name: "a minute forgives one", steps: []string{"f", "f", "f", "f", "+1m", "f"}, wantWait: 0},
		{name: "less than a minute forgives none", steps: []string{"f", "f", "f", "f", "+59s", "f"}, wantWait: time.Second, wantLockout: time.Second},
		{name: "decay is gradual", steps: []string{"f", "f", "f", "f", "f", "f", "f", "+2m", "f"}, wantWait: 2 * time.Second, wantLockout: 2 * time.Second},
		{name: "ten quiet minutes forgive all", steps: []string{"f", "f", "f", "f", "f", "f", "f", "f", "f", "f", "+10m", "f", "f", "f", "f"}, wantWait: 0},
		{name: "clock going back forgives nothing", steps: []string{"f", "f", "f", "f", "+-1h", "f"}, wantWait: time.Second, wantLockout: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, clock := newTestThrottle()
			var lockout time.Duration
			for _, step := range tt.steps {
				switch {
				case step == "f":
					_, lockout = th.failed(admin)
				case step == "s":
					th.succeeded(admin)
				default:
					d, err := time.ParseDuration(step[1:])
					if err != nil {
						t.Fatal(err)
					}
					clock.advance(d)
				}
			}
			if got, _ := th.wait(admin); got != tt.wantWait {
				t.Errorf("wait = %v, want %v", got, tt.wantWait)
			}
			if lockout != tt.wantLockout {
				t.Errorf("last lockout = %v, want %v", lockout, tt.wantLockout)
			}
		})
	}
}

// Keys are per source and per tag: hammering user-admin from one address slows no agent and no
// other address.
func TestThrottleKeysAreIndependent(t *testing.T) {
	th, _ := newTestThrottle()
	attacker := throttleKey{source: "192.0.2.7", tag: "user-admin"}
	for range 20 {
		th.failed(attacker)
	}
	if w, _ := th.wait(attacker); w == 0 {
		t.Fatal("attacker not throttled")
	}
	for _, k := range []throttleKey{
		{source: "192.0.2.7", tag: "machine-0"},
		{source: "192.0.2.7", tag: "unit-mysql-0"},
		{source: "192.0.2.8", tag: "user-admin"},
	} {
		if w, known := th.wait(k); w != 0 || known {
			t.Errorf("%v waits %v", k, w)
		}
	}
}

func TestThrottleKeyFor(t *testing.T) {
	long := make([]byte, 1000)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		addr      net.Addr
		tag       string
		wantSrc   string
		wantTagLn int
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 40000}, "user-admin", "127.0.0.1", 10},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 40001}, "user-admin", "127.0.0.1", 10}, // port ignored
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 1}, "user-admin", "10.1.2.3", 10},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:3:4:5:6"), Port: 1}, "user-admin", "2001:db8:1:2::/64", 10},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:ffff::1"), Port: 1}, "user-admin", "2001:db8:1:2::/64", 10}, // same /64
		{&net.UnixAddr{Name: "@sock", Net: "unix"}, "user-admin", "@sock", 10},
		{nil, "user-admin", "unknown", 10},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, "user-" + string(long), "127.0.0.1", throttleMaxTag},
	}
	for _, tt := range tests {
		k := throttleKeyFor(tt.addr, tt.tag)
		if k.source != tt.wantSrc || len(k.tag) != tt.wantTagLn {
			t.Errorf("throttleKeyFor(%v, %.20q) = %q, %d bytes of tag; want %q, %d", tt.addr, tt.tag, k.source, len(k.tag), tt.wantSrc, tt.wantTagLn)
		}
	}
}

// An attacker rotating names (or sources) cannot grow the table past its bound, nor push out
// the entry that throttles its guesses at the real account.
func TestThrottleMemoryIsBounded(t *testing.T) {
	th, clock := newTestThrottle()
	th.maxEntries = 800
	admin := throttleKey{source: "192.0.2.7", tag: "user-admin"}
	for range 8 {
		th.failed(admin)
	}
	for i := range 20000 {
		th.failed(throttleKey{source: "192.0.2.7", tag: fmt.Sprintf("user-x%d", i)})
		if i%1000 == 0 {
			clock.advance(time.Second)
		}
		if n := th.size(); n > th.maxEntries {
			t.Fatalf("after %d names the table holds %d entries, bound %d", i+1, n, th.maxEntries)
		}
	}
	// Its lockout (8 s) ended meanwhile; had its entry gone, this failure would be a first.
	th.failed(admin)
	if w, _ := th.wait(admin); w != 16*time.Second {
		t.Fatalf("the throttled account's entry was evicted: wait %v, want 16s", w)
	}

	// What has fully decayed is dropped first, all of it.
	for i := 0; th.size() < th.maxEntries; i++ {
		th.failed(throttleKey{source: "198.51.100.2", tag: fmt.Sprintf("user-y%d", i)})
	}
	clock.advance(time.Hour)
	th.failed(throttleKey{source: "198.51.100.1", tag: "user-admin"})
	if n := th.size(); n != 1 {
		t.Fatalf("after an hour the table holds %d entries, want only the new one", n)
	}
}
