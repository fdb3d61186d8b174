package apierr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRoundTrip(t *testing.T) {
	for _, row := range table {
		t.Run(row.reason, func(t *testing.T) {
			err := fmt.Errorf("adding unit: %w", Errorf(row.err, "application %q thing", "mysql"))
			wire := ToStatus(err)
			if got := status.Code(wire); got != row.code {
				t.Fatalf("code = %v, want %v", got, row.code)
			}
			back := FromStatus(wire)
			if !errors.Is(back, row.err) {
				t.Fatalf("errors.Is(%v, %v) = false", back, row.err)
			}
			if back.Error() != err.Error() {
				t.Fatalf("message = %q, want %q", back.Error(), err.Error())
			}
		})
	}
}

func TestUnknownAndContext(t *testing.T) {
	if got := status.Code(ToStatus(errors.New("boom"))); got != codes.Unknown {
		t.Fatalf("code = %v", got)
	}
	if got := FromStatus(ToStatus(errors.New("boom"))).Error(); got != "boom" {
		t.Fatalf("message = %q", got)
	}
	if !errors.Is(FromStatus(ToStatus(context.DeadlineExceeded)), context.DeadlineExceeded) {
		t.Fatal("deadline lost")
	}
	if ToStatus(nil) != nil || FromStatus(nil) != nil {
		t.Fatal("nil not preserved")
	}
}

func TestErrorfKeepsWrappedSentinel(t *testing.T) {
	err := Errorf(NotFound, "unit %q: %w", "a/0", NotFound)
	if !errors.Is(err, NotFound) || err.Error() != `unit "a/0": not found` {
		t.Fatalf("got %v", err)
	}
}

// gRPC's own ResourceExhausted (a message too large) carries no details and is no throttle.
func TestBareResourceExhaustedIsNotThrottled(t *testing.T) {
	bare := status.Error(codes.ResourceExhausted, "grpc: received message larger than max (300 vs. 200)")
	if err := FromStatus(bare); errors.Is(err, Throttled) || err.Error() != "grpc: received message larger than max (300 vs. 200)" {
		t.Fatalf("FromStatus(bare ResourceExhausted) = %v", err)
	}
	ours := FromStatus(ToStatus(Errorf(Throttled, "too many failed logins of user-admin from 127.0.0.1, retry in 8s")))
	if !errors.Is(ours, Throttled) || ours.Error() != "too many failed logins of user-admin from 127.0.0.1, retry in 8s" {
		t.Fatalf("throttle round trip = %v", ours)
	}
}
