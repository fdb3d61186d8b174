package main

// The agent host figures (issue 13): how long after a controller restart every agent of a
// 1,000-unit model works again, and what the controller and its agent host hold in memory,
// against the former layout (agents as goroutines of jujud, `jujud --agents-in-process`)
// and against one agent process per machine as in Juju (one idle host of a single machine,
// multiplied out).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	restartRuns  = 3
	restartModel = "restart"
	// restartLimit bounds each wait: for the API after a restart, and for an exec.
	restartLimit = 5 * time.Minute
	// inProcessEnv makes `juju bootstrap` start jujud with its agents inside (jujud reads
	// its flags from JUJUD_* too, and bootstrap's jujud inherits the CLI's environment).
	inProcessEnv = "JUJUD_AGENTS_IN_PROCESS=true"
)

// restartUnits is -n: the units of the restart and memory figures (1,000 in BENCHMARKS.md;
// smaller while developing).
var restartUnits = 1000

// restartRun is one restart: the same exec with the controller up just before, kill to exit,
// then from the new jujud's start until the API answers and until exec has completed on
// every unit; load is the 1-minute load average when it began.
type restartRun struct {
	up, exit, api, exec time.Duration
	load                float64
	// taken is by when the last unit had started its task, from jujud's start, and upTaken
	// the same in the exec with the controller up, from its start: the controller stamps
	// whole seconds, so these are the ends of those seconds. retries counts execs that could
	// not reach the controller.
	taken, upTaken time.Duration
	retries        int
}

// layoutFigures is what one controller layout measured.
type layoutFigures struct {
	deploy     time.Duration
	controller mem // jujud's
	host       mem // the agent host's (zero with agents in process)
	runs       map[syscall.Signal][]restartRun
}

var restartSignals = []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}

func measureRestart() error {
	n := restartUnits
	apart, err := restartLayout(n, nil)
	if err != nil {
		return err
	}
	inProc, err := restartLayout(n, []string{inProcessEnv})
	if err != nil {
		return err
	}
	floor, err := agentHostFloor()
	if err != nil {
		return err
	}

	units := thousands(float64(n))
	model := fmt.Sprintf("%s units, %s machines", units, units)
	for _, l := range []struct {
		prefix, exits string
		f             layoutFigures
	}{
		{"", "stops its API and workers; the agents go on", apart},
		{"before (agents in jujud): ", "stops its agents too", inProc},
	} {
		rows = append(rows, restartRows(l.prefix, l.exits, units, l.f)...)
	}
	aLo, aHi := apart.loads()
	iLo, iHi := inProc.loads()
	total := mem{apart.controller.rss + apart.host.rss, apart.controller.anon + apart.host.anon}
	perMachine := mem{floor.rss * float64(n), floor.anon * float64(n)}
	rows = append(rows,
		row{what: fmt.Sprintf("memory: controller (jujud), %s, agents apart", model), value: apart.controller.String()},
		row{what: fmt.Sprintf("memory: agent host (jujud agents), its %s machine and unit agents", thousands(float64(2*n))), value: apart.host.String()},
		row{what: "memory: controller + agent host", value: total.String(), ratio: fmt.Sprintf("%.2f× in-process (anon)", total.anon/inProc.controller.anon)},
		row{what: fmt.Sprintf("before: memory of jujud with the agents in process, %s", model), value: inProc.controller.String()},
		row{what: "memory: one idle agent host running one machine and its unit (the floor of one agent process)", value: floor.String()},
		row{what: fmt.Sprintf("that floor × %s: one agent process per machine, as in Juju (lower bound)", units), value: perMachine.String(),
			ratio: fmt.Sprintf("%.0f× the one host (anon)", perMachine.anon/apart.host.anon)})

	notes = append(notes, fmt.Sprintf("Controller restart: a fresh controller, one model of copies of ./testdata/charms/wordpress without hooks (-n %d, one machine each). "+
		"Each run reads jujud's command line and environment from /proc, sends it SIGTERM or SIGKILL, waits until it has exited, and starts it again "+
		"as bootstrap does (its own session, output appended to its log); then it polls `juju status` until it succeeds and at once runs "+
		"`juju exec --application wordpress -- true`, which completes when every unit agent has taken its task and run it: the agents have "+
		"reconnected (they wait for the controller with a backoff of at most %s) and work. Times count from the new jujud's start; the ratio "+
		"is against the same exec with the controller up, run just before each restart of that row. Exec's own cost at this size is large "+
		"(the baseline rows), so the row nearest to \"every agent is back\" is by when the last unit had started its task, from the start times "+
		"the controller records (whole seconds, so the end of the last one's second). The \"before\" rows are the same runs with jujud started with --agents-in-process "+
		"(the former layout, with this change's other code): there the new jujud starts every agent again itself. "+
		"The machine's 1-minute load average at the start of the restarts was %.1f–%.1f (agents apart) and %.1f–%.1f (agents in jujud), on %d cores; "+
		"it counts the bench's own processes (each exec starts one per unit) and whatever else ran on the machine.",
		n, "5 s", aLo, aHi, iLo, iHi, runtime.NumCPU()))
	notes = append(notes, fmt.Sprintf("Memory: RSS (VmRSS) and its anonymous part (RssAnon: heap, stacks, the memory a process has to itself; the rest is "+
		"mostly the jujud binary's pages, which processes of the same binary share), each the median of 5 readings 1 s apart once all units are idle, "+
		"before any exec, in the controller of the restart rows; \"before\" is the same in the controller started with --agents-in-process. "+
		"The sum of two RSS counts the shared pages twice; the ratios compare anonymous memory. The per-process floor is `jujud agents` "+
		"of a fresh controller whose one model has one unit on one machine, idle. Multiplying it by %s leaves out what as many processes "+
		"would cost the controller too (a TLS connection and its buffers each, as many reconnections after every restart), so it is a lower bound.", units))
	notes = append(notes, fmt.Sprintf("Process layout: one `jujud agents` process runs every machine and unit agent of the controller, where Juju runs "+
		"one agent process per machine (jujud, the machine's unit agents inside it). On a cloud each machine is a computer of its own and needs "+
		"its own process; on the local provider every machine is a directory on the controller's host, under the same kernel and run by the same "+
		"user as the controller (as root it acts as a machine's uid only for that machine's files, and runs hooks as that uid), so a process "+
		"per machine would buy little isolation and would pay per machine what the one host pays once: its memory (an idle host of one machine "+
		"holds %s MB anonymous; × %s is %s MB, against %s MB for the one host of them all), a Go runtime with its own heap headroom and "+
		"garbage collector, and a TLS connection to the controller (the host's agents share one HTTP/2 connection, so a controller restart "+
		"costs one reconnection, not %s at once). What the one host gives up: its crash stops every machine's agents at once (the controller "+
		"then starts a new host and hands it every agent again), one agent's leak or stuck lock is every agent's, and processes per machine "+
		"could have run as each machine's uid instead of root. Hooks are processes of their own in both layouts, so a charm's crash stays its own.",
		thousands(floor.anon), units, thousands(perMachine.anon), thousands(apart.host.anon), units))
	notes = append(notes, runsNote("agents apart", apart), runsNote("agents in jujud", inProc))
	return nil
}

// restartRows are one layout's rows: deploy, exec with the controller up, and per signal the
// restart's milestones.
func restartRows(prefix, exits, units string, f layoutFigures) []row {
	runs := fmt.Sprintf("%d runs", restartRuns)
	all := fmt.Sprintf("%d runs", restartRuns*len(restartSignals))
	var ups, upTakens []time.Duration
	for _, sig := range restartSignals {
		ups = append(ups, pickRestart(f.runs[sig], func(r restartRun) time.Duration { return r.up })...)
		upTakens = append(upTakens, pickRestart(f.runs[sig], func(r restartRun) time.Duration { return r.upTaken })...)
	}
	upTaken := mid(upTakens)
	out := []row{
		{what: fmt.Sprintf("%sbaseline: juju exec --application on %s units (`true`), controller up, just before each restart (%s)", prefix, units, all), median: mid(ups)},
		{what: fmt.Sprintf("%sbaseline: in it, the last unit has started its task, from exec's start (whole-second stamps)", prefix), value: fmt.Sprintf("≤ %.0f s", math.Ceil(upTaken.Seconds()))},
	}
	for _, sig := range restartSignals {
		rs := f.runs[sig]
		name := sigName(sig)
		pick := func(g func(r restartRun) time.Duration) time.Duration { return mid(pickRestart(rs, g)) }
		if sig == syscall.SIGTERM {
			out = append(out, row{what: fmt.Sprintf("%scontroller restart, SIGTERM: jujud exits (%s)", prefix, exits),
				median: pick(func(r restartRun) time.Duration { return r.exit })})
		}
		ex := pick(func(r restartRun) time.Duration { return r.exec })
		taken := pick(func(r restartRun) time.Duration { return r.taken })
		out = append(out,
			row{what: fmt.Sprintf("%scontroller restart, %s: API answers again (first successful juju status), from jujud's start (%s)", prefix, name, runs),
				median: pick(func(r restartRun) time.Duration { return r.api })},
			row{what: fmt.Sprintf("%scontroller restart, %s: the last unit has started its exec task (every agent back), from jujud's start (whole-second stamps)", prefix, name),
				value: fmt.Sprintf("≤ %.0f s", math.Ceil(taken.Seconds()))},
			row{what: fmt.Sprintf("%scontroller restart, %s: juju exec issued then completes on all %s units, from jujud's start (%s)", prefix, name, units, runs),
				median: ex, ratio: ratio(ex, mid(pickRestart(rs, func(r restartRun) time.Duration { return r.up })))})
	}
	return out
}

// runsNote lists a layout's restart runs one by one.
func runsNote(name string, f layoutFigures) string {
	var parts []string
	for _, sig := range restartSignals {
		for i, r := range f.runs[sig] {
			p := fmt.Sprintf("%s %d: exec with the controller up %s (every task started by %.0f s); after the restart API %s, every task started by %.0f s, exec done %s",
				sigName(sig), i+1, fmtDur(r.up), math.Ceil(r.upTaken.Seconds()), fmtDur(r.api), math.Ceil(r.taken.Seconds()), fmtDur(r.exec))
			if r.retries > 0 {
				p += fmt.Sprintf(" (%s could not connect to the controller first)", plural(r.retries, "exec"))
			}
			parts = append(parts, p)
		}
	}
	return fmt.Sprintf("Restart runs, %s (the controller stamps task times in whole seconds): %s.", name, strings.Join(parts, "; "))
}

// restartLayout bootstraps a controller (env added to bootstrap's, and so to jujud's),
// deploys n hookless units and measures memory, exec with the controller up and the restarts.
func restartLayout(n int, env []string) (layoutFigures, error) {
	f := layoutFigures{runs: map[syscall.Signal][]restartRun{}}
	layout := "agents apart"
	if len(env) > 0 {
		layout = "agents in jujud"
	}
	if err := jujuEnv(env, "bootstrap"); err != nil {
		return f, err
	}
	defer killControllerAndHost()
	if err := jujuEnv(nil, "add-model", restartModel); err != nil {
		return f, err
	}
	start := time.Now()
	if err := jujuEnv(nil, "deploy", mustHookless("wordpress"), "-n", strconv.Itoa(n), "-m", restartModel); err != nil {
		return f, err
	}
	if err := waitIdle(restartModel, n, 600*time.Second); err != nil {
		return f, err
	}
	f.deploy = time.Since(start)

	hostPID := readPID(filepath.Join(ctrlDir(), "agents.pid"))
	if len(env) == 0 && hostPID == 0 {
		return f, errors.New("no agent host running (no agents.pid) in the agents-apart layout")
	}
	if len(env) > 0 && hostPID != 0 {
		return f, errors.New("an agent host runs although jujud was started with --agents-in-process")
	}
	var err error
	if f.controller, err = sampleMem(readPID(filepath.Join(ctrlDir(), "jujud.pid"))); err != nil {
		return f, err
	}
	if hostPID != 0 {
		if f.host, err = sampleMem(hostPID); err != nil {
			return f, err
		}
	}
	fmt.Fprintf(os.Stderr, "restart, %s: deploy %s, jujud %s, agent host %s\n", layout, fmtDur(f.deploy), f.controller, f.host)

	// One exec first, untimed, so that no timed one is the model's first.
	if _, _, err := execUnits(n); err != nil {
		return f, err
	}
	for _, sig := range restartSignals {
		for i := range restartRuns {
			load := loadAvg()
			// The baseline just before each restart: exec's cost grows with the tasks the
			// model has run, and the machine's load changes.
			upStart := time.Now()
			up, upLast, err := execUnits(n)
			if err != nil {
				return f, err
			}
			r, err := restartOnce(sig, n)
			if err != nil {
				return f, fmt.Errorf("%s, %s run %d: %w", layout, sigName(sig), i+1, err)
			}
			r.up, r.upTaken, r.load = up, upLast.Add(time.Second).Sub(upStart), load
			fmt.Fprintf(os.Stderr, "restart, %s, %s run %d (load %.1f): exec with the controller up %s (every task started by %s); exited after %s; API after %s, every task started by %s, exec done after %s (%d execs could not connect)\n",
				layout, sigName(sig), i+1, load, fmtDur(r.up), fmtDur(r.upTaken), fmtDur(r.exit), fmtDur(r.api), fmtDur(r.taken), fmtDur(r.exec), r.retries)
			f.runs[sig] = append(f.runs[sig], r)
		}
	}
	return f, nil
}

// loads is the range of the 1-minute load average at the start of the restarts.
func (f layoutFigures) loads() (lo, hi float64) {
	lo = -1
	for _, rs := range f.runs {
		for _, r := range rs {
			if lo < 0 || r.load < lo {
				lo = r.load
			}
			hi = max(hi, r.load)
		}
	}
	return lo, hi
}

// loadAvg is the machine's 1-minute load average (the bench shares the machine).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return v
}

// restartOnce kills jujud with sig and starts it again with its own command line and
// environment, as bootstrap started it.
func restartOnce(sig syscall.Signal, n int) (restartRun, error) {
	var r restartRun
	pid := readPID(filepath.Join(ctrlDir(), "jujud.pid"))
	if pid == 0 {
		return r, errors.New("no jujud.pid")
	}
	argv, err := procStrings(pid, "cmdline")
	if err != nil {
		return r, err
	}
	env, err := procStrings(pid, "environ")
	if err != nil {
		return r, err
	}
	start := time.Now()
	if err := syscall.Kill(pid, sig); err != nil {
		return r, fmt.Errorf("signalling jujud (pid %d): %w", pid, err)
	}
	for !gone(pid) {
		if time.Since(start) > time.Minute {
			return r, fmt.Errorf("jujud (pid %d) still running a minute after %s", pid, sigName(sig))
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.exit = time.Since(start)

	logf, err := os.OpenFile(filepath.Join(ctrlDir(), "jujud.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return r, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	start = time.Now()
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("starting jujud again: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaps it when kill-controller stops it
	for {
		if err := jujuEnv(nil, "status", "-m", restartModel); err == nil {
			break
		} else if time.Since(start) > restartLimit {
			return r, fmt.Errorf("the API does not answer %v after jujud's start: %w", restartLimit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.api = time.Since(start)
	for {
		_, last, err := execUnits(n)
		if err == nil {
			r.exec = time.Since(start)
			if !last.IsZero() {
				r.taken = last.Add(time.Second).Sub(start)
			}
			return r, nil
		}
		// A controller busy with its agents may answer status and then not answer exec's
		// connection in time: nothing was queued, so exec again.
		if !strings.Contains(err.Error(), "cannot connect to controller") || time.Since(start) > restartLimit {
			return r, err
		}
		r.retries++
	}
}

// execUnits runs `true` on every unit of the restart model and checks that each one ran it;
// it returns how long that took and when the last unit started its task.
func execUnits(n int) (time.Duration, time.Time, error) {
	start := time.Now()
	out, _, err := jujuOutErr("exec", "--application", "wordpress", "--format", "json", "--wait", restartLimit.String(), "-m", restartModel, "--", "true")
	took := time.Since(start)
	if err != nil {
		return took, time.Time{}, err
	}
	var tasks map[string]struct {
		Status  string `json:"status"`
		Results struct {
			ReturnCode int `json:"return-code"`
		} `json:"results"`
		Timing struct {
			Started string `json:"started"`
		} `json:"timing"`
	}
	if err := json.Unmarshal(out, &tasks); err != nil {
		return took, time.Time{}, fmt.Errorf("juju exec: %v", err)
	}
	if len(tasks) != n {
		return took, time.Time{}, fmt.Errorf("juju exec: %d results, want %d", len(tasks), n)
	}
	var last time.Time
	for u, t := range tasks {
		if t.Status != "completed" || t.Results.ReturnCode != 0 {
			return took, time.Time{}, fmt.Errorf("juju exec: %s %s, return code %d", u, t.Status, t.Results.ReturnCode)
		}
		if at, err := time.Parse("2006-01-02 15:04:05 -0700 MST", t.Timing.Started); err == nil && at.After(last) {
			last = at
		}
	}
	return took, last, nil
}

// agentHostFloor is the memory of an idle agent host running one machine and its unit:
// what each machine's own agent process would cost at least.
func agentHostFloor() (mem, error) {
	if err := jujuEnv(nil, "bootstrap"); err != nil {
		return mem{}, err
	}
	defer killControllerAndHost()
	if err := jujuEnv(nil, "add-model", restartModel); err != nil {
		return mem{}, err
	}
	if err := jujuEnv(nil, "deploy", mustHookless("wordpress"), "-m", restartModel); err != nil {
		return mem{}, err
	}
	if err := waitIdle(restartModel, 1, 120*time.Second); err != nil {
		return mem{}, err
	}
	pid := readPID(filepath.Join(ctrlDir(), "agents.pid"))
	if pid == 0 {
		return mem{}, errors.New("no agent host running (no agents.pid)")
	}
	m, err := sampleMem(pid)
	fmt.Fprintf(os.Stderr, "restart: one idle agent host of one machine: %s\n", m)
	return m, err
}

// jujuEnv runs the CLI as juju() does, with env added to its environment.
func jujuEnv(env []string, args ...string) error {
	cmd := exec.Command(filepath.Join(bin, "juju"), args...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "JUJU_DATA="+data, "NO_COLOR=1"), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("juju %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return nil
}

// killControllerAndHost is killController, then waits for the agent host to be gone too
// (kill-controller stops it), so the next controller does not share the CPUs with it.
func killControllerAndHost() {
	host := readPID(filepath.Join(ctrlDir(), "agents.pid"))
	killController()
	for deadline := time.Now().Add(30 * time.Second); host > 0 && !gone(host) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

func ctrlDir() string { return filepath.Join(data, "controllers", "local") }

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// procStrings reads a NUL-separated file of /proc/<pid> (cmdline, environ).
func procStrings(pid int, name string) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		return nil, err
	}
	parts := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(parts) == 0 || parts[0] == "" {
		return nil, fmt.Errorf("/proc/%d/%s is empty", pid, name)
	}
	return parts, nil
}

// gone reports whether pid has exited: no such process, or a zombie nobody reaped yet
// (bootstrap's jujud is the child of no process of ours).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses, which may hold spaces.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// rssKB is a process's resident set, in KiB.
func rssKB(pid int) (int, error) { return statusKB(pid, "VmRSS") }

// statusKB reads one KiB field of /proc/<pid>/status.
func statusKB(pid int, field string) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, field+":") {
			return strconv.Atoi(strings.Fields(line)[1])
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// mem is a process's resident memory in MB: all of it, and its anonymous part.
type mem struct{ rss, anon float64 }

func (m mem) String() string {
	if m.rss == 0 {
		return "none"
	}
	return fmt.Sprintf("%s MB (anon %s MB)", thousands(m.rss), thousands(m.anon))
}

// sampleMem is the median of 5 readings of pid's memory 1 s apart.
func sampleMem(pid int) (mem, error) {
	var rss, anon []float64
	for i := range 5 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		r, err := statusKB(pid, "VmRSS")
		if err != nil {
			return mem{}, err
		}
		a, err := statusKB(pid, "RssAnon")
		if err != nil {
			return mem{}, err
		}
		rss, anon = append(rss, float64(r)/1024), append(anon, float64(a)/1024)
	}
	return mem{midF(rss), midF(anon)}, nil
}

func sigName(sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		return "SIGKILL"
	}
	return "SIGTERM"
}

func pickRestart(rs []restartRun, f func(restartRun) time.Duration) []time.Duration {
	var ds []time.Duration
	for _, r := range rs {
		ds = append(ds, f(r))
	}
	return ds
}
