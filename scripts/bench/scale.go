package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The scale figures (`make bench-scale`): one model, a charm without hooks, one machine per unit,
// grown to N units. They are kept apart from `make bench` (they take minutes to an hour) and
// recorded in their own section of BENCHMARKS.md, one subsection per N.

// scaleProbe is what /proc says of the controller's processes at one moment: jujud and the
// agent host (every machine and unit agent runs in it).
type scaleProbe struct {
	at         time.Time
	jujudTicks int64 // user + system CPU, in clock ticks, of jujud and its reaped children
	hostTicks  int64
	faults     [2]int64 // minor page faults of jujud and of the agent host
	rssKB      int
	fds        int
	logSizes   [2]int64 // where jujud's and the agent host's logs end (scalegc.go)
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

func probe() scaleProbe {
	p := scaleProbe{at: time.Now(), logSizes: logSizes()}
	for i, f := range []string{"jujud.pid", "agents.pid"} {
		pid := readPID(filepath.Join(ctrlDir(), f))
		if pid == 0 {
			continue
		}
		t, faults := procStat(pid)
		p.faults[i] = faults
		if i == 0 {
			p.jujudTicks = t
		} else {
			p.hostTicks = t
		}
		if kb, err := rssKB(pid); err == nil {
			p.rssKB += kb
		}
		if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
			p.fds += len(ents)
		}
	}
	return p
}

// procStat reads /proc/<pid>/stat: utime + stime + cutime + cstime, and the minor page
// faults (on a VM that hands freed memory back to its host, each costs the process tens of
// microseconds of CPU, so they are part of what a unit costs).
func procStat(pid int) (ticks, minorFaults int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, minflt field 10, utime field 14, so f[7] is minflt
	// and f[11..14] are utime..cstime.
	field := func(k int) int64 {
		if k >= len(f) {
			return 0
		}
		v, _ := strconv.ParseInt(f[k], 10, 64)
		return v
	}
	return field(11) + field(12) + field(13) + field(14), field(7)
}

func (p scaleProbe) cores(since scaleProbe) float64 {
	return float64(p.jujudTicks+p.hostTicks-since.jujudTicks-since.hostTicks) / clockTicks / p.at.Sub(since.at).Seconds()
}

// settle waits until the controller's processes have been quiet (below 0.1 cores) for 3 s and
// done() says the work is complete; it returns the probe taken when they went quiet, so that
// the wait's own checks are not counted. Progress decides, not a fixed time: it gives up only
// when nothing has moved for limit.
func settle(limit time.Duration, done func() (bool, error)) (scaleProbe, error) {
	// Quiet is below 0.3 cores: an idle controller of 100,000 units may use 0.2 (its budget).
	// A controller that never gets that quiet is asked anyway every 30 s, or every 20 times
	// what the last question took if that is longer: at 100,000 units a status call takes 6 s
	// of the machine's two cores, and asking every 30 s took a fifth of them from the work
	// being measured.
	const quietFor, quiet, failFor = 3 * time.Second, 0.3, 2 * time.Minute
	askAnyway := 30 * time.Second
	var failingSince time.Time
	window := []scaleProbe{probe()}
	lastBusy, lastAsked := time.Now(), time.Now()
	for {
		time.Sleep(500 * time.Millisecond)
		p := probe()
		window = append(window, p)
		for len(window) > 2 && p.at.Sub(window[1].at) >= quietFor {
			window = window[1:]
		}
		if p.at.Sub(window[0].at) < quietFor {
			continue
		}
		if p.cores(window[0]) >= quiet && time.Since(lastAsked) < askAnyway {
			lastBusy = p.at
			continue
		}
		start := window[0]
		asked := time.Now()
		ok, err := done()
		lastAsked = time.Now()
		askAnyway = max(30*time.Second, 20*lastAsked.Sub(asked))
		if err != nil {
			// A controller restarting (or too busy to answer one call) is not the end of the
			// run: only an error that lasts is.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) > failFor {
				return start, err
			}
			fmt.Fprintf(os.Stderr, "scale: asking again after %v\n", err)
			continue
		}
		failingSince = time.Time{}
		if ok {
			return start, nil
		}
		if time.Since(lastBusy) > limit {
			return start, fmt.Errorf("no progress for %s", limit)
		}
		window = []scaleProbe{probe()}
	}
}

// appUnits reads the model's status once: how many of the application's units are idle, how
// many it has, and whether it is there at all. One call per check: at 100,000 units a status
// call costs seconds of CPU, which the run would otherwise take from the controller it measures.
func appUnits(model, app string) (idle, total int, present bool, err error) {
	out, err := juju("status", "--format", "json", "-m", model)
	if err != nil {
		return 0, 0, false, err
	}
	var s struct {
		Applications map[string]struct {
			Units map[string]unitJSON `json:"units"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return 0, 0, false, err
	}
	a, present := s.Applications[app]
	for _, u := range a.Units {
		total++
		if u.JujuStatus.Current == "idle" {
			idle++
		}
	}
	return idle, total, present, nil
}

func waitAllIdle(model, app string, want int) (scaleProbe, error) {
	return settle(2*time.Minute, func() (bool, error) {
		idle, total, _, err := appUnits(model, app)
		fmt.Fprintf(os.Stderr, "scale: %d of %d units idle (want %d)\n", idle, total, want)
		return idle == want && total == want, err
	})
}

// idleWindow is how long idle CPU is measured over: Go's forced collection period.
const idleWindow = 2 * time.Minute

// measureScale grows one model to n units and measures the figures of issue 16's budgets.
// It stops growing early, and measures what it has, when the machine lacks the memory for the
// next call or after growFor (when not 0).
func measureScale(n, batch int, growFor time.Duration) error {
	target := n
	began := time.Now()
	if n < 2000 {
		return fmt.Errorf("-scale %d: at least 2000 units (1,000 are measured at each end)", n)
	}
	if _, _, err := jujuEnvOutErr([]string{gcTraceEnv}, "bootstrap"); err != nil {
		return err
	}
	defer killControllerAndHost()
	const model, app = "scale", "wordpress"
	if _, err := juju("add-model", model); err != nil {
		return err
	}
	charm := mustHookless(app)
	load0 := loadAvg()
	work := newSpeedWork(16 << 20)
	var lastSpeed windowSpeed

	// 0 → 1,000, measured.
	endFirstSpeed := work.around()
	p0 := probe()
	if _, err := juju("deploy", charm, "-n", "1000", "-m", model); err != nil {
		return err
	}
	p1, err := waitAllIdle(model, app, 1000)
	if err != nil {
		return fmt.Errorf("first 1,000 units: %w", err)
	}
	firstSpeed := endFirstSpeed()
	first := p1.jujudTicks - p0.jujudTicks
	firstGC := gcBetween(p0, p1)
	firstFaults := faultsBetween(p0, p1)
	firstAll := first + p1.hostTicks - p0.hostTicks
	deployTime := p1.at.Sub(p0.at)
	fmt.Fprintf(os.Stderr, "scale: 1,000 units idle after %s\n", fmtDur(deployTime))

	// 1,000 → n-1,000 in calls of batch units, each until all idle, for as long as the machine
	// has the memory for the next call (a run that would be killed by the kernel records how far
	// it got, and why, instead).
	have, stopped := 1000, ""
	// The last of these calls is measured too: its thousands of units span several of jujud's
	// collections, where the last 1,000 may catch none of them or two (at 100,000 units each
	// is seconds of CPU), so it says what a unit costs near the end with its share of them.
	var lastBatch batchCost
	room := func(k int) bool {
		if growFor > 0 && time.Since(began) > growFor {
			stopped = fmt.Sprintf("at %s units it stopped growing: the run was given %s to grow (-scale-for)", thousands(float64(have)), growFor)
			fmt.Fprintln(os.Stderr, "scale: "+stopped)
			return false
		}
		p := probe()
		need := float64(p.rssKB) / float64(have) * float64(k) * 1.25 // KiB
		avail := memAvailableKB() - 1<<20                            // a GiB for everything else
		if need > avail {
			stopped = fmt.Sprintf("at %s units it stopped growing: the next %s would need about %.1f GiB more (%.0f KiB per unit so far) with %.1f GiB available",
				thousands(float64(have)), thousands(float64(k)), need/(1<<20), float64(p.rssKB)/float64(have), max(avail, 0)/(1<<20))
			fmt.Fprintln(os.Stderr, "scale: "+stopped)
			return false
		}
		return true
	}
	for have < n-1000 {
		k := min(batch, n-1000-have)
		if !room(k) {
			break
		}
		p2 := probe()
		start := time.Now()
		if _, err := juju("add-unit", app, "-n", strconv.Itoa(k), "-m", model); err != nil {
			return fmt.Errorf("adding units %d to %d: %w", have, have+k, err)
		}
		have += k
		fmt.Fprintf(os.Stderr, "scale: add-unit -n %d returned after %s (%d units)\n", k, fmtDur(time.Since(start)), have)
		p3, err := waitAllIdle(model, app, have)
		if err != nil {
			return fmt.Errorf("%d units: %w", have, err)
		}
		deployTime += p3.at.Sub(p2.at)
		lastBatch = batchCost{units: k, jujud: p3.jujudTicks - p2.jujudTicks, gc: gcBetween(p2, p3), faults: faultsBetween(p2, p3)}
	}

	// The last 1,000, measured.
	var last, lastAll int64
	var lastGC [2]gcSummary
	var lastFaults [2]int64
	if stopped == "" && room(1000) {
		endLastSpeed := work.around()
		p4 := probe()
		if _, err := juju("add-unit", app, "-n", "1000", "-m", model); err != nil {
			return err
		}
		have += 1000
		p5, err := waitAllIdle(model, app, have)
		if err != nil {
			return fmt.Errorf("last 1,000 units: %w", err)
		}
		lastSpeed = endLastSpeed()
		last = p5.jujudTicks - p4.jujudTicks
		lastGC = gcBetween(p4, p5)
		lastFaults = faultsBetween(p4, p5)
		lastAll = last + p5.hostTicks - p4.hostTicks
		deployTime += p5.at.Sub(p4.at)
	}
	n = have
	scaleReached = have

	// Idle: 2 minutes with nothing to do. Go collects a heap that has not been collected for 2
	// minutes: a 20 s window holding one such collection of a 100,000-unit heap would count it
	// six times over, one that missed it not at all.
	time.Sleep(5 * time.Second)
	i0 := probe()
	time.Sleep(idleWindow)
	i1 := probe()
	idle := i1.cores(i0)
	idleGC := gcBetween(i0, i1)

	statusJSON := median(5, func() error { _, err := juju("status", "--format", "json", "-m", model); return err })
	statusTab := median(5, func() error { _, err := juju("status", "-m", model); return err })

	r0 := time.Now()
	if _, err := juju("remove-application", app, "-m", model, "--no-prompt"); err != nil {
		return err
	}
	r1, err := settle(5*time.Minute, func() (bool, error) {
		_, total, present, err := appUnits(model, app)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(os.Stderr, "scale: %d units left\n", total)
		return !present, nil
	})
	if err != nil {
		return fmt.Errorf("remove-application: %w", err)
	}
	removal := r1.at.Sub(r0)

	perUnit := func(ticks int64) time.Duration {
		return time.Duration(float64(ticks) / clockTicks / 1000 * float64(time.Second))
	}
	size := thousands(float64(n))
	perUnitRow := func(what string, last, first int64, budget string) row {
		if last == 0 {
			return row{what: what, value: "not measured (the run stopped growing before its last 1,000)", budget: budget}
		}
		return row{what: what, value: fmt.Sprintf("%s against %s", fmtUs(perUnit(last)), fmtUs(perUnit(first))), budget: budget,
			ratio: fmt.Sprintf("%.2f×", float64(last)/float64(max(first, 1)))}
	}
	rows = append(rows,
		row{what: fmt.Sprintf("%s units: deploy until all idle (deploy -n 1,000, add-unit -n %s until %s, add-unit -n 1,000)", size, thousands(float64(batch)), thousands(float64(n-1000))),
			median: deployTime, budget: scaleBudget(target, "≤ 60 s", "≤ 15 min")},
		perUnitRow(fmt.Sprintf("%s units: jujud CPU per added unit, the last 1,000 against the first 1,000", size), last, first, scaleBudget(target, "≤ 1.2×", "≤ 1.5×")),
		perUnitRow(fmt.Sprintf("%s units: jujud and agent host CPU per added unit, the same", size), lastAll, firstAll, ""),
		lastBatch.row(fmt.Sprintf("%s units: jujud CPU per added unit over the last add-unit -n %s (to %s units), against the first 1,000",
			size, thousands(float64(lastBatch.units)), thousands(float64(n-1000))), first, perUnit),
		row{what: fmt.Sprintf("%s units: idle CPU of jujud and the agent host (%s)", size, fmtSecs(idleWindow)), value: fmt.Sprintf("%.3f cores", idle), budget: scaleBudget(target, "≤ 0.05 cores", "≤ 0.2 cores")},
		row{what: fmt.Sprintf("%s units: RSS of jujud and the agent host", size), value: fmt.Sprintf("%.2f GiB", float64(i1.rssKB)/(1<<20)), budget: scaleBudget(target, "≤ 2 GiB", "≤ 16 GiB")},
		row{what: fmt.Sprintf("%s units: open file descriptors of jujud and the agent host", size), value: thousands(float64(i1.fds)), budget: scaleBudget(target, "≤ 2,000", "≤ 10,000")},
		row{what: fmt.Sprintf("%s units: juju status --format json (5 runs)", size), median: statusJSON, budget: scaleBudget(target, "≤ 0.5 s", "≤ 5 s")},
		row{what: fmt.Sprintf("%s units: juju status (tabular) (5 runs)", size), median: statusTab, budget: scaleBudget(target, "≤ 0.5 s", "≤ 5 s")},
		row{what: fmt.Sprintf("%s units: remove-application until gone", size), median: removal, budget: scaleBudget(target, "≤ 60 s", "≤ 10 min")},
	)
	notes = append(notes, fmt.Sprintf("Scale, %s units: a fresh controller (`juju bootstrap`, fsync on), one model, the wordpress sample charm without its hooks "+
		"(metadata only), one machine per unit: every machine and unit agent runs in the local provider's agent host. CPU is utime + stime of jujud "+
		"and of the agent host from /proc, counted from the call until both processes went quiet (below 0.3 cores for 3 s) with every unit idle "+
		"in `juju status`; the status calls that check that come after the quiet point and are not counted (while the processes are busy, the run asks only every 30 s, "+
		"or every 20 times what its last status call took when that is longer). Idle CPU is the average over %s of nothing to do, "+
		"5 s after the last unit went idle. The machine's 1-minute load average at the start was %.1f on %d cores.",
		size, fmtSecs(idleWindow), load0, runtime.NumCPU()))
	if note := journalNote(data); note != "" {
		notes = append(notes, note)
	}
	if last != 0 {
		notes = append(notes, fmt.Sprintf("Scale, %s units: the collections in the two measured windows (from the runtime's gctrace lines in the processes' logs; "+
			"their CPU is part of the figures above): the first 1,000 units, jujud %s, the agent host %s; the last 1,000, jujud %s, the agent host %s.",
			size, firstGC[0], firstGC[1], lastGC[0], lastGC[1]))
	}
	notes = append(notes, fmt.Sprintf("Scale, %s units: the collections in the idle window: jujud %s, the agent host %s.", size, idleGC[0], idleGC[1]))
	if last != 0 {
		notes = append(notes, faultsNote(size, firstFaults, lastFaults, lastBatch))
		notes = append(notes, speedNote(size, firstSpeed, lastSpeed, float64(last)/float64(max(first, 1))))
	}
	if lastBatch.units > 0 {
		notes = append(notes, fmt.Sprintf("Scale, %s units: the collections in the last add-unit -n %s: jujud %s.",
			size, thousands(float64(lastBatch.units)), lastBatch.gc[0]))
	}
	if stopped != "" {
		notes = append(notes, fmt.Sprintf("Scale, asked for %s units: %s; the figures above are at %s units.", thousands(float64(target)), stopped, size))
	}
	return nil
}

func scaleBudget(n int, at10k, at100k string) string {
	switch {
	case n >= 100_000:
		return at100k
	case n >= 10_000:
		return at10k
	}
	return ""
}

// writeScale puts this run's rows and notes into BENCHMARKS.md as the subsection of n units,
// replacing the one of an earlier run of the same n and keeping the others.
// scaleReached is how many units the scale run had when it measured (fewer than asked when it
// stopped growing early).
var scaleReached int

func writeScale(n int) error {
	path := filepath.Join(root, "BENCHMARKS.md")
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	begin, end := fmt.Sprintf("<!-- scale:%d -->", n), fmt.Sprintf("<!-- /scale:%d -->", n)
	var b strings.Builder
	heading := thousands(float64(n)) + " units"
	if scaleReached > 0 && scaleReached < n {
		heading += fmt.Sprintf(": not reached (stopped at %s)", thousands(float64(scaleReached)))
	}
	fmt.Fprintf(&b, "%s\n### %s\n\nMeasured by `go run ./scripts/bench %s` on %s, %s.\n\n", begin, heading, strings.Join(os.Args[1:], " "),
		machine(), time.Now().UTC().Format("2006-01-02"))
	writeTable(&b, "value")
	b.WriteString(end)
	text := string(old)
	if i, j := strings.Index(text, begin), strings.Index(text, end); i >= 0 && j > i {
		text = text[:i] + b.String() + text[j+len(end):]
	} else {
		if !strings.Contains(text, scaleHeading) {
			text = strings.TrimRight(text, "\n") + "\n\n" + scaleHeading + "\n"
		}
		text = strings.TrimRight(text, "\n") + "\n\n" + b.String() + "\n"
	}
	fmt.Print(b.String() + "\n")
	return os.WriteFile(path, []byte(text), 0o644)
}

// scaleHeading starts the scale section, which `make bench` keeps as it is.
const scaleHeading = "## At scale (`make bench-scale`)"

// memAvailableKB is the kernel's estimate of the memory available for new work, in KiB.
func memAvailableKB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "MemAvailable:") {
			f := strings.Fields(line)
			if len(f) > 1 {
				v, _ := strconv.ParseFloat(f[1], 64)
				return v
			}
		}
	}
	return 0
}

// fmtSecs writes a whole number of seconds: "120 s".
func fmtSecs(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

// batchCost is what one add-unit call of the growing phase cost jujud, until all idle.
type batchCost struct {
	units  int
	jujud  int64 // clock ticks
	gc     [2]gcSummary
	faults [2]int64
}

// faultsBetween is each process's minor page faults between two probes.
func faultsBetween(from, to scaleProbe) [2]int64 {
	return [2]int64{to.faults[0] - from.faults[0], to.faults[1] - from.faults[1]}
}

// faultsNote says how many minor page faults a unit cost each process in the measured windows.
func faultsNote(size string, first, last [2]int64, batch batchCost) string {
	per := func(f int64, units int) string {
		if units == 0 {
			return "not measured"
		}
		return thousands(float64(f) / float64(units))
	}
	window := func(what string, f [2]int64, units int) string {
		return fmt.Sprintf("%s, jujud %s and the agent host %s", what, per(f[0], units), per(f[1], units))
	}
	return fmt.Sprintf("Scale, %s units: minor page faults per added unit (their cost is part of the CPU above; on a VM whose freed memory goes back to its host each is dear): %s; %s; %s.",
		size, window("the first 1,000", first, 1000), window("the last 1,000", last, 1000),
		window(fmt.Sprintf("the last add-unit -n %s", thousands(float64(batch.units))), batch.faults, batch.units))
}

// row compares the batch's CPU per unit with the first 1,000's (first ticks for 1,000 units).
func (b batchCost) row(what string, first int64, perUnit func(int64) time.Duration) row {
	if b.units == 0 {
		return row{what: what, value: "not measured (no add-unit between the first and the last 1,000)"}
	}
	per := float64(b.jujud) * 1000 / float64(b.units) // ticks per 1,000 units
	return row{what: what, value: fmt.Sprintf("%s against %s", fmtUs(perUnit(int64(per))), fmtUs(perUnit(first))),
		ratio: fmt.Sprintf("%.2f×", per/float64(max(first, 1)))}
}
