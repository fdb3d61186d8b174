package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A deployer lists its units' directories from the disk once, and recalls those no longer
// assigned; after that it goes by what it made and removed itself (issue 16: no listing per
// pass), so a directory someone else puts there later is left alone.
func TestDeployerListsItsUnitDirectoriesOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "units")
	mkdir := func(name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	mkdir("unit-wordpress-0") // an earlier agent's, no longer assigned
	mkdir("other")
	d := &deployer{runner: testRunner(t, RunnerConfig{FDReserve: -1}), root: root}
	if err := d.reconcile(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if exists("unit-wordpress-0") || !exists("other") {
		t.Fatalf("after the first pass: unit-wordpress-0 there %v (want gone), other there %v (want kept)", exists("unit-wordpress-0"), exists("other"))
	}

	// What deploy does for a unit it deploys, then the unit is no longer assigned.
	d.local[unitDirName("wordpress/1")] = true
	mkdir("unit-wordpress-1")
	mkdir("unit-wordpress-2") // not this deployer's doing
	if err := d.reconcile(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if exists("unit-wordpress-1") {
		t.Error("the unit it deployed, no longer assigned, was not recalled")
	}
	if !exists("unit-wordpress-2") {
		t.Error("a later pass listed the directory again")
	}
	if len(d.local) != 0 {
		t.Errorf("the deployer still counts %v as its units' directories", d.local)
	}
}
