package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jujuclone/juju/api/apierr"
	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/controller/agent/hooktool"
	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/modelconfig"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/core/status"
)

// unitAgent runs one unit (L-S unit agent): it runs the charm's hooks one at a time (install,
// leader-elected, config-changed, start; relation hooks as scopes change; the departing
// sequence, stop and remove when dying), enters and leaves relation scopes, deploys and removes
// its subordinates, follows its application (or, for a subordinate, its principal relation) to
// dying, and when dying clears everything that holds the unit and sets it dead.
type unitAgent struct {
	// slot is the agent's permit to work (workslots.go): held for its setup and each pass.
	slot        *slot
	runner      *Runner
	dir         string
	conf        Conf
	c           *client.Client
	subs        *deployer
	hookTimeout time.Duration
	toolsBinary string

	log       *unitLog
	stopLog   func()
	toolsAddr string
	tools     *hooktool.Server
	// sharedToolsDir is the runner's hook tools directory when the unit uses it ("": its own).
	sharedToolsDir string

	// mu guards what running hooks' tool calls read and write while the agent waits for the
	// hook: st, workload.
	mu        sync.Mutex
	st        *uniterState
	workload  *pb.StatusInfo
	principal string
	// lead is the unit's leadership, extended by the runner's lease keeper whatever runs;
	// leader is what the pass's snapshot says of it.
	lead   *leadership
	leader bool
	// executing: the agent status says a hook runs; idle is due when the pass ends.
	executing bool
	// queued: statuses of hooks the charm lacks, written with the pass's next status write
	// (setStatus): nothing ran, so nothing was seen meanwhile, and a hookless unit's deploy
	// costs one status write instead of three (issue 16).
	queued *pb.SetUnitStatusRequest
	// statusChecked: the first read has corrected an agent status a previous agent left.
	statusChecked bool
	// dirty: st changed (by hooks the charm does not have) since it was last written.
	dirty bool
	// homeMade: the home directory of the machine uid's charm code is there (isolate), made
	// before the unit's first process: a hookless unit never needs one (issue 16).
	homeMade atomic.Bool
	hooks    map[string]bool
	// dispatch: the charm has a dispatch script, which runs every hook (hooks is nil then:
	// the charm has every hook).
	dispatch bool
	// updateStatusDue: update-status is due at the end of the pass (its timer fired).
	updateStatusDue       bool
	updateInterval        time.Duration
	updateIntervalChanged bool
	// retry is automatically-retry-hooks: the timer that brings a failed hook back.
	retry         hookRetry
	endpointsOnce sync.Once
	endpointNames []string
	// observed: the endpoints the charm has relation hooks for, the only ones whose members
	// the agent reads on every wake-up (the others are passive, see snapshot.passive).
	observed []string
	// waitingUpgrade is the charm upgrade ("<url> <version>") last logged as waiting for the
	// unit's error to be resolved.
	waitingUpgrade string

	// The subordinates' watch, re-armed when the set of subordinates changes.
	subNames   []string
	subCancel  context.CancelFunc
	subChanged <-chan struct{}
	subDone    <-chan error

	// tasks is the unit's task queue (actions, juju exec); tasksDue: it changed since it was
	// last read. lastSnap is the last pass's snapshot, which tasks run with when only the
	// queue changed.
	tasks    *taskQueue
	tasksDue bool
	lastSnap *snapshot
	// readTasks is the queue as the pass's read of the unit's world found it (nil: not read):
	// the first look at the queue in the pass, when nothing changed since.
	readTasks *[]*pb.Task
	// actionSpecs are the actions the unit's charm defines, read at its first action (nil
	// until then, and again after an upgrade).
	actionSpecs map[string]charm.Action

	// The joined relations' scope and settings watch, re-armed when that set changes.
	relIDs     []int64
	relCancel  context.CancelFunc
	relChanged <-chan struct{}
	relDone    <-chan error
}

func newUnitAgent(r *Runner, dir string, conf Conf, c *client.Client) *unitAgent {
	return &unitAgent{runner: r, dir: dir, conf: conf, c: c, hookTimeout: r.cfg.HookTimeout, toolsBinary: r.cfg.ToolsBinary,
		slot: &slot{slots: r.work},
		subs: &deployer{runner: r, c: c, conf: conf, root: filepath.Join(dir, "subordinates")},
		lead: newLeadership(r.leases, c, conf.Model, conf.ID, r.cfg.LeaseDuration)}
}

func (a *unitAgent) charmDir() string { return filepath.Join(a.dir, "charm") }

// toolsDir is where the unit's hook tools are: the runner's shared directory, or its own.
func (a *unitAgent) toolsDir() string {
	if a.sharedToolsDir != "" {
		return a.sharedToolsDir
	}
	return filepath.Join(a.dir, "tools")
}

func (a *unitAgent) run(ctx context.Context) error {
	// The watches end with this run (an error restarts the agent with new ones): a stopped
	// agent must not look connected.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = withSlot(ctx, a.slot)
	if err := a.slot.take(ctx); err != nil {
		return nil // stopping
	}
	defer a.slot.give()
	if err := a.setup(ctx); err != nil {
		return err
	}
	defer a.teardown()
	defer a.lead.stop()
	app, _ := names.UnitApplication(a.conf.ID)
	// One stream for the unit's world and its task queue, told apart by the events' kind.
	changed, tasksChanged, done, err := a.runner.watches.split(ctx, a.c, a.conf.Model, map[string]bool{state.KindTasks: true},
		&pb.WatchTarget{Kind: state.KindTasks, Id: a.conf.ID},
		// Its own status writes (before and after each hook) and scope changes would each cost
		// a read of its world.
		&pb.WatchTarget{Kind: state.KindUnit, Id: a.conf.ID, IgnoreOwnWrites: true},
		&pb.WatchTarget{Kind: state.KindApplication, Id: app, IgnoreOwnWrites: true},
		&pb.WatchTarget{Kind: state.KindRelation, LifeOnly: true},
		&pb.WatchTarget{Kind: state.KindLeadership, Id: app},
		&pb.WatchTarget{Kind: state.KindLeaderSettings, Id: app},
		// The model's configuration (update-status-hook-interval, logging-config ...).
		&pb.WatchTarget{Kind: state.KindModel, Id: "model"})
	if err != nil {
		if gone(err) {
			return nil
		}
		return fmt.Errorf("unit %s: watching: %w", a.conf.ID, err)
	}
	a.tasks = &taskQueue{c: a.c, model: a.conf.Model, receiver: a.conf.ID, changed: tasksChanged}
	a.tasksDue = true // the first read also fails what a stopped agent left running
	defer a.stopSubWatch()
	defer a.stopRelWatch()
	// update-status runs on the model's interval, only for a charm that has the hook (a charm
	// without it costs no wake-ups). The timer is reset when the interval changes, its first
	// run at a random point of the interval's second half: units deployed together would
	// otherwise all wake at once, a thousand agents reading their world in the same second.
	updateStatus := time.NewTimer(time.Hour)
	updateStatus.Stop()
	defer updateStatus.Stop()
	onlyTasks := false // only the task queue changed: no need to read the unit's world again
	for {
		var err error
		if onlyTasks && a.lastSnap != nil {
			err = a.handleTasks(ctx)
		} else {
			err = a.handle(ctx)
		}
		a.readTasks = nil // what the pass read of the queue is its own
		onlyTasks = false
		if a.st != nil && a.st.Failed != nil {
			a.retry.arm() // automatically-retry-hooks
		}
		if a.updateInterval > 0 && a.updateIntervalChanged {
			a.updateIntervalChanged = false
			if a.has(hookUpdateStatus) {
				updateStatus.Reset(a.updateInterval/2 + rand.N(a.updateInterval/2+1))
			}
		}
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil {
			return err
		}
		if rearmed, err := a.watchRelations(ctx); err != nil {
			return err
		} else if rearmed {
			continue // changes between the last read and the new watch: read again
		}
		a.slot.give() // nothing to do until something changes
		a.log.idle()
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			return a.watchEnded(ctx, "", err)
		case err := <-a.subDone:
			return a.watchEnded(ctx, "subordinates' ", err)
		case err := <-a.relDone:
			return a.watchEnded(ctx, "relations' ", err)
		case <-tasksChanged:
			a.tasksDue, onlyTasks = true, true
		case <-changed:
		case <-a.subChanged:
		case <-a.relChanged:
		case <-a.lead.changed:
			// Leadership came (is-leader claimed it in a hook) or went (the lease could not be
			// extended, or the controller gave it up for a unit that is not alive).
		case <-updateStatus.C:
			a.updateStatusDue = true
			updateStatus.Reset(a.updateInterval)
		case <-a.retry.C():
			a.retry.fired()
		}
		if err := a.slot.take(ctx); err != nil {
			return nil // stopping
		}
	}
}

func (a *unitAgent) watchEnded(ctx context.Context, which string, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("unit %s: %swatch ended: %w", a.conf.ID, which, err)
}

// setup opens the unit's log, reads its local record and starts the hook tools' server.
func (a *unitAgent) setup(ctx context.Context) error {
	st, err := readUnitRecord(a.dir, a.conf)
	if err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	a.st = st
	if err := a.readHooks(); err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	if a.log, err = openUnitLog(a.dir, a.conf.Tag, a.conf.Model, a.c); err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	a.subs.log = a.log // the subordinates this unit deploys are logged as its own steps
	a.stopLog = a.log.shipUntilStopped(ctx)
	if a.toolsBinary != "" {
		if err := a.installTools(); err != nil {
			a.teardown()
			return fmt.Errorf("unit %s: installing hook tools: %w", a.conf.ID, err)
		}
	}
	// The runner's server answers every unit's tools; this unit's hooks are told apart by
	// their context ids.
	if a.tools, err = a.runner.toolsServer(); err != nil {
		a.teardown()
		return fmt.Errorf("unit %s: serving hook tools: %w", a.conf.ID, err)
	}
	a.toolsAddr = a.tools.Addr()
	return nil
}

func (a *unitAgent) teardown() {
	a.tools = nil // the runner's: it serves the other units on
	if a.stopLog != nil {
		a.stopLog()
		a.stopLog = nil
	}
	if a.log != nil {
		a.log.close()
	}
}

// registerContext makes c answer the tools of the process started with JUJU_CONTEXT_ID=id:
// for callers of the machine's uid alone when the unit's charm code runs as it.
func (a *unitAgent) registerContext(id string, c *hookContext) {
	uid := -1
	if a.conf.isolated() {
		uid = a.conf.UID
	}
	a.tools.RegisterAs(id, c, uid)
}

// handle reads the unit's world once and does everything now due: hooks in order, one at a
// time, scope changes, subordinates, and finally death when the unit is dying and nothing
// holds it. A failed hook suspends all of it until `juju resolved` (L-U2).
func (a *unitAgent) handle(ctx context.Context) error {
	snap, err := a.read(ctx)
	if err != nil {
		return err
	}
	a.lastSnap = snap
	if snap.unit.Principal != "" && snap.alive() && !principalRelationAlive(snap.unit, snap.rels) {
		// L-U5, L-R5: the last alive container relation to the principal is gone.
		if err := a.setDying(ctx); err != nil {
			return err
		}
		snap.unit.Life = string(life.Dying)
	}
	if a.st.Failed != nil {
		// refresh --force-units: the new charm goes in place while the unit waits in error.
		if err := a.forcedUpgrade(ctx, snap); err != nil {
			return err
		}
		if done, err := a.resolve(ctx, snap); err != nil || !done {
			if err != nil {
				return err
			}
			return a.handleTasks(ctx) // actions run while the unit waits in error, as in Juju
		}
	}
	for {
		// Queued tasks go before the next hook, as Juju's resolver orders them.
		if err := a.runTasks(ctx, snap); err != nil {
			return err
		}
		a.mu.Lock()
		next := nextStep(a.st, snap)
		a.mu.Unlock()
		if next == nil {
			break
		}
		if err := a.runStep(ctx, next, snap); errors.Is(err, errHookFailed) {
			return nil
		} else if err != nil {
			return err
		}
	}
	if a.updateStatusDue && a.st.Started && snap.alive() {
		// Only between other hooks, never while the unit waits in error.
		a.updateStatusDue = false
		if err := a.runHook(ctx, &hookSpec{Kind: hookUpdateStatus}, snap); errors.Is(err, errHookFailed) {
			return nil
		} else if err != nil {
			return err
		}
	}
	if err := a.runTasks(ctx, snap); err != nil {
		return err
	}
	if err := a.idle(ctx); err != nil {
		return err
	}
	if err := a.tendSubordinates(ctx, snap.unit); err != nil {
		return err
	}
	if !snap.alive() && (a.st.Removed || !a.st.Installed) && len(a.st.Relations) == 0 {
		// L-U2, L-U4: dead once out of every scope and rid of every subordinate.
		l, err := a.c.EnsureUnitDead(ctx, a.conf.Model, a.conf.ID)
		if err != nil {
			return fmt.Errorf("unit %s: %w", a.conf.ID, err)
		}
		if l == string(life.Dead) {
			a.log.write("INFO", "juju.worker.uniter", "unit is dead")
			return errStop // its record goes with its directory: not worth writing
		}
	}
	if a.dirty {
		return a.recordRemembered()
	}
	return nil
}

// handleTasks runs the queued tasks with the last pass's snapshot, then ends the pass.
func (a *unitAgent) handleTasks(ctx context.Context) error {
	if err := a.runTasks(ctx, a.lastSnap); err != nil {
		return err
	}
	return a.idle(ctx)
}

// remember changes the local record without writing it: for changes that cost nothing to
// redo if lost (hooks the charm lacks, scope moves, which the store records anyway, L-R6).
// The pass writes them once at its end, with the next hook that runs, or not at all when the
// unit is dead by then.
func (a *unitAgent) remember(change func(*uniterState)) {
	a.mu.Lock()
	change(a.st)
	a.dirty = true
	a.mu.Unlock()
}

// read takes the unit's snapshot: the unit, its application, its relations, and whether it
// leads (claiming the lease when nobody holds it, extending it when it does).
func (a *unitAgent) read(ctx context.Context) (*snapshot, error) {
	req := &pb.UnitWorldRequest{Model: a.conf.Model, Unit: a.conf.ID, Tasks: a.tasksDue}
	if a.hooks == nil {
		req.AllMembers = true
	} else {
		req.MemberEndpoints = a.observed
	}
	// Who leads according to a read that started before the unit's last claim says nothing of
	// that claim.
	readAt := a.lead.now()
	w, err := a.c.UnitWorld(ctx, req)
	if gone(err) {
		return nil, errStop
	}
	if err != nil {
		return nil, fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	if req.Tasks {
		// The queue as of this read: the pass's first look at it needs no call of its own.
		a.readTasks = &w.Tasks
	}
	u := w.Unit
	if u.Life == string(life.Dead) {
		return nil, errStop // L-U3: its deployer recalls and removes it
	}
	if !a.statusChecked {
		// A previous agent, stopped by a crash or a controller restart, may have left
		// "executing" behind: nothing runs now, so the status says idle until a hook or an
		// action really starts (a hook to finish runs again and says so).
		if u.GetAgentStatus().GetStatus() == string(status.Executing) && !a.executing {
			if err := a.setStatus(ctx, &pb.SetUnitStatusRequest{AgentStatus: &pb.StatusInfo{Status: string(status.Idle)}}, false); err != nil {
				return nil, err
			}
		}
		a.statusChecked = true
	}
	a.principal = u.Principal
	app, rels := w.Application, w.Relations
	if err := a.followToDying(ctx, u, app); err != nil {
		return nil, err
	}
	// Claim when nobody leads; as the leader, ask the controller only when the lease keeper
	// has not extended the lease in time (or this agent just started). A unit that is not alive
	// gives its leadership up at once, so that an alive one takes over.
	alive := u.Life == string(life.Alive)
	switch {
	case app != nil && app.Leader == a.conf.ID && !alive:
		err = a.lead.claim(ctx)
	case app != nil && app.Leader == a.conf.ID:
		err = a.lead.ensure(ctx)
	case app != nil && app.Leader == "" && alive:
		a.lead.observe(readAt)
		err = a.lead.ensure(ctx)
	default:
		a.lead.observe(readAt)
	}
	if err != nil {
		return nil, fmt.Errorf("unit %s: claiming leadership: %w", a.conf.ID, err)
	}
	held := a.lead.leading()
	if held && !a.leader {
		a.log.write("INFO", "juju.worker.uniter", "this unit is now the leader of "+u.Application)
	}
	a.leader = held
	if !a.leader && a.st.LeaderElected {
		a.mu.Lock()
		a.st.LeaderElected = false // a later term runs leader-elected again
		a.mu.Unlock()
	}
	a.mu.Lock()
	if a.workload == nil {
		a.workload = u.WorkloadStatus
	}
	a.mu.Unlock()
	if app == nil {
		app = &pb.AgentApplication{Name: u.Application, Life: string(life.Dead)}
	}
	if d := time.Duration(app.UpdateStatusIntervalSeconds) * time.Second; d > 0 && d != a.updateInterval {
		a.updateInterval, a.updateIntervalChanged = d, true
	}
	if cfg := app.GetModelConfig(); cfg != nil {
		a.log.setLoggingConfig(cfg[modelconfig.LoggingConfig])
		a.retry.enabled = modelconfig.RetryHooks(cfg)
	}
	return &snapshot{unit: u, app: app, rels: rels, leader: a.leader, hooks: a.hooks}, nil
}

// errHookFailed: a hook failed; the unit waits in error for `juju resolved`.
var errHookFailed = errors.New("hook failed")

// runStep runs one hook or scope change and records it.
func (a *unitAgent) runStep(ctx context.Context, s *step, snap *snapshot) error {
	switch {
	case s.hook != nil:
		return a.runHook(ctx, s.hook, snap)
	case s.enter != nil:
		// L-R2: settings first, then scope, in one transaction.
		_, err := a.c.EnterScope(ctx, &pb.ScopeRequest{
			Model: a.conf.Model, Unit: a.conf.ID, RelationId: s.enter.Id,
			Settings: map[string]string{"private-address": a.conf.address()},
		})
		if errors.Is(err, apierr.NotAlive) || errors.Is(err, apierr.NotFound) {
			s.enter.ShouldJoin = false // the relation or the unit moved on; the watch brings us back
			return nil
		}
		if err != nil {
			return fmt.Errorf("unit %s: entering relation %d: %w", a.conf.ID, s.enter.Id, err)
		}
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("joined relation %d (%s)", s.enter.Id, s.enter.Key))
		// The counterparts come with the next read: the relations' watch is re-armed for
		// this one, and re-arming reads again.
		s.enter.InScope = true
		a.remember(func(st *uniterState) { st.Relations[s.enter.Id] = newRelationState(s.enter) })
	case s.leave:
		// The last one out removes the relation (L-R4).
		if err := a.c.LeaveScope(ctx, a.conf.Model, a.conf.ID, s.id); err != nil && !errors.Is(err, apierr.NotFound) {
			return fmt.Errorf("unit %s: leaving relation %d: %w", a.conf.ID, s.id, err)
		}
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("left relation %d", s.id))
		if r := snap.relation(s.id); r != nil {
			r.InScope = false
		}
		a.remember(func(st *uniterState) { delete(st.Relations, s.id) })
	case s.forget:
		a.remember(func(st *uniterState) { delete(st.Relations, s.id) })
	case s.upgrade != "":
		return a.upgradeCharm(ctx, s.upgrade, snap, false)
	}
	return nil
}

// record changes the local record and writes it.
func (a *unitAgent) record(change func(*uniterState)) error {
	return a.writeRecord(change, (*uniterState).write)
}

// recordRemembered writes what the pass only remembered, without waiting for the disk: all of
// it costs nothing to redo if a crash loses it (a hookless unit's deploy saves an fsync).
// What hooks did was written, synced, when they ran.
func (a *unitAgent) recordRemembered() error {
	return a.writeRecord(func(*uniterState) {}, (*uniterState).writeUnsynced)
}

func (a *unitAgent) writeRecord(change func(*uniterState), write func(*uniterState, string) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	change(a.st)
	if err := write(a.st, a.dir); err != nil {
		return fmt.Errorf("unit %s: %w", a.conf.ID, err)
	}
	a.dirty = false
	return nil
}

// runHook runs one hook with its statuses around it; a failure puts the unit in error.
func (a *unitAgent) runHook(ctx context.Context, h *hookSpec, snap *snapshot) error {
	if err := a.beforeHook(ctx, h); err != nil {
		return err
	}
	id := hooktool.NewContextID() // unguessable: only the hook's environment holds it
	a.registerContext(id, &hookContext{a: a, hook: h, snap: snap})
	// The environment is made only for a hook the charm has: a hookless unit's install, start
	// and the rest cost no environment each (issue 16).
	err := a.execHook(ctx, h, func() []string { return a.hookEnv(h, id, snap) })
	a.tools.Unregister(id)
	var failed *hookError
	switch {
	case errors.As(err, &failed):
		return a.fail(ctx, h, failed)
	case err != nil && !errors.Is(err, errHookMissing):
		return err
	}
	missing := errors.Is(err, errHookMissing)
	if missing {
		a.remember(func(st *uniterState) { st.commit(h) }) // nothing ran: nothing lost if forgotten
	} else if err := a.record(func(st *uniterState) { st.commit(h) }); err != nil {
		return err
	}
	return a.afterHook(ctx, h, missing)
}

// beforeHook sets the statuses a hook runs under: the agent executing it, and the workload
// steps Juju shows for install, stop and remove. Only install's is written when the charm
// lacks the hook (it also records the unit's address): the others would show a step that
// takes no time, at the cost of a write per unit in a thousand-unit removal.
func (a *unitAgent) beforeHook(ctx context.Context, h *hookSpec) error {
	req := &pb.SetUnitStatusRequest{Model: a.conf.Model, Id: a.conf.ID}
	has := a.has(h.Name())
	switch {
	case h.Kind == hookInstall:
		req.WorkloadStatus, req.PublicAddress = installingStatus, a.conf.address()
	case h.Kind == hookStop && has:
		req.WorkloadStatus = stoppingStatus
	case h.Kind == hookRemove && has:
		req.WorkloadStatus = cleaningStatus
	}
	if has || req.WorkloadStatus != nil {
		req.AgentStatus = &pb.StatusInfo{Status: string(status.Executing), Message: "running " + h.Name() + " hook"}
		a.executing = true
	}
	if req.AgentStatus == nil {
		return nil
	}
	if err := a.setStatus(ctx, req, !has); err != nil {
		return err
	}
	if req.WorkloadStatus != nil {
		a.setWorkload(req.WorkloadStatus)
	}
	return nil
}

// setStatus writes req's statuses together with those queued before it (req's own win), or,
// when later, queues them for the pass's next write.
func (a *unitAgent) setStatus(ctx context.Context, req *pb.SetUnitStatusRequest, later bool) error {
	if q := a.queued; q != nil {
		if req.AgentStatus == nil {
			req.AgentStatus = q.AgentStatus
		}
		if req.WorkloadStatus == nil {
			req.WorkloadStatus = q.WorkloadStatus
		}
		if req.PublicAddress == "" {
			req.PublicAddress = q.PublicAddress
		}
	}
	req.Model, req.Id = a.conf.Model, a.conf.ID
	if later {
		a.queued = req
		return nil
	}
	if err := a.c.SetUnitStatus(ctx, req); err != nil {
		return fmt.Errorf("unit %s: setting status: %w", a.conf.ID, err)
	}
	a.queued = nil
	return nil
}

// afterHook: start leaves the workload "unknown" unless the charm said otherwise; remove ends
// in "terminated" (juju-cli.md §4). The status of a hook that did not run (missing) is
// queued, as it is redone if lost; a hook that ran is recorded, so its status is written now.
func (a *unitAgent) afterHook(ctx context.Context, h *hookSpec, missing bool) error {
	a.mu.Lock()
	charmStatus := a.st.CharmStatus
	a.mu.Unlock()
	var w *pb.StatusInfo
	switch {
	case h.Kind == hookStart && !charmStatus:
		w = &pb.StatusInfo{Status: string(status.Unknown)}
	case h.Kind == hookRemove:
		w = &pb.StatusInfo{Status: string(status.Terminated)}
	default:
		return nil
	}
	req := &pb.SetUnitStatusRequest{WorkloadStatus: w}
	if h.Kind == hookRemove && a.executing {
		// Nothing runs after remove: the pass's idle goes in the same write.
		req.AgentStatus, a.executing = &pb.StatusInfo{Status: string(status.Idle)}, false
	}
	if err := a.setStatus(ctx, req, missing); err != nil {
		return err
	}
	a.setWorkload(w)
	return nil
}

// endpoints lists the charm's endpoints (juju-info included), read from its metadata once; a
// charm whose metadata cannot be read has none (network-get then refuses every binding).
func (a *unitAgent) endpoints() []string {
	a.endpointsOnce.Do(func() {
		meta, err := charm.ReadDir(a.charmDir())
		if err != nil {
			a.log.write("WARNING", "juju.worker.uniter", fmt.Sprintf("reading the charm's metadata: %v", err))
			return
		}
		for _, ep := range meta.Endpoints() {
			if !slices.Contains(a.endpointNames, ep.Name) {
				a.endpointNames = append(a.endpointNames, ep.Name)
			}
		}
	})
	return a.endpointNames
}

// has reports whether the charm has a hook: every hook when it has dispatch.
func (a *unitAgent) has(hook string) bool { return a.dispatch || a.hooks[hook] }

// readHooks lists the charm's hooks once: a deployed charm does not change. A charm with a
// dispatch script has every hook, and observes every relation.
func (a *unitAgent) readHooks() error {
	a.actionSpecs = nil // a new charm may define other actions
	if _, err := os.Lstat(filepath.Join(a.charmDir(), "dispatch")); err == nil {
		a.dispatch, a.hooks, a.observed = true, nil, nil
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(a.charmDir(), "hooks"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the charm's hooks: %w", err)
	}
	a.hooks = map[string]bool{}
	a.observed = []string{} // not nil: the agent never asks for every relation's members
	for _, e := range entries {
		a.hooks[e.Name()] = true
		if endpoint, _, ok := strings.Cut(e.Name(), "-relation-"); ok && !slices.Contains(a.observed, endpoint) {
			a.observed = append(a.observed, endpoint)
		}
	}
	return nil
}

func (a *unitAgent) setWorkload(w *pb.StatusInfo) {
	a.mu.Lock()
	a.workload = w
	a.mu.Unlock()
}

// idle ends a pass that ran hooks.
func (a *unitAgent) idle(ctx context.Context) error {
	if !a.executing && a.queued == nil {
		return nil
	}
	req := &pb.SetUnitStatusRequest{}
	if a.executing {
		req.AgentStatus = &pb.StatusInfo{Status: string(status.Idle)}
	}
	if err := a.setStatus(ctx, req, false); err != nil {
		return err
	}
	a.executing = false
	return nil
}

// fail records a failed hook: workload error with Juju's message, agent idle, everything
// suspended until resolved (L-U2).
func (a *unitAgent) fail(ctx context.Context, h *hookSpec, failure *hookError) error {
	a.log.write("ERROR", "juju.worker.uniter", failure.Error())
	a.mu.Lock()
	before := a.workload
	a.mu.Unlock()
	if err := a.record(func(st *uniterState) {
		st.Failed = h
		st.BeforeStatus, st.BeforeMessage = before.GetStatus(), before.GetMessage()
	}); err != nil {
		return err
	}
	w := &pb.StatusInfo{Status: string(status.Error), Message: h.failure()}
	if err := a.setStatus(ctx, &pb.SetUnitStatusRequest{WorkloadStatus: w, AgentStatus: &pb.StatusInfo{Status: string(status.Idle)}}, false); err != nil {
		return err
	}
	a.executing = false
	a.setWorkload(w)
	return errHookFailed
}

// resolve acts on `juju resolved`: retry re-runs the failed hook, no-retry records it as run.
// done reports whether the unit may go on.
func (a *unitAgent) resolve(ctx context.Context, snap *snapshot) (bool, error) {
	mode, auto := snap.unit.GetResolved(), false
	if mode == "" && a.retry.take() {
		mode, auto = "retry", true // automatically-retry-hooks
	}
	if mode == "" {
		return false, nil
	}
	h := a.st.Failed
	if auto {
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("automatically retrying %q hook", h.Name()))
	} else {
		a.retry.reset() // the user took over
		a.log.write("INFO", "juju.worker.uniter", fmt.Sprintf("resolved (%s): %q hook", mode, h.Name()))
	}
	before := &pb.StatusInfo{Status: a.st.BeforeStatus, Message: a.st.BeforeMessage}
	if before.Status == "" {
		before.Status = string(status.Unknown)
	}
	if err := a.setStatus(ctx, &pb.SetUnitStatusRequest{WorkloadStatus: before}, false); err != nil {
		return false, err
	}
	a.setWorkload(before)
	if err := a.record(func(st *uniterState) {
		st.Failed, st.BeforeStatus, st.BeforeMessage = nil, "", ""
		if mode != "retry" {
			st.commit(h)
		}
	}); err != nil {
		return false, err
	}
	if !auto {
		if err := a.c.ClearResolved(ctx, a.conf.Model, a.conf.ID); err != nil {
			return false, fmt.Errorf("unit %s: clearing resolved: %w", a.conf.ID, err)
		}
	}
	if mode != "retry" {
		return true, a.afterHook(ctx, h, false)
	}
	if err := a.runHook(ctx, h, snap); errors.Is(err, errHookFailed) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	a.retry.reset()
	return true, nil
}

// watchRelations keeps a watch on the scopes and settings of the relations the unit has
// joined and has hooks for, re-armed when that set changes; rearmed tells the caller to read
// again.
func (a *unitAgent) watchRelations(ctx context.Context) (bool, error) {
	a.mu.Lock()
	var ids []int64
	for _, id := range relationIDs(a.st) {
		if !passive(a.hooks, a.st.Relations[id].Endpoint) {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	if slices.Equal(ids, a.relIDs) {
		return false, nil
	}
	a.stopRelWatch()
	if len(ids) > 0 {
		targets := make([]*pb.WatchTarget, 0, 2*len(ids))
		for _, id := range ids {
			rid := strconv.FormatInt(id, 10)
			targets = append(targets, &pb.WatchTarget{Kind: state.KindScope, Id: rid}, &pb.WatchTarget{Kind: state.KindSettings, Id: rid})
		}
		wctx, cancel := context.WithCancel(ctx)
		changed, done, err := a.runner.watches.signals(wctx, a.c, a.conf.Model, targets...)
		if err != nil {
			cancel()
			if gone(err) {
				return false, errStop
			}
			return false, fmt.Errorf("unit %s: watching relations: %w", a.conf.ID, err)
		}
		a.relCancel, a.relChanged, a.relDone = cancel, changed, done
	}
	a.relIDs = ids
	return true, nil
}

func (a *unitAgent) stopRelWatch() {
	if a.relCancel != nil {
		a.relCancel()
	}
	a.relCancel, a.relChanged, a.relDone, a.relIDs = nil, nil, nil, nil
}

// followToDying: L-U6, a unit follows its dying (or gone) application.
func (a *unitAgent) followToDying(ctx context.Context, u *pb.AgentUnit, app *pb.AgentApplication) error {
	if u.Life != string(life.Alive) || (app != nil && app.Life == string(life.Alive)) {
		return nil
	}
	if err := a.setDying(ctx); err != nil {
		return err
	}
	u.Life = string(life.Dying)
	return nil
}

func (a *unitAgent) setDying(ctx context.Context) error {
	if _, err := a.c.SetUnitDying(ctx, a.conf.Model, a.conf.ID); err != nil {
		return fmt.Errorf("unit %s: setting dying: %w", a.conf.ID, err)
	}
	return nil
}

// principalRelationAlive: a subordinate lives while an alive container-scoped relation joins
// its application to its principal's.
func principalRelationAlive(u *pb.AgentUnit, rels []*pb.AgentRelation) bool {
	principalApp, _ := names.UnitApplication(u.Principal)
	for _, r := range rels {
		if r.Container && r.RemoteApplication == principalApp && r.Life == string(life.Alive) {
			return true
		}
	}
	return false
}

// tendSubordinates deploys, recalls and removes this principal's subordinates (L-S unit agent)
// and keeps a watch on their lives.
func (a *unitAgent) tendSubordinates(ctx context.Context, u *pb.AgentUnit) error {
	if !slices.Equal(a.subNames, u.Subordinates) {
		a.stopSubWatch()
		if len(u.Subordinates) > 0 {
			targets := make([]*pb.WatchTarget, 0, len(u.Subordinates))
			for _, sub := range u.Subordinates {
				targets = append(targets, &pb.WatchTarget{Kind: state.KindUnit, Id: sub, LifeOnly: true})
			}
			wctx, cancel := context.WithCancel(ctx)
			changed, done, err := a.runner.watches.signals(wctx, a.c, a.conf.Model, targets...)
			if err != nil {
				cancel()
				return fmt.Errorf("unit %s: watching subordinates: %w", a.conf.ID, err)
			}
			a.subCancel, a.subChanged, a.subDone = cancel, changed, done
		}
		a.subNames = slices.Clone(u.Subordinates)
	}
	subs := make([]*pb.AgentUnit, 0, len(u.Subordinates))
	for _, name := range u.Subordinates {
		sub, err := a.c.GetUnit(ctx, a.conf.Model, name)
		if errors.Is(err, apierr.NotFound) || errors.Is(err, apierr.PermissionDenied) {
			continue
		}
		if err != nil {
			return fmt.Errorf("unit %s: reading subordinate %s: %w", a.conf.ID, name, err)
		}
		if u.Life != string(life.Alive) && sub.Life == string(life.Alive) {
			continue // L-U5 set it dying with us; its own agent takes it from here
		}
		subs = append(subs, sub)
	}
	return a.subs.reconcile(ctx, subs)
}

func (a *unitAgent) stopSubWatch() {
	if a.subCancel != nil {
		a.subCancel()
	}
	a.subCancel, a.subChanged, a.subDone, a.subNames = nil, nil, nil, nil
}

// gone: the entity was removed, or its credential with it.
func gone(err error) bool {
	return errors.Is(err, apierr.NotFound) || errors.Is(err, apierr.PermissionDenied) || errors.Is(err, apierr.Unauthenticated)
}
