package main

// The ops charm figures: hooks run by charms written with ops (a Python process per hook)
// against the shell sample charms in the same shape and the same run, and the deploy of a
// 20 MB .charm archive against cp of the same file.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jujuclone/juju/internal/charmpack"
)

const (
	opsRuns  = 3
	opsUnits = 20
	// bigCharmSize is the incompressible payload of the big .charm.
	bigCharmSize = 20 << 20
)

// measureOps adds the ops rows on the running controller, or a note saying why they are
// missing when this machine cannot run ops charms.
func measureOps() error {
	opsDir, why := findOps()
	if why != "" {
		notes = append(notes, "Ops charms: not measured: "+why+".")
		return nil
	}
	dir, err := os.MkdirTemp("", "bench-opscharms-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pack := func(src, name string) (string, error) {
		file := filepath.Join(dir, name+"_"+charmpack.HostArch()+".charm")
		return file, charmpack.Pack(src, opsDir, file)
	}
	kvstore, err := pack(filepath.Join(root, "testdata", "opscharms", "kvstore"), "kvstore")
	if err != nil {
		return err
	}
	kvclient, err := pack(filepath.Join(root, "testdata", "opscharms", "kvclient"), "kvclient")
	if err != nil {
		return err
	}
	if err := measureOpsHooks(kvstore, kvclient); err != nil {
		return err
	}
	return measureBigCharm(dir, pack)
}

// findOps is ops's directory ($JUJU_THIRDPARTY or ../shared/thirdparty), or why ops charms
// cannot run here.
func findOps() (string, string) {
	thirdparty := os.Getenv("JUJU_THIRDPARTY")
	if thirdparty == "" {
		thirdparty = filepath.Join(root, "..", "shared", "thirdparty")
	}
	opsDir := filepath.Join(thirdparty, "ops-2.20.0", "ops")
	if _, err := os.Stat(filepath.Join(opsDir, "__init__.py")); err != nil {
		return "", "ops 2.20.0 not found at " + opsDir + " (set JUJU_THIRDPARTY)"
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").Run(); err != nil {
		return "", "/usr/bin/python3 cannot import yaml and websocket (Debian python3-yaml python3-websocket)"
	}
	return opsDir, ""
}

// measureOpsHooks: the same shape twice per run, a provider with one unit and 20 consumers
// integrated, deployed until every unit is active: kvstore + kvclient (ops) and mysql +
// wordpress (POSIX sh), alternating so that both see the same machine state.
func measureOpsHooks(kvstore, kvclient string) error {
	type sample struct {
		took  time.Duration
		hooks int
	}
	shape := func(model string, steps [][]string) (sample, error) {
		if _, err := juju("add-model", model); err != nil {
			return sample{}, err
		}
		start := time.Now()
		for _, args := range steps {
			if _, err := juju(append(args, "-m", model)...); err != nil {
				return sample{}, err
			}
		}
		if err := waitActive(model, opsUnits+1, 300*time.Second); err != nil {
			return sample{}, err
		}
		took := time.Since(start)
		hooks, err := countHooks(model)
		return sample{took, hooks}, err
	}
	n := fmt.Sprint(opsUnits)
	var opsTook, shTook []time.Duration
	var opsRates, shRates []float64
	for i := 0; i < opsRuns; i++ {
		o, err := shape(fmt.Sprintf("ops%d", i), [][]string{
			{"deploy", kvstore}, {"deploy", kvclient, "-n", n}, {"integrate", "kvclient", "kvstore"},
		})
		if err != nil {
			return err
		}
		s, err := shape(fmt.Sprintf("sh%d", i), [][]string{
			{"deploy", "./testdata/charms/mysql"}, {"deploy", "./testdata/charms/wordpress", "-n", n}, {"integrate", "wordpress", "mysql"},
		})
		if err != nil {
			return err
		}
		opsTook, shTook = append(opsTook, o.took), append(shTook, s.took)
		opsRates = append(opsRates, float64(o.hooks)/o.took.Seconds())
		shRates = append(shRates, float64(s.hooks)/s.took.Seconds())
		notes = append(notes, fmt.Sprintf("Ops charms run %d: kvstore + kvclient -n %d active after %s, %d hooks (%.1f/s); "+
			"mysql + wordpress -n %d active after %s, %d hooks (%.1f/s).",
			i+1, opsUnits, fmtDur(o.took), o.hooks, opsRates[i], opsUnits, fmtDur(s.took), s.hooks, shRates[i]))
	}
	o, s := mid(opsTook), mid(shTook)
	opsRate, shRate := midFloat(opsRates), midFloat(shRates)
	rows = append(rows,
		row{what: fmt.Sprintf("ops charms: kvstore + kvclient -n %d integrated, deploy until all active (%d runs; baseline: mysql + wordpress -n %d, shell hooks, same run)", opsUnits, opsRuns, opsUnits),
			median: o, ratio: fmt.Sprintf("%s (shell %s)", ratio(o, s), fmtDur(s))},
		row{what: "ops hooks run per second during it (baseline: shell hooks per second, same run)",
			value: fmt.Sprintf("%.1f/s", opsRate), ratio: fmt.Sprintf("%.2f× (shell %.1f/s)", opsRate/shRate, shRate)})
	notes = append(notes, "Ops charms: both shapes are one provider unit and 20 consumer units integrated, from the first deploy until "+
		"every unit's workload is active; kvclient is active once kvstore's leader has put its token in the relation's application data. "+
		"Every ops hook is a Python process (the charm's dispatch runs src/charm.py, which imports ops and calls the hook tools); "+
		"every shell hook is a POSIX sh script. Hooks are counted from the model log, as for the charms row.")
	return nil
}

// measureBigCharm: deploy -n 1 of a .charm carrying 20 MB of incompressible data until the unit
// is idle, against cp of the same file and against the same charm without the data.
func measureBigCharm(dir string, pack func(src, name string) (string, error)) error {
	src := filepath.Join(dir, "src-big")
	files := map[string]string{
		"charmcraft.yaml": "name: bigcharm\ntype: charm\nsummary: A charm with a large payload.\ndescription: For the deploy benchmark.\n" +
			"base: ubuntu@24.04\nplatforms:\n  amd64:\n  arm64:\nparts:\n  charm:\n    plugin: charm\n",
		"src/charm.py": "#!/usr/bin/env python3\n\"\"\"Does nothing but go active.\"\"\"\n\nimport ops\n\n\n" +
			"class BigCharm(ops.CharmBase):\n    def __init__(self, framework: ops.Framework):\n        super().__init__(framework)\n" +
			"        framework.observe(self.on.start, self._on_start)\n\n    def _on_start(self, _event: ops.StartEvent):\n" +
			"        self.unit.status = ops.ActiveStatus()\n\n\nif __name__ == '__main__':\n    ops.main(BigCharm)\n",
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			return err
		}
	}
	small, err := pack(src, "bigcharm-small")
	if err != nil {
		return err
	}
	// A fixed seed: the same bytes every run, which deflate cannot shrink.
	payload := make([]byte, bigCharmSize)
	rng := rand.NewChaCha8([32]byte{1})
	if _, err := rng.Read(payload); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "src", "payload.bin"), payload, 0o644); err != nil {
		return err
	}
	big, err := pack(src, "bigcharm")
	if err != nil {
		return err
	}
	bigSize, smallSize := fileSize(big), fileSize(small)

	copyTo := filepath.Join(dir, "copy.charm")
	cp := median(opsRuns*3, func() error { return exec.Command("cp", big, copyTo).Run() })

	deploy := func(file, model string) (call, idle time.Duration, err error) {
		if _, err := juju("add-model", model); err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if _, err := juju("deploy", file, "-m", model); err != nil {
			return 0, 0, err
		}
		call = time.Since(start)
		if err := waitIdle(model, 1, 120*time.Second); err != nil {
			return 0, 0, err
		}
		return call, time.Since(start), nil
	}
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	rows = append(rows, row{what: fmt.Sprintf("baseline: cp of a %s .charm", mb(bigSize)), median: cp})
	var bigCalls, bigIdles, smallIdles []time.Duration
	for i := 0; i < opsRuns; i++ {
		call, idle, err := deploy(big, fmt.Sprintf("big%d", i))
		if err != nil {
			// A deploy the controller refuses is a result, not a reason to lose the other rows.
			rows = append(rows, row{what: fmt.Sprintf("deploy of that %s .charm -n 1 until the unit is idle", mb(bigSize)), value: "fails"})
			notes = append(notes, fmt.Sprintf("Big charm: the deploy of the %s .charm failed: %v", mb(bigSize), err))
			return nil
		}
		bigCalls, bigIdles = append(bigCalls, call), append(bigIdles, idle)
		if _, idle, err = deploy(small, fmt.Sprintf("small%d", i)); err != nil {
			return err
		}
		smallIdles = append(smallIdles, idle)
	}
	bi, bc, si := mid(bigIdles), mid(bigCalls), mid(smallIdles)
	rows = append(rows,
		row{what: fmt.Sprintf("deploy of that %s .charm -n 1 until the unit is idle (%d runs)", mb(bigSize), opsRuns), median: bi, ratio: ratio(bi, cp)},
		row{what: "its juju deploy call alone (reads, checks and uploads the archive)", median: bc, ratio: ratio(bc, cp)},
		row{what: fmt.Sprintf("the same charm without the 20 MB (%s .charm), deploy until idle", mb(smallSize)), median: si, ratio: ratio(si, cp)})
	notes = append(notes, fmt.Sprintf("Big charm: a minimal ops charm (start sets active) packed with 20 MiB of incompressible data "+
		"(ChaCha8, fixed seed) in src/payload.bin, %s as a .charm; deployed %d times in fresh models from the first CLI call until "+
		"`juju status` shows the unit idle (upload to the controller, unpacking by the unit agent, install/config-changed/start "+
		"in Python). The ratios are against cp of the same file (page cache warm), measured in the same run; the small charm "+
		"(%s) shows what is not the 20 MB.", mb(bigSize), opsRuns, mb(smallSize)))
	return nil
}

// measureOpsAlone runs the ops figures on a controller of their own (make bench -only ops).
func measureOpsAlone() error {
	if _, err := juju("bootstrap"); err != nil {
		return err
	}
	defer killController()
	return measureOps()
}
