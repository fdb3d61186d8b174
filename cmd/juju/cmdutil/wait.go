package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// WaitAPI is what --wait needs of the client: a watch that wakes it, and the status it reads
// after each wake-up.
type WaitAPI interface {
	Watch(ctx context.Context, req *jujupb.WatchRequest) (Watcher, error)
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

// Watcher is a stream of change events, as *client.Watcher.
type Watcher interface {
	// Next blocks until the next event; it fails once the stream ends (after Close too).
	Next() (*jujupb.WatchEvent, error)
	Close()
}

var _ Watcher = (*client.Watcher)(nil)

// WatchClient makes *client.Client a WaitAPI (and any consumer interface wanting Watcher): its
// Watch returns the concrete *client.Watcher as a Watcher.
type WatchClient struct{ *client.Client }

// Watch is client.Client.Watch returning the Watcher interface.
func (c WatchClient) Watch(ctx context.Context, req *jujupb.WatchRequest) (Watcher, error) {
	w, err := c.Client.Watch(ctx, req)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// FollowWatch reads w in the background. changed holds at most one pending wake-up, so a burst
// of events is read once; ended receives the error that ends the watch (after Close too).
func FollowWatch(w Watcher) (changed <-chan struct{}, ended <-chan error) {
	wake := make(chan struct{}, 1)
	end := make(chan error, 1)
	go func() {
		for {
			if _, err := w.Next(); err != nil {
				end <- err
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	return wake, end
}

// WaitClientFunc returns the factory's client as a WaitAPI, dialled on first use.
func WaitClientFunc(f *Factory) func(context.Context) (WaitAPI, error) {
	return func(ctx context.Context) (WaitAPI, error) {
		c, err := f.Client(ctx)
		if err != nil {
			return nil, err
		}
		return WatchClient{c}, nil
	}
}

// DefaultWaitTimeout bounds --wait when --timeout is not given, as Juju's wait-for.
const DefaultWaitTimeout = 10 * time.Minute

// WaitFlags are --wait and --timeout, shared by deploy, add-unit and the remove-* commands.
type WaitFlags struct {
	Wait    bool
	Timeout time.Duration
}

// AddWaitFlags registers --wait ("Wait until <until>") and --timeout.
func AddWaitFlags(cmd *cobra.Command, f *WaitFlags, until string) {
	cmd.Flags().BoolVar(&f.Wait, "wait", false, "Wait until "+until+", showing progress on stderr")
	cmd.Flags().DurationVar(&f.Timeout, "timeout", DefaultWaitTimeout, "How long --wait waits before failing")
}

// Validate refuses --timeout without --wait (it would bound nothing) and a --timeout that is
// not positive; both are usage errors.
func (f *WaitFlags) Validate(cmd *cobra.Command) error {
	if cmd.Flags().Changed("timeout") && !f.Wait {
		return FlagErrorf("--timeout without --wait not valid")
	}
	if f.Timeout <= 0 {
		return FlagErrorf("--timeout must be positive")
	}
	return nil
}

// waitState is what a wait makes of one status snapshot.
type waitState struct {
	// done: the wait is over; final is the line that says so.
	done  bool
	final string
	// progress is the line shown while waiting ("waiting for 3 units of wordpress: 1 idle,
	// 2 allocating"); detail is added to the timeout error.
	progress, detail string
	// err fails the wait at once (a unit in error).
	err error
}

// waiter is one wait: what to watch, what to read, how to judge a snapshot.
type waiter struct {
	io       *output.Streams
	api      WaitAPI
	model    string
	timeout  time.Duration
	targets  []*jujupb.WatchTarget
	patterns []string
	check    func(*jujupb.FullStatusResponse) waitState
}

// run reads the status, then again after every change the watch reports, until check says the
// wait is over, fails, or the timeout passes. The watch is set up before the first read, so no
// change falls between a read and the wait that follows it.
func (w *waiter) run(ctx context.Context) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	p := NewProgress(w.io)
	defer p.Clear()

	var last waitState
	// fail explains err: our own deadline passing is the timeout, anything else is passed on.
	// A call can fail with the deadline a moment before ctx reports it, so err counts too.
	fail := func(err error) error {
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
		if timedOut && parent.Err() == nil {
			msg := fmt.Sprintf("timed out after %s %s", w.timeout, last.progress)
			if last.progress == "" {
				msg = fmt.Sprintf("timed out after %s waiting", w.timeout)
			}
			return errors.New(msg + last.detail)
		}
		if parent.Err() != nil {
			return parent.Err()
		}
		return err
	}

	watch, err := w.api.Watch(ctx, &jujupb.WatchRequest{Model: w.model, Targets: w.targets})
	if err != nil {
		return fail(fmt.Errorf("watching for changes: %w", err))
	}
	changed, ended := FollowWatch(watch)
	defer func() { watch.Close() }()

	for {
		fs, err := w.api.FullStatus(ctx, w.model, w.patterns)
		if err != nil {
			return fail(fmt.Errorf("reading status: %w", err))
		}
		st := w.check(fs)
		if st.err != nil {
			return st.err
		}
		if st.done {
			p.Finish(st.final)
			return nil
		}
		last = st
		p.Show(st.progress)
		select {
		case <-changed:
		case err := <-ended:
			// The controller ends a watch it cannot keep up ("watch again"): watch again,
			// then read again, since a change may have been missed in between.
			if !errors.Is(err, apierr.Unavailable) || ctx.Err() != nil {
				return fail(fmt.Errorf("watching for changes: %w", err))
			}
			watch.Close()
			if watch, err = w.api.Watch(ctx, &jujupb.WatchRequest{Model: w.model, Targets: w.targets}); err != nil {
				return fail(fmt.Errorf("watching for changes: %w", err))
			}
			changed, ended = FollowWatch(watch)
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
}

// Progress shows the state of a wait on stderr: on a terminal one line redrawn in place, else
// a plain line each time it changes. --quiet hides it; the final line is informational too.
type Progress struct {
	io    *output.Streams
	last  string
	drawn bool
}

// NewProgress returns a progress line on s's stderr.
func NewProgress(s *output.Streams) *Progress { return &Progress{io: s} }

// Show replaces the progress line with line, unless it is unchanged.
func (p *Progress) Show(line string) {
	if p.io.Quiet || line == p.last {
		return
	}
	p.last = line
	if p.io.ErrTerminal {
		fmt.Fprint(p.io.ErrOut, "\r\x1b[K"+line)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.io.ErrOut, line)
}

// Finish replaces the progress line with the final one.
func (p *Progress) Finish(line string) {
	p.Clear()
	p.io.Infof("%s", line)
}

// Clear erases a line drawn in place, so that what follows (an error) starts on a clean line.
func (p *Progress) Clear() {
	if p.drawn {
		fmt.Fprint(p.io.ErrOut, "\r\x1b[K")
		p.drawn = false
	}
}

// WaitForUnits waits until the agent of every unit of app named in units is idle. A unit in
// error, or whose machine failed to start, fails the wait at once, naming it and the reason.
func WaitForUnits(ctx context.Context, s *output.Streams, api WaitAPI, model, app string, units []string, timeout time.Duration) error {
	if len(units) == 0 {
		return nil
	}
	w := &waiter{
		io: s, api: api, model: model, timeout: timeout,
		targets: []*jujupb.WatchTarget{
			{Kind: "application", Id: app},
			{Kind: "unit", Id: app + "/"},
			{Kind: "machine"}, // a provisioning error is the machine's
		},
		patterns: []string{app},
		check:    func(fs *jujupb.FullStatusResponse) waitState { return checkUnits(fs, app, units) },
	}
	return w.run(ctx)
}

func checkUnits(fs *jujupb.FullStatusResponse, app string, want []string) waitState {
	found := map[string]*jujupb.UnitStatus{}
	for _, a := range fs.GetApplications() {
		for _, u := range a.GetUnits() {
			found[u.GetName()] = u
		}
	}
	machines := map[string]*jujupb.MachineStatus{}
	for _, m := range fs.GetMachines() {
		machines[m.GetId()] = m
	}
	counts := map[string]int{}
	for _, name := range want {
		u, ok := found[name]
		if !ok {
			return waitState{err: fmt.Errorf("unit %s was removed while waiting for it", name)}
		}
		ws, as := u.GetWorkloadStatus(), u.GetAgentStatus()
		if ws.GetStatus() == "error" || as.GetStatus() == "error" || as.GetStatus() == "failed" {
			msg := ws.GetMessage()
			if ws.GetStatus() != "error" || msg == "" {
				msg = as.GetMessage()
			}
			return waitState{err: fmt.Errorf("unit %s is in error: %s; once fixed, run \"juju resolved %s\"", name, orStatus(msg, "error"), name)}
		}
		if m := machines[u.GetMachine()]; m != nil {
			is := m.GetInstanceStatus()
			if is.GetStatus() == "provisioning error" || is.GetStatus() == "error" {
				return waitState{err: fmt.Errorf("machine %s of unit %s failed to start: %s; once fixed, run \"juju retry-provisioning %s\"",
					m.GetId(), name, orStatus(is.GetMessage(), is.GetStatus()), m.GetId())}
			}
		}
		counts[orStatus(as.GetStatus(), "unknown")]++
	}
	what := fmt.Sprintf("%s of %s", plural(len(want), "unit", "units"), app)
	if counts["idle"] == len(want) {
		return waitState{done: true, final: what + " idle"}
	}
	return waitState{progress: fmt.Sprintf("waiting for %s: %s", what, countList(counts, unitStatusOrder))}
}

// unitStatusOrder is how agent states are listed in a progress line: done first.
var unitStatusOrder = []string{"idle", "executing", "allocating", "rebooting", "lost"}

// WaitForRemoval waits until the named entities of kind ("unit", "application" or "machine")
// are gone from the model. On timeout the error says what each one still waits for.
func WaitForRemoval(ctx context.Context, s *output.Streams, api WaitAPI, model, kind string, entities []string, timeout time.Duration) error {
	if len(entities) == 0 {
		return nil
	}
	w := &waiter{io: s, api: api, model: model, timeout: timeout, patterns: entities}
	for _, e := range entities {
		w.targets = append(w.targets, &jujupb.WatchTarget{Kind: kind, Id: e, LifeOnly: true})
		if kind == "application" {
			// Progress counts the units left.
			w.targets = append(w.targets, &jujupb.WatchTarget{Kind: "unit", Id: e + "/", LifeOnly: true})
		}
	}
	w.check = func(fs *jujupb.FullStatusResponse) waitState { return checkRemoved(fs, kind, entities) }
	return w.run(ctx)
}

// RemovalWait is Removal.Wait for --wait: nil without it, else a wait, through client, until the
// removed entities of kind are gone.
func RemovalWait(s *output.Streams, client func(context.Context) (WaitAPI, error), model, kind string, w WaitFlags) func(context.Context, []string) error {
	if !w.Wait {
		return nil
	}
	return func(ctx context.Context, names []string) error {
		api, err := client(ctx)
		if err != nil {
			return err
		}
		return WaitForRemoval(ctx, s, api, model, kind, names, w.Timeout)
	}
}

// WaitForRelationRemoval waits until relation id, whose key is "wordpress:db mysql:db", is
// gone. Only its applications are read.
func WaitForRelationRemoval(ctx context.Context, s *output.Streams, api WaitAPI, model string, id int64, key string, timeout time.Duration) error {
	var apps []string
	for _, ep := range strings.Fields(key) {
		app, _, _ := strings.Cut(ep, ":")
		if !slices.Contains(apps, app) {
			apps = append(apps, app)
		}
	}
	ids := []string{strconv.FormatInt(id, 10)}
	w := &waiter{
		io: s, api: api, model: model, timeout: timeout, patterns: apps,
		targets: []*jujupb.WatchTarget{{Kind: "relation", Id: ids[0], LifeOnly: true}},
		check:   func(fs *jujupb.FullStatusResponse) waitState { return checkRemoved(fs, "relation", ids) },
	}
	return w.run(ctx)
}

// present is what a removal wait sees of one entity still in the model.
type present struct {
	life      string
	blockedBy []string
	units     int
}

func findPresent(fs *jujupb.FullStatusResponse, kind string) map[string]present {
	out := map[string]present{}
	switch kind {
	case "unit":
		for _, a := range fs.GetApplications() {
			for _, u := range a.GetUnits() {
				out[u.GetName()] = present{life: u.GetLife(), blockedBy: u.GetBlockedBy()}
			}
		}
	case "application":
		for _, a := range fs.GetApplications() {
			out[a.GetName()] = present{life: a.GetLife(), blockedBy: a.GetBlockedBy(), units: len(a.GetUnits())}
		}
	case "machine":
		for _, m := range fs.GetMachines() {
			out[m.GetId()] = present{life: m.GetLife(), blockedBy: m.GetBlockedBy()}
		}
	case "relation":
		for _, r := range fs.GetRelations() {
			out[strconv.FormatInt(r.GetId(), 10)] = present{life: r.GetLife(), blockedBy: r.GetBlockedBy()}
		}
	}
	return out
}

func checkRemoved(fs *jujupb.FullStatusResponse, kind string, entities []string) waitState {
	found := findPresent(fs, kind)
	counts := map[string]int{}
	units := 0
	var detail strings.Builder
	shown := 0
	for _, e := range entities {
		p, ok := found[e]
		if !ok {
			counts["gone"]++
			continue
		}
		counts[orStatus(p.life, "alive")]++
		units += p.units
		if len(p.blockedBy) > 0 && shown < 5 {
			fmt.Fprintf(&detail, "\n  %s %s: %s", kind, e, strings.Join(p.blockedBy, "; "))
			shown++
		}
	}
	what := fmt.Sprintf("%s %s", kind, entities[0])
	if len(entities) > 1 {
		what = plural(len(entities), kind, kind+"s")
	}
	if counts["gone"] == len(entities) {
		return waitState{done: true, final: what + " removed"}
	}
	state := countList(counts, removalOrder)
	if len(entities) == 1 {
		state = orStatus(found[entities[0]].life, "alive")
	}
	if kind == "application" && units > 0 {
		state += fmt.Sprintf(" (%s left)", plural(units, "unit", "units"))
	}
	return waitState{progress: fmt.Sprintf("waiting for removal of %s: %s", what, state), detail: detail.String()}
}

// removalOrder is how removal states are listed in a progress line: done first.
var removalOrder = []string{"gone", "dead", "dying", "alive"}

// countList is "1 idle, 2 allocating": the states in order, then any others alphabetically.
func countList(counts map[string]int, order []string) string {
	var keys []string
	for k := range counts {
		if !slices.Contains(order, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range append(slices.Clone(order), keys...) {
		if n := counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orStatus(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// UnitsOf returns the names among units that belong to app, in natural order: the units a
// deploy or add-unit made, for WaitForUnits.
func UnitsOf(app string, units []string) []string {
	var out []string
	for _, u := range units {
		if a, _, ok := strings.Cut(u, "/"); ok && a == app {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, names.NaturalCompare)
	return out
}
