package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/jujuclone/juju/api/apierr"
)

// AgentRetryFor bounds how long an agent's call goes on retrying a controller member that went
// away (or lost its quorum) when the call itself has no earlier deadline.
const AgentRetryFor = 30 * time.Second

// retryTransient retries an agent's unary call that failed because the member it reached died
// in the middle of it (codes.Unavailable) or cannot write for want of a quorum, until the call's
// deadline. A hook's status-set in flight when its member is killed then lands on another
// member instead of failing the hook, which would run it again. The agents' calls set values
// (statuses, settings, scopes, leases), so a call that took effect before its answer was lost
// does no harm when repeated.
func retryTransient(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, AgentRetryFor)
		defer cancel()
	}
	wait := 50 * time.Millisecond
	for {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil || !transientStatus(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// transientStatus: the member went away or cannot reach a majority of the store; another member
// (or the same one a moment later) answers.
func transientStatus(err error) bool {
	if status.Code(err) == codes.Unavailable {
		return true
	}
	return errors.Is(apierr.FromStatus(err), apierr.NoQuorum)
}
