package main

// The actions figures: one `juju run` round trip on an idle unit (CLI start to printed
// result), and 100 actions queued across 10 units at once until every one has completed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const (
	actionUnits    = 10
	actionsPerUnit = 10
)

// actionCharm writes a shell charm whose one action, echo, sets a result from its param.
func actionCharm() (string, error) {
	dir, err := os.MkdirTemp("", "bench-actioncharm-")
	if err != nil {
		return "", err
	}
	files := map[string]string{
		"metadata.yaml": "name: echoer\nsummary: an action and nothing else\nseries: [jammy]\n",
		"actions.yaml":  "echo:\n  description: Echo a word back.\n  params:\n    word: {type: string}\n",
		"actions/echo":  "#!/bin/sh\naction-set said=\"$(action-get word)\"\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// measureActions adds the actions rows on the running controller; version is the CLI's own
// start cost, measured in the same run.
func measureActions(version time.Duration) error {
	charm, err := actionCharm()
	if err != nil {
		return err
	}
	defer os.RemoveAll(charm)
	const model = "actions"
	if _, err := juju("add-model", model); err != nil {
		return err
	}
	if _, err := juju("deploy", charm, "echoer", "-n", fmt.Sprint(actionUnits), "-m", model); err != nil {
		return err
	}
	if err := waitIdle(model, actionUnits, 120*time.Second); err != nil {
		return err
	}

	roundTrip := median(20, func() error {
		out, err := juju("run", "echoer/0", "echo", "word=hi", "--format", "json", "-m", model)
		if err != nil {
			return err
		}
		if !strings.Contains(string(out), `"said":"hi"`) && !strings.Contains(string(out), `"said": "hi"`) {
			return fmt.Errorf("juju run echoer/0 echo: unexpected result %s", out)
		}
		return nil
	})
	rows = append(rows, row{what: "juju run on an idle unit, shell action, CLI start to result", budget: "≤ 150 ms", median: roundTrip, ratio: ratio(roundTrip, version)})

	var units []string
	for i := range actionUnits {
		units = append(units, fmt.Sprintf("echoer/%d", i))
	}
	start := time.Now()
	var ops []string
	for range actionsPerUnit {
		_, stderr, err := jujuOutErr(append(append([]string{"run"}, units...), "echo", "word=queued", "--background", "-m", model)...)
		if err != nil {
			return err
		}
		id, err := operationID(stderr)
		if err != nil {
			return err
		}
		ops = append(ops, id)
	}
	for _, id := range ops {
		out, err := juju("show-operation", id, "--wait", "120s", "--format", "json", "-m", model)
		if err != nil {
			return err
		}
		var op struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(out, &op); err != nil {
			return fmt.Errorf("show-operation %s: %v", id, err)
		}
		if op.Status != "completed" {
			return fmt.Errorf("operation %s ended %s", id, op.Status)
		}
	}
	took := time.Since(start)
	total := actionUnits * actionsPerUnit
	rows = append(rows, row{what: fmt.Sprintf("%d actions queued across %d units until all completed", total, actionUnits),
		value: fmt.Sprintf("%s (%.0f tasks/s)", fmtDur(took), float64(total)/took.Seconds())})
	notes = append(notes, "Actions: a shell charm whose action calls action-get and action-set (two hook tool processes). "+
		"Each unit runs its queue one task at a time, units in parallel; the queued figure counts from the first `juju run --background` "+
		"until `juju show-operation --wait` has returned for the last operation.")
	return nil
}

var scheduledRe = regexp.MustCompile(`Scheduled operation (\d+)`)

// operationID reads the operation id that `juju run --background` reports on stderr.
func operationID(stderr []byte) (string, error) {
	m := scheduledRe.FindSubmatch(stderr)
	if m == nil {
		return "", fmt.Errorf("juju run --background: no operation id in %q", stderr)
	}
	return string(m[1]), nil
}

// measureActionsAlone is -only actions: its own controller, and the CLI's start cost measured
// first for the ratio.
func measureActionsAlone() error {
	version := median(50, func() error { _, err := juju("version"); return err })
	if _, err := juju("bootstrap"); err != nil {
		return err
	}
	defer killController()
	return measureActions(version)
}
