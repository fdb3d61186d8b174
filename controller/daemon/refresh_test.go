package daemon_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
)

// copyCharm copies a sample charm to a new directory and writes files over it (hooks
// executable).
func copyCharm(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	src := filepath.Join(charmsDir(), name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, body := range files {
		if err := os.WriteFile(filepath.Join(dst, rel), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func unitCharm(t *testing.T, c *client.Client, unit string) string {
	t.Helper()
	d, err := c.ShowUnit(context.Background(), "default", unit)
	if err != nil {
		t.Fatal(err)
	}
	return d.CharmUrl
}

// waitUnitLog waits until the unit's log (shipped in batches) has text.
func waitUnitLog(t *testing.T, c *client.Client, unit, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !logHas(t, c, unit, text) {
		if time.Now().After(deadline) {
			t.Fatalf("%s's log never said %q", unit, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// refresh --force-units, as Juju's uniter does it: a unit in error does not upgrade on a plain
// refresh (its log says the upgrade waits); forced, it puts the new charm in place at once and
// stays in error on its failed hook, which `juju resolved` runs again from the new charm, with
// the config set by the refresh. No upgrade-charm hook runs for an upgrade made in error.
func TestForcedUpgradeOfUnitInError(t *testing.T) {
	c, _, dir := startController(t)
	ctx := context.Background()
	deployWith(t, c, "mysql", "mysql", 1, map[string]string{"fail-hook": "start"}, "")
	waitFor(t, c, "default", "start failed", workload("mysql/0", "error", `hook failed: "start"`))
	v1 := unitCharm(t, c, "mysql/0")

	startV := func(v string) string {
		return "#!/bin/sh\nset -e\n. \"${0%/*}/../lib/common.sh\"\nstatus-set active \"started by " + v + "\"\n"
	}
	upgradeHook := "#!/bin/sh\nset -e\n. \"${0%/*}/../lib/common.sh\"\nstatus-set active upgraded\n"
	upload := func(v string) string {
		t.Helper()
		up, err := c.UploadCharm(ctx, "default", zipCharm(t, copyCharm(t, "mysql", map[string]string{
			"hooks/start": startV(v), "hooks/upgrade-charm": upgradeHook})))
		if err != nil {
			t.Fatal(err)
		}
		return up.Url
	}

	v2 := upload("v2")
	if _, err := c.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "mysql", CharmUrl: v2}); err != nil {
		t.Fatal(err)
	}
	waitUnitLog(t, c, "mysql/0", `awaiting error resolution for "start" hook: the upgrade to charm "`+v2+`" waits`)
	if got := unitCharm(t, c, "mysql/0"); got != v1 {
		t.Fatalf("a unit in error upgraded without --force-units: %s", got)
	}

	v3 := upload("v3")
	if _, err := c.SetCharm(ctx, &pb.SetCharmRequest{Model: "default", Application: "mysql", CharmUrl: v3,
		ForceUnits: true, Config: map[string]string{"fail-hook": ""}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for unitCharm(t, c, "mysql/0") != v3 {
		if time.Now().After(deadline) {
			t.Fatal("the unit in error did not upgrade with --force-units")
		}
		time.Sleep(50 * time.Millisecond)
	}
	fs := waitFor(t, c, "default", "still in error", workload("mysql/0", "error", `hook failed: "start"`))
	if u := findUnit(fs, "mysql/0"); u == nil {
		t.Fatal("no mysql/0")
	}
	waitUnitLog(t, c, "mysql/0", `upgrading charm to "`+v3+`" while in error (--force-units)`)

	res, err := c.ResolveUnitErrors(ctx, &pb.ResolveUnitErrorsRequest{Model: "default", Units: []string{"mysql/0"}, Retry: true})
	if err != nil || len(res) != 1 || res[0].Error != "" {
		t.Fatalf("resolved: %v %v", res, err)
	}
	waitFor(t, c, "default", "start retried from v3", workload("mysql/0", "active", "started by v3"))
	if log := hookLog(t, dir, "mysql/0"); slices.Contains(log, "upgrade-charm -") || strings.Count(strings.Join(log, "\n"), "start -") != 2 {
		t.Errorf("hooks: %v", log)
	}
}
