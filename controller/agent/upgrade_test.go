package agent

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func zipFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		h := &zip.FileHeader{Name: name}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The new charm replaces the old one whole (a hook the new charm lacks is gone); a bad archive
// leaves the old one as it was; a swap cut short between its renames is undone and redone.
func TestReplaceCharmDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charm")
	v1 := zipFiles(t, map[string]string{"metadata.yaml": "name: x\n", "hooks/install": "#!/bin/sh\n", "hooks/stop": "#!/bin/sh\n"})
	v2 := zipFiles(t, map[string]string{"metadata.yaml": "name: x\n", "hooks/install": "#!/bin/sh\n", "hooks/upgrade-charm": "#!/bin/sh\n"})
	if err := unpackCharm(v1, dir); err != nil {
		t.Fatal(err)
	}
	// What the charm wrote while running (ops: .unit-state.db) stays across the upgrade.
	_ = os.MkdirAll(filepath.Join(dir, ".state"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, ".state", "notes"), []byte("kept"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, ".unit-state.db"), []byte("kept"), 0o600)
	if err := replaceCharmDir(v2, v1, dir); err != nil {
		t.Fatal(err)
	}
	exists := func(rel string) bool { _, err := os.Stat(filepath.Join(dir, rel)); return err == nil }
	if !exists("hooks/upgrade-charm") || exists("hooks/stop") {
		t.Errorf("after the swap: upgrade-charm %v, stop %v", exists("hooks/upgrade-charm"), exists("hooks/stop"))
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".state", "notes")); err != nil || string(data) != "kept" || !exists(".unit-state.db") {
		t.Errorf("the charm's own files were lost: %q %v", data, err)
	}
	for _, leftover := range []string{dir + ".next", dir + ".old"} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("%s left behind", leftover)
		}
	}

	if err := replaceCharmDir([]byte("not a zip"), v2, dir); err == nil {
		t.Fatal("a bad archive was put in place")
	}
	if !exists("hooks/upgrade-charm") {
		t.Error("a bad archive damaged the charm in place")
	}

	// Cut short: the charm moved aside, the new one not yet in place.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := replaceCharmDir(v1, v2, dir); err != nil {
		t.Fatal(err)
	}
	if !exists("hooks/stop") || exists("hooks/upgrade-charm") || !exists(".state/notes") {
		t.Error("the interrupted swap was not finished")
	}
}

// A new unit's record starts with the charm its deployer unpacked (named in its agent.conf);
// once the unit has a record, the record says.
func TestRecordStartsWithDeployedCharm(t *testing.T) {
	dir := t.TempDir()
	if err := WriteConf(dir, Conf{Tag: "unit-x-0", ID: "x/0", Charm: "local:x-1"}); err != nil {
		t.Fatal(err)
	}
	conf, err := ReadConf(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := readUnitRecord(dir, conf)
	if err != nil || st.CharmURL != "local:x-1" {
		t.Fatalf("record: %+v %v", st, err)
	}
	st.CharmURL = "local:x-2" // upgraded
	if err := st.write(dir); err != nil {
		t.Fatal(err)
	}
	if st, err = readUnitRecord(dir, conf); err != nil || st.CharmURL != "local:x-2" {
		t.Fatalf("record after an upgrade: %+v %v", st, err)
	}
}

// charm_modified_version: a version that grows with the same charm (a resource attached) runs
// upgrade-charm and config-changed again; a unit installed after refreshes records the version
// it was installed at and owes no upgrade-charm.
func TestUpgradeCharmOnVersionBump(t *testing.T) {
	st := fresh()
	s := unitSnapshot("alive")
	s.app.CharmUrl, s.unit.CharmUrl, st.CharmURL = "local:wordpress-1", "local:wordpress-1", "local:wordpress-1"
	expectSteps(t, drive(t, st, s), "install", "config-changed", "start")
	s.app.CharmModifiedVersion = 1
	expectSteps(t, drive(t, st, s), "upgrade local:wordpress-1", "upgrade-charm", "config-changed")
	expectSteps(t, drive(t, st, s))
	if st.CharmModifiedVersion != 1 || st.UpgradeCharm {
		t.Errorf("record: version %d, upgrade-charm owed %v", st.CharmModifiedVersion, st.UpgradeCharm)
	}

	// Deployed after three refreshes: the install is of the current charm.
	st = fresh()
	s = unitSnapshot("alive")
	s.app.CharmUrl, s.unit.CharmUrl, st.CharmURL = "local:wordpress-4", "local:wordpress-4", "local:wordpress-4"
	s.app.CharmModifiedVersion = 3
	expectSteps(t, drive(t, st, s), "install", "config-changed", "start")
	if st.CharmModifiedVersion != 3 {
		t.Errorf("installed at version %d, want 3", st.CharmModifiedVersion)
	}
}

// charmChanged is what a unit in error checks under refresh --force-units (Juju's
// charmModified): another charm, a charm not yet reported, or another version.
func TestCharmChanged(t *testing.T) {
	for _, tt := range []struct {
		name                        string
		want, reported, inPlace     string
		appVersion, recordedVersion int64
		changed                     bool
	}{
		{name: "up to date", want: "local:x-2", reported: "local:x-2", inPlace: "local:x-2", appVersion: 1, recordedVersion: 1},
		{name: "new charm", want: "local:x-3", reported: "local:x-2", inPlace: "local:x-2", appVersion: 2, recordedVersion: 1, changed: true},
		{name: "swapped, not reported", want: "local:x-3", reported: "local:x-2", inPlace: "local:x-3", appVersion: 2, recordedVersion: 2, changed: true},
		{name: "same charm, new version", want: "local:x-2", reported: "local:x-2", inPlace: "local:x-2", appVersion: 2, recordedVersion: 1, changed: true},
		{name: "record from before upgrades", want: "local:x-2", reported: "local:x-2", changed: false},
		{name: "no charm known", want: "", reported: "local:x-2", inPlace: "local:x-2", appVersion: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := fresh()
			st.CharmURL, st.CharmModifiedVersion = tt.inPlace, tt.recordedVersion
			s := unitSnapshot("alive")
			s.app.CharmUrl, s.app.CharmModifiedVersion, s.unit.CharmUrl = tt.want, tt.appVersion, tt.reported
			if got := charmChanged(st, s); got != tt.changed {
				t.Errorf("charmChanged = %v, want %v", got, tt.changed)
			}
		})
	}
}
