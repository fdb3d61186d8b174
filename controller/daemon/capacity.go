package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jujuclone/juju/core/fdlimit"
)

// capacity answers the API server's question before units or machines are added: could this
// controller's processes take more agents? jujud itself, and the agent host while this member
// runs it (the workers' owner; another member's calls check jujud only).
type capacity struct {
	mu    sync.Mutex
	files filesChecker
}

// filesChecker is the agent host's launcher (or the in-process runner).
type filesChecker interface {
	CheckFiles(ctx context.Context) error
}

func (c *capacity) set(f filesChecker) {
	c.mu.Lock()
	c.files = f
	c.mu.Unlock()
}

func (c *capacity) check(ctx context.Context) error {
	if err := fdlimit.Check(fdlimit.DefaultReserve); err != nil {
		return fmt.Errorf("the controller is near its open-file limit: %w", err)
	}
	c.mu.Lock()
	f := c.files
	c.mu.Unlock()
	if f == nil {
		return nil
	}
	// Only the host's answer that it is near its limit refuses: a host that cannot be asked
	// now (restarting) is the provisioner's to wait for, not a reason to refuse.
	if err := f.CheckFiles(ctx); errors.Is(err, fdlimit.ErrTooManyOpenFiles) {
		return fmt.Errorf("the agent host is near its open-file limit: %w", err)
	}
	return nil
}
