package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The e2e waits give up when the model stops moving, not after a fixed time: a loaded machine
// slows every step down but stops none (the daemon's tests follow the same rule, see
// controller/daemon/settle_lifecycle_test.go).

const (
	// settleQuiet is how long a model's status may stand still, with no hook running, before a
	// wait calls it stuck.
	settleQuiet = 30 * time.Second
	// settleLimit caps a wait on a model that keeps changing without getting there.
	settleLimit = 5 * time.Minute
	// progressEvery is how often a wait reads the status to see whether the model moves.
	progressEvery = time.Second
)

// progress follows whether a model moves, from `juju status --format json` without the
// controller's clock.
type progress struct {
	e     *env
	model string // "" for the current model
	start time.Time
	moved time.Time
	read  time.Time
	last  string
}

// progress starts following model ("" for the current one).
func (e *env) progress(model string) *progress {
	now := time.Now()
	return &progress{e: e, model: model, start: now, moved: now}
}

// stuck says why a wait should give up (the model's status has stood still for settleQuiet
// with no hook running, or settleLimit has passed), or "" while the model moves. It reads the
// status at most every progressEvery.
func (p *progress) stuck() string {
	now := time.Now()
	if now.Sub(p.read) >= progressEvery {
		p.read = now
		args := []string{"status", "--format", "json"}
		if p.model != "" {
			args = append(args, "-m", p.model)
		}
		r := p.e.juju(args...)
		fp, hooks := statusFingerprint(r.stdout)
		if r.code == 0 && (fp != p.last || hooks) {
			p.last, p.moved = fp, now
		}
	}
	switch {
	case now.Sub(p.start) >= settleLimit:
		return fmt.Sprintf("still changing after %s", settleLimit)
	case now.Sub(p.moved) >= settleQuiet:
		return fmt.Sprintf("stuck: the status has not changed for %s and no hook is running", settleQuiet)
	}
	return ""
}

// statusFingerprint is the status without the controller's clock, and whether a unit runs a
// hook (its agent executing: the hook's own time limit bounds it).
func statusFingerprint(out string) (string, bool) {
	var doc map[string]any
	if json.Unmarshal([]byte(out), &doc) != nil {
		return out, false
	}
	if c, ok := doc["controller"].(map[string]any); ok {
		delete(c, "timestamp")
	}
	b, err := json.Marshal(doc) // keys sorted: equal statuses print alike
	if err != nil {
		return out, false
	}
	return string(b), strings.Contains(string(b), `"current":"executing"`)
}
