package cmdutil

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jujuclone/juju/output"
)

// A call that adds many units or machines is one store transaction (whole or not at all) whose
// cost grows with its size: its deadline grows likewise, and the user is told what it waits for.
const (
	bulkBase    = 30 * time.Second
	bulkPerItem = 10 * time.Millisecond
	// bulkNotice is the size from which a call says what it does (a second or more of work).
	bulkNotice = 1000
)

// BulkDeadline is the deadline of one call that adds n entities: the usual 30 s and 10 ms
// for each, 130 s for 10,000.
func BulkDeadline(n int) time.Duration { return bulkBase + time.Duration(n)*bulkPerItem }

// Bulk runs call, which adds n entities (what: "units to wordpress"), under BulkDeadline(n).
// From bulkNotice entities on it says on stderr what it waits for: redrawn in place with the
// time spent on a terminal, one line before and one after otherwise.
func Bulk(ctx context.Context, io *output.Streams, n int, what string, call func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, BulkDeadline(n))
	defer cancel()
	if n < bulkNotice || io.Quiet {
		return call(ctx)
	}
	label := fmt.Sprintf("adding %s %s (one transaction)", Thousands(n), what)
	start := time.Now()
	if !io.ErrTerminal {
		io.Infof("%s...", label)
		err := call(ctx)
		if err == nil {
			io.Infof("added %s %s in %.1f s", Thousands(n), what, time.Since(start).Seconds())
		}
		return err
	}
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		fmt.Fprintf(io.ErrOut, "\r\033[K%s... %.0f s", label, time.Since(start).Seconds())
		select {
		case err := <-done:
			fmt.Fprint(io.ErrOut, "\r\033[K")
			if err == nil {
				io.Infof("added %s %s in %.1f s", Thousands(n), what, time.Since(start).Seconds())
			}
			return err
		case <-tick.C:
		}
	}
}

// Thousands writes n with a comma every three digits.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
