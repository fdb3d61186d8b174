package main

// The removal figure: remove-application of an application with 1,000 units in a relation, timed
// with the real binaries until status shows the application and the relation gone.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	removalRuns  = 3
	removalUnits = 1000
	// removalLimit bounds one removal (the budget is 5 s); removalStall gives up earlier when
	// status has not changed at all for that long.
	removalLimit = 120 * time.Second
	removalStall = 30 * time.Second
	removalModel = "removal"
)

// removalRun is what one run measured. A zero milestone was not reached.
type removalRun struct {
	deploy, status, cli                time.Duration
	dying, unitsGone, appGone, relGone time.Duration
	done                               time.Duration
	last                               string         // the last status snapshot
	agentErrors                        map[string]int // controller log warnings during the removal
}

// measureRemoval runs the removal removalRuns times, each in a fresh controller and model, and
// adds its rows.
func measureRemoval() error {
	var runs []removalRun
	for i := 0; i < removalRuns; i++ {
		r, err := removalOnce(i)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	pick := func(f func(r removalRun) time.Duration) []time.Duration {
		var ds []time.Duration
		for _, r := range runs {
			ds = append(ds, f(r))
		}
		return ds
	}
	status := mid(pick(func(r removalRun) time.Duration { return r.status }))
	n := fmt.Sprintf("%d runs", removalRuns)
	rows = append(rows,
		row{what: fmt.Sprintf("deploy -n 1,000 + mysql + integrate until 1,001 units idle and in the relation's scope (%s)", n),
			median: mid(pick(func(r removalRun) time.Duration { return r.deploy }))},
		row{what: "baseline: juju status --format json of that model (1,001 units, 1,001 machines, 3 relations)", median: status})
	done := pick(func(r removalRun) time.Duration { return r.done })
	total := row{what: fmt.Sprintf("remove-application of 1,000 units in a relation, until application and relation gone (%s)", n), budget: "≤ 5 s"}
	if d, ok := midReached(done); ok {
		total.median, total.ratio = d, ratio(d, status)
	} else {
		total.value = fmt.Sprintf("not finished (%s)", reachedCount(done))
	}
	rows = append(rows, total)
	for _, phase := range []struct {
		what string
		f    func(r removalRun) time.Duration
	}{
		{"remove-application: the CLI call returns", func(r removalRun) time.Duration { return r.cli }},
		{"remove-application: every unit dying or dead", func(r removalRun) time.Duration { return r.dying }},
		{"remove-application: every unit gone", func(r removalRun) time.Duration { return r.unitsGone }},
		{"remove-application: application gone", func(r removalRun) time.Duration { return r.appGone }},
		{"remove-application: relation gone", func(r removalRun) time.Duration { return r.relGone }},
	} {
		ds := pick(phase.f)
		pr := row{what: phase.what}
		if d, ok := midReached(ds); ok {
			pr.median = d
			if c := reachedCount(ds); !strings.HasPrefix(c, fmt.Sprint(len(ds))+" ") {
				pr.ratio = c
			}
		} else {
			pr.value = "not reached (" + reachedCount(ds) + ")"
		}
		rows = append(rows, pr)
	}
	notes = append(notes, fmt.Sprintf("Removal: each run bootstraps a fresh controller, deploys copies of ./testdata/charms/wordpress (-n 1000) and ./testdata/charms/mysql "+
		"without their hooks (the figure is the controller's and agents' lifecycle work, not charm code) in a fresh model, integrates them and waits until all 1,001 units are idle and in the relation's scope (juju show-unit mysql/0: "+
		"its own and 1,000 related units in-scope); then it times `juju remove-application wordpress --no-prompt` until `juju status --format json` "+
		"shows no wordpress application and no relation to it (polled back to back). The ratio is against that model's `juju status --format json`, "+
		"measured just before the removal. A run gives up after %.0f s, or when status has not changed for %.0f s; a phase not reached in a run "+
		"counts as slower than every reached one. Machines stay, as in Juju.", removalLimit.Seconds(), removalStall.Seconds()))
	for i, r := range runs {
		if r.done != 0 && r.done <= 5*time.Second {
			continue
		}
		note := fmt.Sprintf("Removal run %d: every unit dying after %s; ", i+1, fmtMilestone(r.dying))
		if r.done == 0 {
			note += "did not finish; last status: " + r.last + "."
		} else {
			note += fmt.Sprintf("all gone after %s", fmtDur(r.done))
			if r.dying != 0 && r.unitsGone > r.dying {
				note += fmt.Sprintf(", the units going at %.0f/s on average in between", removalUnits/(r.unitsGone-r.dying).Seconds())
			}
			note += "."
		}
		if len(r.agentErrors) > 0 {
			note += " Controller log during the removal: " + summarize(r.agentErrors) + "."
		}
		notes = append(notes, note)
	}
	return nil
}

func removalOnce(run int) (removalRun, error) {
	var r removalRun
	if _, err := juju("bootstrap"); err != nil {
		return r, err
	}
	defer killController()
	if _, err := juju("add-model", removalModel); err != nil {
		return r, err
	}
	start := time.Now()
	for _, args := range [][]string{
		{"deploy", mustHookless("wordpress"), "-n", strconv.Itoa(removalUnits)},
		{"deploy", mustHookless("mysql"), "mysql"},
		{"integrate", "wordpress", "mysql"},
	} {
		if _, err := juju(append(args, "-m", removalModel)...); err != nil {
			return r, err
		}
	}
	if err := waitIdle(removalModel, removalUnits+1, 600*time.Second); err != nil {
		return r, err
	}
	if err := waitInScope(removalModel, "mysql/0", "db", removalUnits+1, 600*time.Second); err != nil {
		return r, err
	}
	r.deploy = time.Since(start)
	r.status = median(10, func() error { _, err := juju("status", "--format", "json", "-m", removalModel); return err })

	logPath := filepath.Join(data, "controllers", "local", "jujud.log")
	logFrom := fileSize(logPath)
	start = time.Now()
	if _, err := juju("remove-application", "wordpress", "--no-prompt", "-m", removalModel); err != nil {
		return r, err
	}
	r.cli = time.Since(start)
	var last string
	changed := time.Now()
	lastPrint := time.Time{}
	for {
		snap, err := removalSnapshot(removalModel)
		if err != nil {
			return r, err
		}
		at := time.Since(start)
		set := func(d *time.Duration, reached bool) {
			if reached && *d == 0 {
				*d = at
			}
		}
		set(&r.dying, snap.units == snap.dying+snap.dead)
		set(&r.unitsGone, snap.units == 0)
		set(&r.appGone, !snap.app)
		set(&r.relGone, !snap.rel)
		if !snap.app && !snap.rel {
			r.done = at
			r.last = snap.String()
			break
		}
		if s := snap.String(); s != last {
			last, changed = s, time.Now()
		}
		if time.Since(lastPrint) >= time.Second {
			fmt.Fprintf(os.Stderr, "removal run %d at %s: %s\n", run+1, fmtDur(at), last)
			lastPrint = time.Now()
		}
		if at > removalLimit || time.Since(changed) > removalStall {
			r.last = fmt.Sprintf("%s (at %s; unchanged for %s)", last, fmtDur(at), fmtDur(time.Since(changed).Round(time.Second)))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "removal run %d: deploy %s, status %s, cli %s, dying %s, units gone %s, app gone %s, relation gone %s, done %s: %s\n",
		run+1, fmtDur(r.deploy), fmtDur(r.status), fmtDur(r.cli), fmtMilestone(r.dying), fmtMilestone(r.unitsGone),
		fmtMilestone(r.appGone), fmtMilestone(r.relGone), fmtMilestone(r.done), r.last)
	r.agentErrors = logWarnings(logPath, logFrom)
	if len(r.agentErrors) > 0 {
		fmt.Fprintf(os.Stderr, "removal run %d: controller log: %s\n", run+1, summarize(r.agentErrors))
	}
	return r, nil
}

// snapshot is what status shows of the removal.
type snapshot struct {
	app                       bool   // wordpress is listed
	appLife                   string // its life when not alive
	units, alive, dying, dead int
	rel                       bool   // mysql still has a relation to wordpress
	relLife                   string // its life when not alive
	inScope                   int    // from the relation's removal-blocked-by; -1 unknown
}

func (s snapshot) String() string {
	if !s.app && !s.rel {
		return "application and relation gone"
	}
	var b strings.Builder
	if s.app {
		fmt.Fprintf(&b, "application %s, %d units (%d alive, %d dying, %d dead)", cmpOr(s.appLife, "alive"), s.units, s.alive, s.dying, s.dead)
	} else {
		b.WriteString("application gone")
	}
	if s.rel {
		fmt.Fprintf(&b, ", relation %s", cmpOr(s.relLife, "alive"))
		if s.inScope >= 0 {
			fmt.Fprintf(&b, " with %d units in scope", s.inScope)
		}
	} else {
		b.WriteString(", relation gone")
	}
	return b.String()
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

var scopeWaitRE = regexp.MustCompile(`(\d+) units? to leave its scope`)

// removalSnapshot reads one `juju status --format json` of model.
func removalSnapshot(model string) (snapshot, error) {
	out, err := juju("status", "--format", "json", "-m", model)
	if err != nil {
		return snapshot{}, err
	}
	type relatedApp struct {
		RelatedApplication string   `json:"related-application"`
		Life               string   `json:"life"`
		RemovalBlockedBy   []string `json:"removal-blocked-by"`
	}
	var st struct {
		Applications map[string]struct {
			Life      string                  `json:"life"`
			Relations map[string][]relatedApp `json:"relations"`
			Units     map[string]struct {
				JujuStatus struct{ Life string } `json:"juju-status"`
			} `json:"units"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return snapshot{}, err
	}
	s := snapshot{inScope: -1}
	if wp, ok := st.Applications["wordpress"]; ok {
		s.app, s.appLife, s.units = true, wp.Life, len(wp.Units)
		for _, u := range wp.Units {
			switch u.JujuStatus.Life {
			case "":
				s.alive++
			case "dead":
				s.dead++
			default:
				s.dying++
			}
		}
	}
	for _, r := range st.Applications["mysql"].Relations["db"] {
		if r.RelatedApplication != "wordpress" {
			continue
		}
		s.rel, s.relLife = true, r.Life
		for _, b := range r.RemovalBlockedBy {
			if m := scopeWaitRE.FindStringSubmatch(b); m != nil {
				s.inScope, _ = strconv.Atoi(m[1])
			}
		}
	}
	return s, nil
}

// waitInScope waits until want units are in the scope of unit's relation on endpoint, as
// `juju show-unit` shows it: the unit itself plus its related units in scope.
func waitInScope(model, unit, endpoint string, want int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	got := 0
	for time.Now().Before(deadline) {
		out, err := juju("show-unit", unit, "--format", "json", "-m", model)
		if err != nil {
			return err
		}
		type inScope struct {
			InScope bool `json:"in-scope"`
		}
		var v map[string]struct {
			RelationInfo []struct {
				Endpoint     string             `json:"endpoint"`
				LocalUnit    inScope            `json:"local-unit"`
				RelatedUnits map[string]inScope `json:"related-units"`
			} `json:"relation-info"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			return err
		}
		got = 0
		for _, ri := range v[unit].RelationInfo {
			if ri.Endpoint != endpoint {
				continue
			}
			if ri.LocalUnit.InScope {
				got++
			}
			for _, ru := range ri.RelatedUnits {
				if ru.InScope {
					got++
				}
			}
		}
		if got == want {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("model %s: %d of %d units in the scope of %s:%s after %v", model, got, want, unit, endpoint, limit)
}

// killController destroys the controller and waits for its jujud to exit, so the next run does
// not share the CPUs with it.
func killController() {
	pidData, _ := os.ReadFile(filepath.Join(data, "controllers", "local", "jujud.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidData)))
	if _, err := juju("kill-controller", "local", "--no-prompt"); err != nil {
		fmt.Fprintln(os.Stderr, "WARNING", err)
	}
	for deadline := time.Now().Add(30 * time.Second); pid > 0 && time.Now().Before(deadline); {
		if err := syscall.Kill(pid, 0); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

var (
	logDigits = regexp.MustCompile(`[0-9]+`)
	logErr    = regexp.MustCompile(`msg="([^"]*)".*?err="((?:[^"\\]|\\.)*)"`)
)

// logWarnings counts the controller's warnings written after offset from, numbers blanked so
// that the same failure of many agents counts as one kind.
func logWarnings(path string, from int64) map[string]int {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < from {
		return nil
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(b[from:]), "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		kind := line
		if m := logErr.FindStringSubmatch(line); m != nil {
			kind = m[1] + ": " + strings.ReplaceAll(m[2], `\"`, `"`)
		} else if i := strings.Index(line, "msg="); i >= 0 {
			kind = line[i:]
		}
		out[logDigits.ReplaceAllString(kind, "N")]++
	}
	return out
}

// summarize lists the three commonest kinds of warning.
func summarize(kinds map[string]int) string {
	var all []string
	total := 0
	for k, c := range kinds {
		all = append(all, k)
		total += c
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := kinds[all[i]], kinds[all[j]]
		return a > b || a == b && all[i] < all[j]
	})
	var parts []string
	shown := 0
	for i, k := range all {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d other warnings", total-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%d × %s", kinds[k], k))
		shown += kinds[k]
	}
	return strings.Join(parts, "; ")
}

// midReached is the median of ds where 0 (not reached) counts as slower than anything reached;
// ok is false when that median is not reached.
func midReached(ds []time.Duration) (time.Duration, bool) {
	s := make([]time.Duration, len(ds))
	for i, d := range ds {
		s[i] = d
		if d == 0 {
			s[i] = 1<<63 - 1
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	m := s[len(s)/2]
	return m, m != 1<<63-1
}

func reachedCount(ds []time.Duration) string {
	n := 0
	for _, d := range ds {
		if d != 0 {
			n++
		}
	}
	return fmt.Sprintf("%d of %d runs", n, len(ds))
}

func fmtMilestone(d time.Duration) string {
	if d == 0 {
		return "not reached"
	}
	return fmtDur(d)
}
