package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The bundle figure (issue 14): a bundle of 10 applications × 10 units, with relations,
// deployed by one `juju deploy bundle.yaml` until every unit is active, against the same
// applications deployed one command at a time (deploy -n 10, then integrate) in the same run,
// each on a fresh model removed afterwards. The two alternate, so that neither always runs
// second. The charms are the sample charms' metadata with one hook, start, that sets the
// workload active: with the sample charms' own hooks, 3,000 relation hooks (100 unit pairs
// per relation) take two minutes and their noise hides what deploying costs.

const (
	bundleRuns  = 3
	bundleUnits = 10
	bundleLimit = 10 * time.Minute
)

// bundleApp is one application of the figure.
type bundleApp struct{ name, charm string }

var bundleApps = []bundleApp{
	{"db0", "mysql"}, {"db1", "mysql"}, {"db2", "mysql"},
	{"wp0", "wordpress"}, {"wp1", "wordpress"}, {"wp2", "wordpress"}, {"wp3", "wordpress"},
	{"lb0", "haproxy"}, {"lb1", "haproxy"}, {"lb2", "haproxy"},
}

// bundleRelations: each wordpress on a database, each haproxy in front of a wordpress.
var bundleRelations = [][2]string{
	{"wp0:db", "db0:db"}, {"wp1:db", "db1:db"}, {"wp2:db", "db2:db"}, {"wp3:db", "db0:db"},
	{"lb0:reverseproxy", "wp0:website"}, {"lb1:reverseproxy", "wp1:website"}, {"lb2:reverseproxy", "wp2:website"},
}

// activeCharm copies a sample charm's metadata, manifest and config into the bench's data
// directory, with one hook: start sets the workload active.
func activeCharm(name string) (string, error) {
	src := filepath.Join(root, "testdata", "charms", name)
	dst := filepath.Join(data, "active", name)
	if err := os.MkdirAll(filepath.Join(dst, "hooks"), 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{"metadata.yaml", "manifest.yaml", "config.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			return "", err
		}
	}
	return dst, os.WriteFile(filepath.Join(dst, "hooks", "start"), []byte("#!/bin/sh\nexec status-set active\n"), 0o755)
}

// writeBundle writes the figure's charms and bundle, the charms named by absolute path.
func writeBundle() (string, error) {
	var b strings.Builder
	b.WriteString("default-base: ubuntu@22.04\napplications:\n")
	for _, a := range bundleApps {
		path, err := activeCharm(a.charm)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  %s:\n    charm: %s\n    num_units: %d\n", a.name, path, bundleUnits)
	}
	b.WriteString("relations:\n")
	for _, r := range bundleRelations {
		fmt.Fprintf(&b, "  - [%s, %s]\n", r[0], r[1])
	}
	path := filepath.Join(data, "bench-bundle.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// deployBundleOnce deploys the bundle to a new model and waits until every unit is active.
func deployBundleOnce(model, path string) (time.Duration, error) {
	if _, err := juju("add-model", model); err != nil {
		return 0, err
	}
	start := time.Now()
	if _, err := juju("deploy", path, "-m", model); err != nil {
		return 0, err
	}
	return waitBundleActive(model, start)
}

// deployCommandsOnce deploys the same applications one command at a time, then relates them.
func deployCommandsOnce(model string) (time.Duration, error) {
	if _, err := juju("add-model", model); err != nil {
		return 0, err
	}
	start := time.Now()
	for _, a := range bundleApps {
		if _, err := juju("deploy", filepath.Join(data, "active", a.charm), a.name, "-n", fmt.Sprint(bundleUnits), "--base", "ubuntu@22.04", "-m", model); err != nil {
			return 0, err
		}
	}
	for _, r := range bundleRelations {
		if _, err := juju("integrate", r[0], r[1], "-m", model); err != nil {
			return 0, err
		}
	}
	return waitBundleActive(model, start)
}

// waitBundleActive waits until every unit of the figure is active and returns the time since
// start; on a timeout it says which units were not, and why.
func waitBundleActive(model string, start time.Time) (time.Duration, error) {
	err := waitActive(model, len(bundleApps)*bundleUnits, bundleLimit)
	took := time.Since(start)
	if err == nil {
		fmt.Fprintf(os.Stderr, "bench: %s: all active after %s\n", model, fmtDur(took))
		return took, nil
	}
	out, serr := juju("status", "-m", model)
	if serr != nil {
		return took, err
	}
	var stuck []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.Contains(f[0], "/") && f[1] != "active" {
			stuck = append(stuck, line)
		}
	}
	if len(stuck) > 10 {
		stuck = stuck[:10]
	}
	return took, fmt.Errorf("%w; not active:\n%s", err, strings.Join(stuck, "\n"))
}

// measureBundle measures the bundle figure on the running controller.
func measureBundle() error {
	path, err := writeBundle()
	if err != nil {
		return err
	}
	var bundles, commands []time.Duration
	for i := 0; i < bundleRuns; i++ {
		steps := []func() error{
			func() error {
				model := fmt.Sprintf("bundle%d", i)
				d, err := deployBundleOnce(model, path)
				if err != nil {
					return err
				}
				bundles = append(bundles, d)
				_, err = juju("destroy-model", model, "--no-prompt", "--force", "--no-wait")
				return err
			},
			func() error {
				model := fmt.Sprintf("commands%d", i)
				d, err := deployCommandsOnce(model)
				if err != nil {
					return err
				}
				commands = append(commands, d)
				_, err = juju("destroy-model", model, "--no-prompt", "--force", "--no-wait")
				return err
			},
		}
		if i%2 == 1 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		notes = append(notes, fmt.Sprintf("Bundle run %d: the bundle %s, one command at a time %s (%s first).",
			i+1, fmtDur(bundles[i]), fmtDur(commands[i]), map[bool]string{true: "commands", false: "bundle"}[i%2 == 1]))
	}
	b, c := mid(bundles), mid(commands)
	n := len(bundleApps) * bundleUnits
	rows = append(rows,
		row{what: fmt.Sprintf("bundle of %d applications × %d units, %d relations: one deploy until all %d units active, charms with a start hook only (%d runs)", len(bundleApps), bundleUnits, len(bundleRelations), n, bundleRuns),
			budget: "≤ one command at a time", median: b, ratio: fmt.Sprintf("%.2f× the commands", float64(b)/float64(c))},
		row{what: fmt.Sprintf("the same, one command at a time (%d deploy -n %d, %d integrate) until all active", len(bundleApps), bundleUnits, len(bundleRelations)), median: c})
	notes = append(notes, "Bundle: the sample charms' metadata with one hook, start, setting the workload active (3 mysql, 4 wordpress, "+
		"3 haproxy applications; each wordpress related to a database, three behind a haproxy: the relations are made, their units enter "+
		"scope, no relation hook exists to run), default-base ubuntu@22.04, each run on a fresh model removed afterwards (destroy-model --force --no-wait, not timed). The bundle's client "+
		"validates the bundle and its charms, describes the model once, then uploads each charm once, deploys each application and adds "+
		"each application's units in one call; the commands start a process and a connection per step and upload a charm per deploy.")
	return nil
}

// measureBundleAlone runs the bundle figure on a controller of its own (make bench -only bundle).
func measureBundleAlone() error {
	if _, err := juju("bootstrap"); err != nil {
		return err
	}
	defer killController()
	return measureBundle()
}
