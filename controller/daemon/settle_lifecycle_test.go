package daemon_test

// The tests' waits for a model: they wait for the model to stop moving, not for a number of
// seconds. A loaded machine slows every step down but stops none, so a wait gives up only when
// no document of the model has changed for a while and no hook is running (the model is stuck),
// or after a generous overall limit; it then says what is left and why.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

const (
	// waitQuiet is how long a model may stand still (no document changing, no hook running)
	// before a wait calls it stuck.
	waitQuiet = 30 * time.Second
	// waitLimit caps a wait on a model that keeps changing without getting there.
	waitLimit = 5 * time.Minute
	// waitPoll re-checks a model that sends no events (a lost watch is watched again).
	waitPoll = 250 * time.Millisecond
	// waitBurst lets a burst of changes land before checking again: one check per burst.
	waitBurst = 20 * time.Millisecond
)

// errNotSettled is what waitModel's failures wrap.
var errNotSettled = errors.New("not settled")

// waitModel calls check at once, then after every burst of changes to the model's documents
// (followed through the API's watch, as `juju wait-for` does) and at least every waitPoll, until
// check is done or fails. It gives up when the model has not moved for quiet (a running hook
// counts as moving: the hook timeout bounds it), or after limit; the error then describes
// what of the model is unsettled and why.
func waitModel(ctx context.Context, c *client.Client, model string, quiet, limit time.Duration, check func() (bool, error)) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	moved := make(chan struct{}, 1)
	go followModel(wctx, c, model, moved)
	poll := time.NewTicker(waitPoll)
	defer poll.Stop()
	start, last := time.Now(), time.Now()
	for {
		if done, err := check(); err != nil || done {
			return err
		}
		now := time.Now()
		if now.Sub(last) >= quiet || now.Sub(start) >= limit {
			fs, err := c.FullStatus(ctx, model, nil)
			if err != nil {
				return fmt.Errorf("%w, and reading status: %w", errNotSettled, err)
			}
			if now.Sub(start) >= limit {
				return fmt.Errorf("%w: still changing after %s:\n%s", errNotSettled, limit, describeModel(fs))
			}
			if len(runningHooks(fs)) == 0 {
				return fmt.Errorf("%w: stuck, nothing changed for %s and no hook is running:\n%s", errNotSettled, quiet, describeModel(fs))
			}
			last = now
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
			last = time.Now()
			time.Sleep(waitBurst)
			select {
			case <-moved:
			default:
			}
		case <-poll.C:
		}
	}
}

// followModel signals moved (without blocking) on every change to the model's documents until
// ctx ends; a watch that ends is watched again (and counts as a change: events may be lost).
func followModel(ctx context.Context, c *client.Client, model string, moved chan<- struct{}) {
	signal := func() {
		select {
		case moved <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, &pb.WatchRequest{Model: model, Targets: []*pb.WatchTarget{{Kind: "model"}}})
		if err == nil {
			for {
				if _, err := w.Next(); err != nil {
					break
				}
				signal()
			}
			w.Close()
			signal()
		}
		select {
		case <-ctx.Done():
		case <-time.After(waitPoll):
		}
	}
}

// waitStatus waits (waitModel) until ok holds for the model's status, and returns that status;
// on failure it returns the last status read.
func waitStatus(ctx context.Context, c *client.Client, model string, quiet, limit time.Duration, ok func(*pb.FullStatusResponse) bool) (*pb.FullStatusResponse, error) {
	var last *pb.FullStatusResponse
	err := waitModel(ctx, c, model, quiet, limit, func() (bool, error) {
		fs, err := c.FullStatus(ctx, model, nil)
		if err != nil {
			return false, err
		}
		last = fs
		return ok(fs), nil
	})
	return last, err
}

// runningHooks lists the units running a hook, with what they run.
func runningHooks(fs *pb.FullStatusResponse) []string {
	var out []string
	for _, a := range fs.GetApplications() {
		for _, u := range a.GetUnits() {
			if u.GetAgentStatus().GetStatus() == "executing" {
				out = append(out, fmt.Sprintf("%s (%s)", u.Name, u.GetAgentStatus().GetMessage()))
			}
		}
	}
	return out
}

// failedProvisioning reports whether a machine's provisioning failed: it waits for `juju
// resolved` (L-M5), which is as settled as it gets.
func failedProvisioning(m *pb.MachineStatus) bool {
	return m.GetInstanceId() == "" && m.GetInstanceStatus().GetStatus() == "provisioning error"
}

// describeModel says, one line each, what of a model is unsettled and why: every entity that
// is not alive (with its life, status and removal blockers, L-F2), every machine without an
// instance or a started agent, and every unit whose agent is not idle.
func describeModel(fs *pb.FullStatusResponse) string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, "  "+fmt.Sprintf(format, args...)) }
	status := func(s *pb.StatusInfo) string {
		if s.GetMessage() == "" {
			return s.GetStatus()
		}
		return fmt.Sprintf("%s %q", s.GetStatus(), s.GetMessage())
	}
	blocked := func(why []string) string {
		if len(why) == 0 {
			return ""
		}
		return "; blocked by: " + strings.Join(why, "; ")
	}
	for _, m := range fs.GetMachines() {
		if m.Life == "alive" && m.InstanceId != "" && m.GetAgentStatus().GetStatus() == "started" {
			continue
		}
		inst := m.InstanceId
		if inst == "" {
			inst = "none"
		}
		add("machine %s %s: instance %s (%s), agent %s%s", m.Id, m.Life, inst, status(m.GetInstanceStatus()),
			status(m.GetAgentStatus()), blocked(m.BlockedBy))
	}
	for _, a := range fs.GetApplications() {
		if a.Life != "alive" {
			add("application %s %s: %d units, %d relations%s", a.Name, a.Life, len(a.Units), a.RelationCount, blocked(a.BlockedBy))
		}
		for _, u := range a.GetUnits() {
			if u.Life == "alive" && u.GetAgentStatus().GetStatus() == "idle" {
				continue
			}
			where := "machine " + u.Machine
			if u.Principal != "" {
				where = "principal " + u.Principal
			}
			add("unit %s %s (%s, scopes %v): agent %s, workload %s%s", u.Name, u.Life, where, u.Scopes,
				status(u.GetAgentStatus()), status(u.GetWorkloadStatus()), blocked(u.BlockedBy))
		}
	}
	for _, r := range fs.GetRelations() {
		if r.Life != "alive" {
			add("relation %d (%s) %s: in scope %v%s", r.Id, r.Key, r.Life, r.ScopeUnits, blocked(r.BlockedBy))
		}
	}
	if len(lines) == 0 {
		return "  everything is alive, provisioned and idle"
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
