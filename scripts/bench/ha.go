package main

// The HA figures (issue 15). Takeover: a controller of three members (juju enable-ha), the
// member that runs the singular workers killed with SIGKILL, a machine added at once: how long
// until it has an instance, against the same add-machine with every member up, just before.
// Throughput: the lifecycle transactions of the txn figure on a cluster of three embedded etcd
// members (fsync on, as the txn figure) against one member, in the same run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/jujuclone/juju/controller/state"
	"github.com/jujuclone/juju/controller/store"
)

const (
	haMembers = 3
	haRounds  = 7
	haModel   = "ha"
	// haLimit bounds each wait of the takeover figure: members healthy, a machine's instance.
	haLimit = 2 * time.Minute
	// haTxnRuns: each run starts one member and a cluster of three afresh.
	haTxnRuns = 3
	// haTxnTimeout bounds one run: setting up 1,000 units and taking them through their
	// lifecycle three times, on a shared 2-core machine.
	haTxnTimeout = 10 * time.Minute
)

// haMember is a controller member as `juju show-controller --format json` lists it.
type haMember struct {
	ID        string `json:"-"`
	StoreRole string `json:"store-role"`
	Health    string `json:"health"`
	Workers   bool   `json:"workers"`
	PID       int    `json:"pid"`
}

// takeoverRound is one kill: which member died, and the times from the kill.
type takeoverRound struct {
	owner, next string  // the member killed, the member that owned the workers afterwards
	leader      bool    // the member killed was the store's leader too
	load        float64 // the 1-minute load average when the round began
	// baseline is add-machine until its instance with every member up, just before the kill;
	// added is when add-machine returned, from the kill, and provisioned when its machine
	// had an instance.
	baseline, added, provisioned time.Duration
}

// measureHA adds the takeover and the throughput rows; the takeover bootstraps its own
// controller.
func measureHA() error {
	takeover, err := measureTakeover()
	if err != nil {
		return err
	}
	throughput, err := measureHAThroughput()
	if err != nil {
		return err
	}
	rows = append(rows, takeover...)
	rows = append(rows, throughput...)
	return nil
}

func measureTakeover() ([]row, error) {
	if _, err := juju("bootstrap"); err != nil {
		return nil, err
	}
	defer killHAController()
	if _, err := juju("add-model", haModel); err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := juju("enable-ha", "-n", fmt.Sprint(haMembers)); err != nil {
		return nil, err
	}
	if _, err := waitHAMembers(0); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "ha: %d members healthy %s after enable-ha\n", haMembers, fmtDur(time.Since(start)))
	// One machine first, untimed, so that no timed one is the model's first.
	if _, _, err := addMachineUntilInstance(time.Now()); err != nil {
		return nil, err
	}
	var rounds []takeoverRound
	for i := range haRounds {
		r, err := takeoverOnce()
		if err != nil {
			return nil, fmt.Errorf("takeover round %d: %w", i+1, err)
		}
		fmt.Fprintf(os.Stderr, "ha round %d: add-machine until its instance, all up, %s; member %s (store leader: %v) killed: add-machine returned after %s, instance after %s; member %s took over\n",
			i+1, fmtDur(r.baseline), r.owner, r.leader, fmtDur(r.added), fmtDur(r.provisioned), r.next)
		rounds = append(rounds, r)
	}
	reportMemberErrors()

	pick := func(f func(takeoverRound) time.Duration) time.Duration {
		var ds []time.Duration
		for _, r := range rounds {
			ds = append(ds, f(r))
		}
		return mid(ds)
	}
	base := pick(func(r takeoverRound) time.Duration { return r.baseline })
	added := pick(func(r takeoverRound) time.Duration { return r.added })
	took := pick(func(r takeoverRound) time.Duration { return r.provisioned })
	var parts []string
	lo, hi := -1.0, 0.0
	for i, r := range rounds {
		if lo < 0 || r.load < lo {
			lo = r.load
		}
		hi = max(hi, r.load)
		role := ""
		if r.leader {
			role = ", also the store's leader"
		}
		parts = append(parts, fmt.Sprintf("%d: member %s killed%s, add-machine returned after %s, instance after %s, member %s took over (all up just before: %s)",
			i+1, r.owner, role, fmtDur(r.added), fmtDur(r.provisioned), r.next, fmtDur(r.baseline)))
	}
	notes = append(notes, fmt.Sprintf("HA takeover: a fresh controller made %d members by `juju enable-ha` (jujud processes on this host, "+
		"each with an etcd member of one cluster, fsync on), one empty model. Each round waits until `juju show-controller` reports every member "+
		"healthy and one of them running the singular workers (the provisioner among them), adds a machine and polls `juju show-machine` "+
		"until it has an instance (the baseline), then sends SIGKILL to the jujud of the worker-owning member, runs `juju add-machine` at once "+
		"and polls again: times count from the kill. The ratio is against the baseline's median. The workers' election lease (TTL %s) outlives its "+
		"dead owner by up to its TTL after the owner's last renewal (etcd revokes expired leases every 0.5 s), then another member wins the "+
		"election and starts the workers. The worker owner hands the store's leadership to another member whenever it finds itself leading "+
		"(checked every 5 s), so that one kill costs one election: were the owner also the store's leader, the store would first elect a "+
		"leader (0.75–1.5 s, during which writes wait) whose start renews every lease for its TTL plus an election timeout, some 2 s more. "+
		"`juju enable-ha` then restarts the member killed (not timed). The machine's 1-minute load average at the start of the rounds was "+
		"%.1f–%.1f on %d cores. Rounds: %s.",
		haMembers, "3 s", lo, hi, runtime.NumCPU(), strings.Join(parts, "; ")))
	out := []row{
		{what: fmt.Sprintf("baseline: juju add-machine until the machine has an instance, %d members up (%d rounds)", haMembers, haRounds), median: base},
		{what: fmt.Sprintf("HA takeover: kill -9 of the worker-owning member (of %d) until the next add-machine's machine has an instance (%d rounds)", haMembers, haRounds),
			median: took, ratio: ratio(took, base)},
	}
	return append(out, row{what: "HA takeover: in it, juju add-machine returned (from the kill)", median: added}), nil
}

// takeoverOnce runs one round: the baseline, the kill and the machine, then enable-ha to
// restart the member killed.
func takeoverOnce() (takeoverRound, error) {
	r := takeoverRound{load: loadAvg()}
	members, err := waitHAMembers(0)
	if err != nil {
		return r, err
	}
	if _, r.baseline, err = addMachineUntilInstance(time.Now()); err != nil {
		return r, err
	}
	var owner haMember
	for _, m := range members {
		if m.Workers {
			owner = m
		}
	}
	r.owner, r.leader = owner.ID, owner.StoreRole == "leader"
	pid := owner.PID
	start := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return r, fmt.Errorf("killing member %s (pid %d): %w", owner.ID, pid, err)
	}
	if r.added, r.provisioned, err = addMachineUntilInstance(start); err != nil {
		return r, fmt.Errorf("after killing member %s: %w", owner.ID, err)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); {
		if time.Now().After(deadline) {
			return r, fmt.Errorf("member %s (pid %d) still running 10 s after SIGKILL", owner.ID, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ms, err := showMembers(); err == nil {
		for _, m := range ms {
			if m.Workers {
				r.next = m.ID
			}
		}
	}
	out, err := juju("enable-ha", "-n", fmt.Sprint(haMembers))
	if err != nil {
		return r, err
	}
	if !restarted(string(out), owner.ID) {
		return r, fmt.Errorf("enable-ha after killing member %s said %q", owner.ID, out)
	}
	_, err = waitHAMembers(pid)
	return r, err
}

// restarted reports whether enable-ha's output says it restarted member id.
func restarted(out, id string) bool {
	for _, line := range strings.Split(out, "\n") {
		if ids, ok := strings.CutPrefix(line, "restarting members: "); ok && slices.Contains(strings.Split(ids, ", "), id) {
			return true
		}
	}
	return false
}

// showMembers is the controller's members as show-controller lists them, by id.
func showMembers() (map[string]haMember, error) {
	out, err := juju("show-controller", "--format", "json")
	if err != nil {
		return nil, err
	}
	var c map[string]struct {
		Members map[string]haMember `json:"controller-machines"`
	}
	if err := json.Unmarshal(out, &c); err != nil {
		return nil, fmt.Errorf("show-controller: %v", err)
	}
	ms := c["local"].Members
	for id, m := range ms {
		m.ID = id
		ms[id] = m
	}
	return ms, nil
}

// waitHAMembers waits until show-controller reports haMembers healthy members, one of them
// running the workers, each with the pid its jujud.pid names, alive and not dead (the pid of
// a member killed, which show-controller may still report just after the restart).
func waitHAMembers(dead int) (map[string]haMember, error) {
	deadline := time.Now().Add(haLimit)
	var last string
	for {
		ms, err := showMembers()
		if err == nil {
			healthy, owners := 0, 0
			for id, m := range ms {
				if m.Health == "healthy" && m.PID != dead && m.PID == readPID(filepath.Join(memberDir(id), "jujud.pid")) && !gone(m.PID) {
					healthy++
				}
				if m.Workers {
					owners++
				}
			}
			if len(ms) == haMembers && healthy == haMembers && owners == 1 {
				return ms, nil
			}
			last = fmt.Sprintf("%+v", ms)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d members not healthy after %v: %s", haMembers, haLimit, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var createdMachine = regexp.MustCompile(`created machine (\S+)`)

// addMachineUntilInstance adds a machine to the HA model and polls show-machine until it has
// an instance; it returns when add-machine returned and when the instance was there, from
// start. Failed polls are retried until haLimit (the members may be electing a leader).
func addMachineUntilInstance(start time.Time) (added, provisioned time.Duration, err error) {
	out, errb, err := jujuOutErr("add-machine", "-m", haModel)
	added = time.Since(start)
	if err != nil {
		return added, 0, err
	}
	m := createdMachine.FindSubmatch(append(out, errb...))
	if m == nil {
		return added, 0, fmt.Errorf("add-machine said %q %q", out, errb)
	}
	id := string(m[1])
	var last error
	for time.Since(start) < haLimit {
		out, err := juju("show-machine", id, "-m", haModel, "--format", "json")
		if err == nil {
			var s struct {
				Machines map[string]struct {
					InstanceID string `json:"instance-id"`
				} `json:"machines"`
			}
			if err = json.Unmarshal(out, &s); err == nil {
				if inst := s.Machines[id].InstanceID; inst != "" && inst != "pending" {
					return added, time.Since(start), nil
				}
			}
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return added, 0, fmt.Errorf("machine %s has no instance %v after add-machine (last error: %v)", id, haLimit, last)
}

// memberDir is a member's data directory: the controller's for member 0, as enable-ha lays
// them out.
func memberDir(id string) string {
	if id == "0" {
		return ctrlDir()
	}
	return filepath.Join(ctrlDir(), "members", id)
}

// memberPIDs are the pids every member's jujud.pid names.
func memberPIDs() []int {
	pids := []int{readPID(filepath.Join(ctrlDir(), "jujud.pid"))}
	dirs, _ := filepath.Glob(filepath.Join(ctrlDir(), "members", "*"))
	for _, dir := range dirs {
		pids = append(pids, readPID(filepath.Join(dir, "jujud.pid")))
	}
	return pids
}

// killHAController is kill-controller for a controller of several members: it waits until
// every member's jujud has exited too, and kills one that outlived kill-controller (a jujud
// still, not a process that took a dead member's pid).
func killHAController() {
	pids := memberPIDs()
	killControllerAndHost()
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		for deadline := time.Now().Add(30 * time.Second); !gone(pid) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		if gone(pid) {
			continue
		}
		if argv, err := procStrings(pid, "cmdline"); err == nil && filepath.Base(argv[0]) == "jujud" {
			fmt.Fprintf(os.Stderr, "WARNING member jujud (pid %d) outlived kill-controller: killing it\n", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

var logLevel = regexp.MustCompile(`level=(ERROR|WARN) msg=("(?:[^"\\]|\\.)*"|\S+)`)

// reportMemberErrors prints, to stderr, the ERROR and WARN records of every member's jujud.log
// by message: the figure counts on the members doing nothing wrong meanwhile.
func reportMemberErrors() {
	logs, _ := filepath.Glob(filepath.Join(ctrlDir(), "members", "*", "jujud.log"))
	logs = append([]string{filepath.Join(ctrlDir(), "jujud.log")}, logs...)
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		count := map[string]int{}
		for _, m := range logLevel.FindAllStringSubmatch(string(b), -1) {
			count[m[1]+" "+m[2]]++
		}
		if len(count) == 0 {
			continue
		}
		var msgs []string
		for msg, n := range count {
			msgs = append(msgs, fmt.Sprintf("%q × %d", msg, n))
		}
		sort.Strings(msgs)
		rel, _ := filepath.Rel(ctrlDir(), path)
		fmt.Fprintf(os.Stderr, "ha: %s: %s\n", rel, strings.Join(msgs, ", "))
	}
}

// haTxnRun is one throughput run in lifecycle txn/s: one member, and a cluster of three
// through its leader's client and through a follower's; load is the 1-minute load average
// when it began.
type haTxnRun struct{ single, leader, follower, load float64 }

// haChunk is how many units each loop takes through their lifecycle before the next loop's
// turn: the three loops alternate in chunks, so that each sees the same share of whatever
// else the machine runs meanwhile.
const haChunk = 49

func measureHAThroughput() ([]row, error) {
	wordpress, err := zipCharmDir(filepath.Join(root, "testdata", "charms", "wordpress"))
	if err != nil {
		return nil, err
	}
	mysql, err := zipCharmDir(filepath.Join(root, "testdata", "charms", "mysql"))
	if err != nil {
		return nil, err
	}
	var singles, leaders, followers []float64
	var parts []string
	lo, hi := -1.0, 0.0
	for i := range haTxnRuns {
		r, err := haTxnOnce(i, wordpress, mysql)
		if err != nil {
			return nil, fmt.Errorf("ha throughput run %d: %w", i+1, err)
		}
		p := fmt.Sprintf("one member %s, the cluster through its leader %s, through a follower %s", thousands(r.single), thousands(r.leader), thousands(r.follower))
		fmt.Fprintf(os.Stderr, "ha txn run %d (load %.1f): %s txn/s\n", i+1, r.load, p)
		parts = append(parts, fmt.Sprintf("%d: %s", i+1, p))
		singles, leaders, followers = append(singles, r.single), append(leaders, r.leader), append(followers, r.follower)
		if lo < 0 || r.load < lo {
			lo = r.load
		}
		hi = max(hi, r.load)
	}
	single, leader, follower := midF(singles), midF(leaders), midF(followers)
	n := lifecycleUnits - lifecycleWarm
	notes = append(notes, fmt.Sprintf("HA throughput: the lifecycle transactions of the txn figure (%d units × EnterScope, LeaveScope, DestroyUnit, EnsureUnitDead, RemoveUnit, "+
		"after the same setup, one committed transaction each, checked by the store revision) through controller/state, on one embedded etcd member (store.StartEmbedded) and on a cluster of %d "+
		"(StartEmbedded, then two store.JoinEmbedded, one CA), every member in the bench's process, on this host's one disk, fsync on. A member's client talks to that "+
		"member only, as each controller member's does: through the leader a transaction commits once a majority of the members has written it to disk; "+
		"through a follower it is forwarded to the leader first, and each linearizable read asks the leader too. Each run starts a fresh member "+
		"and a fresh cluster, sets up a model on the member and two on the cluster (one for the leader's client, one for a follower's), then takes "+
		"the three models' units through their lifecycle in turns of %d units (whose turn comes first rotates), so that all three see the same "+
		"load; the ratios are of medians of the same runs. The machine's 1-minute load average at the start of the runs was %.1f–%.1f on %d cores. "+
		"Runs, txn/s: %s.", n, haMembers, haChunk, lo, hi, runtime.NumCPU(), strings.Join(parts, "; ")))
	what := fmt.Sprintf("(%d runs × %d units × 5, fsync)", haTxnRuns, n)
	return []row{
		{what: "baseline: lifecycle transactions through controller/state, one etcd member " + what, value: fmt.Sprintf("%s txn/s", thousands(single))},
		{what: fmt.Sprintf("HA: the same on a %d-member etcd cluster, the client on the leader (same runs)", haMembers), value: fmt.Sprintf("%s txn/s", thousands(leader)),
			ratio: fmt.Sprintf("%.2f× one member", leader/single)},
		{what: fmt.Sprintf("HA: the same on a %d-member etcd cluster, the client on a follower (same runs)", haMembers), value: fmt.Sprintf("%s txn/s", thousands(follower)),
			ratio: fmt.Sprintf("%.2f× one member", follower/single)},
	}, nil
}

// haTxnOnce measures a fresh member and a fresh cluster, their loops in turns.
func haTxnOnce(run int, wordpress, mysql []byte) (haTxnRun, error) {
	r := haTxnRun{load: loadAvg()}
	ctx, cancel := context.WithTimeout(context.Background(), haTxnTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "juju-bench-ha-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	single, err := store.StartEmbedded(ctx, filepath.Join(dir, "single"), store.EmbeddedOptions{}) // fsync on
	if err != nil {
		return r, err
	}
	defer single.Close()
	stores, err := startCluster(ctx, filepath.Join(dir, "cluster"))
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	if err != nil {
		return r, err
	}
	leader, err := clusterMember(ctx, stores, true)
	if err != nil {
		return r, err
	}
	follower, err := clusterMember(ctx, stores, false)
	if err != nil {
		return r, err
	}
	var loops []*lifecycleLoop
	for _, c := range []struct {
		name string
		cli  *clientv3.Client
	}{{"single", single.Client}, {"leader", leader.Client}, {"follower", follower.Client}} {
		l, err := newLifecycleLoop(ctx, c.cli, fmt.Sprintf("%s%d", c.name, run), wordpress, mysql)
		if err != nil {
			return r, fmt.Errorf("%s: %w", c.name, err)
		}
		loops = append(loops, l)
	}
	for turn := 0; loops[0].left() > 0; turn++ {
		for i := range loops {
			if err := loops[(turn+i)%len(loops)].run(ctx, haChunk); err != nil {
				return r, err
			}
		}
	}
	// The leader must have led throughout: a loop through a member that became a follower
	// would measure something else.
	if now, err := clusterMember(ctx, stores, true); err != nil || now != leader {
		return r, fmt.Errorf("the cluster's leader changed during the run (%v)", err)
	}
	r.single, r.leader, r.follower = loops[0].rate(), loops[1].rate(), loops[2].rate()
	return r, nil
}

// startCluster starts haMembers embedded members in dir, one CA, fsync on: the first alone,
// the others joining it (at once: etcd admits them one at a time). It returns every member
// started, also on error, for the caller to close.
func startCluster(ctx context.Context, dir string) ([]*store.Store, error) {
	caDir := filepath.Join(dir, "ca")
	if err := os.MkdirAll(caDir, 0o700); err != nil {
		return nil, err
	}
	first, err := store.StartEmbedded(ctx, filepath.Join(dir, store.DefaultMemberName), store.EmbeddedOptions{CADir: caDir})
	if err != nil {
		return nil, err
	}
	stores := []*store.Store{first}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for i := 1; i < haMembers; i++ {
		name := fmt.Sprintf("member%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := store.JoinEmbedded(ctx, filepath.Join(dir, name), store.EmbeddedOptions{CADir: caDir, Name: name},
				store.JoinOptions{Endpoints: []string{first.Endpoint()}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("joining %s: %w", name, err))
				return
			}
			stores = append(stores, s)
		}()
	}
	wg.Wait()
	return stores, errors.Join(errs...)
}

// clusterMember is the member that leads the cluster now, or one that follows.
func clusterMember(ctx context.Context, stores []*store.Store, leader bool) (*store.Store, error) {
	members, err := stores[0].Members(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if !m.Reachable || m.Role == store.RoleLearner || (m.Role == store.RoleLeader) != leader {
			continue
		}
		for _, s := range stores {
			if s.MemberID() == m.ID {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("no member of role leader=%v among %+v", leader, members)
}

// lifecycleLoop is the txn figure's lifecycle loop (without its per-call timing) on one
// model, run a chunk of units at a time.
type lifecycleLoop struct {
	st        *state.State
	uuid      string
	relID     int64
	units     []string // still to go, newest first
	spent     time.Duration
	committed int
}

// newLifecycleLoop sets up a model through cli as the txn figure does and takes its first
// lifecycleWarm units through their lifecycle, untimed.
func newLifecycleLoop(ctx context.Context, cli *clientv3.Client, model string, wordpress, mysql []byte) (*lifecycleLoop, error) {
	st := state.New(cli)
	m, err := st.AddModel(ctx, model, "admin", "", "localhost", "localhost")
	if err != nil {
		return nil, err
	}
	relID, units, err := lifecycleSetup(ctx, st, m.Uuid, wordpress, mysql)
	if err != nil {
		return nil, err
	}
	// Newest first, as the txn figure (the leader's removal also looks for the next leader).
	slices.Reverse(units)
	l := &lifecycleLoop{st: st, uuid: m.Uuid, relID: relID, units: units}
	for range lifecycleWarm {
		if err := l.one(ctx); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *lifecycleLoop) left() int { return len(l.units) }

// rate is the committed transactions per second of the timed chunks.
func (l *lifecycleLoop) rate() float64 { return float64(l.committed) / l.spent.Seconds() }

// run takes the next k units through their lifecycle, timed, and checks by the store's
// revision that each call committed one transaction.
func (l *lifecycleLoop) run(ctx context.Context, k int) error {
	k = min(k, len(l.units))
	if k == 0 {
		return nil
	}
	rev0, err := l.st.Revision(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	for range k {
		if err := l.one(ctx); err != nil {
			return err
		}
	}
	l.spent += time.Since(start)
	rev1, err := l.st.Revision(ctx)
	if err != nil {
		return err
	}
	if n := k * len(lifecycleOps); int(rev1-rev0) != n {
		return fmt.Errorf("lifecycle loop: %d calls committed %d transactions", n, rev1-rev0)
	}
	l.committed += k * len(lifecycleOps)
	return nil
}

// one takes the next unit through EnterScope, LeaveScope, DestroyUnit, EnsureUnitDead and
// RemoveUnit.
func (l *lifecycleLoop) one(ctx context.Context) error {
	name := l.units[0]
	l.units = l.units[1:]
	for _, step := range lifecycleSteps(ctx, l.st, l.uuid, l.relID, name) {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
