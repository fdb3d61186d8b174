package status

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// watchScenario drives status --watch against a fake: the first status, a change event, a
// changed status, another event with a status that differs only in its clock (not printed
// again), then Ctrl-C.
func watchScenario(t *testing.T, terminal bool) (stdout, stderr string, fake *fakeStatus) {
	t.Helper()
	changed := oneApp()
	changed.Applications[0].Units[0].WorkloadStatus = &jujupb.StatusInfo{Status: "blocked", Message: "needs a relation", Since: now.UnixNano()}
	clockOnly := oneApp()
	clockOnly.Applications[0].Units[0].WorkloadStatus = changed.Applications[0].Units[0].WorkloadStatus
	clockOnly.ControllerTime += int64(time.Minute)
	clockOnly.Revision = 99

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake = &fakeStatus{resps: []*jujupb.FullStatusResponse{oneApp(), changed, clockOnly}, watch: newFakeWatcher()}
	fake.after = func(call int) {
		switch call {
		case 1, 2:
			fake.watch.events <- &jujupb.WatchEvent{Kind: "unit", Id: "mysql/0"}
		case 3:
			cancel() // Ctrl-C
		}
	}
	ios, out, errOut := output.TestStreams()
	ios.IsTerminal = terminal
	opts := &statusOptions{IO: ios, Watch: time.Millisecond, Format: output.Tabular, Patterns: []string{"mysql"}}
	setupRun(opts, fake)
	if err := statusRun(ctx, opts); err != nil {
		t.Fatalf("interrupted watch = %v, want success", err)
	}
	return out.String(), errOut.String(), fake
}

// setupRun fills opts as runStatus does, for a run the test drives itself.
func setupRun(opts *statusOptions, fake *fakeStatus) {
	opts.Now = func() time.Time { return now }
	opts.UTC = true
	opts.ResolveModel = func(context.Context) (*cmdutil.ModelRef, error) {
		return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
	}
	opts.Client = func(context.Context) (statusAPI, error) { return fake, nil }
}

func TestWatchPlain(t *testing.T) {
	stdout, stderr, fake := watchScenario(t, false)
	golden.Assert(t, stdout, "status-command/watch.stdout.golden")
	if stderr != "" {
		t.Errorf("stderr = %q", stderr)
	}
	if fake.calls != 3 || strings.Join(fake.patterns, " ") != "mysql" {
		t.Errorf("FullStatus calls = %d, patterns %q", fake.calls, fake.patterns)
	}
	if tg := fake.watch.req.GetTargets(); len(tg) != 1 || tg[0].GetKind() != "model" || fake.watch.req.GetModel() != "uuid-default" {
		t.Errorf("watched %v", fake.watch.req)
	}
	select {
	case <-fake.watch.closed:
	default:
		t.Error("watch not closed")
	}
}

// On a terminal each status replaces the last: cursor home, clear, status.
func TestWatchTerminal(t *testing.T) {
	stdout, _, _ := watchScenario(t, true)
	golden.Assert(t, stdout, "status-command/watch-terminal.stdout.golden")
	if n := strings.Count(stdout, clearScreen); n != 2 || !strings.HasPrefix(stdout, clearScreen) {
		t.Errorf("%d redraws in %q", n, stdout)
	}
}

func TestWatchErrors(t *testing.T) {
	// The watch cannot start.
	ios, _, _ := output.TestStreams()
	opts := &statusOptions{IO: ios, Watch: time.Millisecond, Format: output.Tabular}
	setupRun(opts, &fakeStatus{resp: oneApp(), watchErr: apierr.Errorf(apierr.PermissionDenied, "permission denied")})
	err := statusRun(context.Background(), opts)
	if !errors.Is(err, apierr.PermissionDenied) || err.Error() != `watching model "default": permission denied` {
		t.Errorf("watch refused: %v", err)
	}

	// The watch ends (the controller went away).
	fake := &fakeStatus{resp: oneApp(), watch: newFakeWatcher()}
	fake.after = func(int) { fake.watch.end <- apierr.Errorf(apierr.Unavailable, "watch ended; watch again") }
	ios, out, _ := output.TestStreams()
	opts = &statusOptions{IO: ios, Watch: time.Millisecond, Format: output.Tabular}
	setupRun(opts, fake)
	err = statusRun(context.Background(), opts)
	if !errors.Is(err, apierr.Unavailable) || !strings.HasPrefix(err.Error(), `watching model "default": `) {
		t.Errorf("watch ended: %v", err)
	}
	if !strings.HasPrefix(out.String(), "Model ") {
		t.Errorf("first status not printed: %q", out.String())
	}

	// Reading the status fails.
	fake = &fakeStatus{err: apierr.Errorf(apierr.NotFound, `model "x" not found`)}
	opts = &statusOptions{IO: ios, Watch: time.Millisecond, Format: output.Tabular}
	setupRun(opts, fake)
	if err := statusRun(context.Background(), opts); !errors.Is(err, apierr.NotFound) {
		t.Errorf("status failed: %v", err)
	}

	// Interrupted before the watch is up: success.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fake = &fakeStatus{resp: oneApp(), watchErr: context.Canceled}
	opts = &statusOptions{IO: ios, Watch: time.Millisecond, Format: output.Tabular}
	setupRun(opts, fake)
	if err := statusRun(ctx, opts); err != nil {
		t.Errorf("interrupted: %v", err)
	}
}

// The empty-model note goes to stderr once, not on every redraw.
func TestWatchEmptyNoteOnce(t *testing.T) {
	empty := &jujupb.FullStatusResponse{Model: modelStatus(), ControllerTime: now.UnixNano()}
	later := &jujupb.FullStatusResponse{Model: modelStatus(), ControllerTime: now.UnixNano()}
	later.Model.Status = &jujupb.StatusInfo{Status: "available", Message: "upgrade available"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := &fakeStatus{resps: []*jujupb.FullStatusResponse{empty, later}, watch: newFakeWatcher()}
	fake.after = func(call int) {
		if call == 1 {
			fake.watch.events <- &jujupb.WatchEvent{Kind: "model"}
			return
		}
		cancel()
	}
	ios, out, errOut := output.TestStreams()
	opts := &statusOptions{IO: ios, Watch: time.Millisecond, Format: output.Tabular}
	setupRun(opts, fake)
	if err := statusRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if errOut.String() != "\nModel \"default\" is empty.\n" {
		t.Errorf("stderr = %q", errOut.String())
	}
	if strings.Count(out.String(), "Model ") != 2 {
		t.Errorf("stdout = %q", out.String())
	}
}

func TestSameStatus(t *testing.T) {
	a, b := oneApp(), oneApp()
	b.ControllerTime, b.Revision = 42, 7
	if !sameStatus(a, b) || b.ControllerTime != 42 || b.Revision != 7 {
		t.Error("statuses differing in clock and revision not the same, or b changed")
	}
	b.Applications[0].Units[0].Leader = false
	if sameStatus(a, b) || sameStatus(nil, b) {
		t.Error("different statuses the same")
	}
}
