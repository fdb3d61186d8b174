package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/output"
)

// A call of thousands of units has a deadline in proportion and says what it waits for; a small
// one keeps the usual deadline and says nothing.
func TestBulkDeadlineAndNotice(t *testing.T) {
	for _, tt := range []struct {
		n        int
		quiet    bool
		want     string
		deadline time.Duration
	}{
		{n: 3, deadline: 30*time.Second + 30*time.Millisecond},
		{n: 10000, want: "adding 10,000 units of wordpress (one transaction)...\nadded 10,000 units of wordpress in ", deadline: 130 * time.Second},
		{n: 10000, quiet: true, deadline: 130 * time.Second},
	} {
		var errOut bytes.Buffer
		io := &output.Streams{ErrOut: &errOut, Quiet: tt.quiet}
		start := time.Now()
		err := Bulk(context.Background(), io, tt.n, "units of wordpress", func(ctx context.Context) error {
			d, ok := ctx.Deadline()
			if !ok {
				t.Fatalf("n=%d: no deadline", tt.n)
			}
			if got := d.Sub(start); got < tt.deadline-time.Second || got > tt.deadline+time.Second {
				t.Errorf("n=%d: deadline in %v, want %v", tt.n, got, tt.deadline)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := errOut.String(); !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("n=%d: stderr %q, want it to start with %q", tt.n, got, tt.want)
		}
	}
}

// A failed call says only its error (the caller prints it), never "added".
func TestBulkFailureSaysNoSuccess(t *testing.T) {
	var errOut bytes.Buffer
	io := &output.Streams{ErrOut: &errOut, ErrTerminal: true}
	boom := errors.New("boom")
	if err := Bulk(context.Background(), io, 5000, "machines", func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(errOut.String(), "added") || !strings.Contains(errOut.String(), "adding 5,000 machines (one transaction)...") {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
