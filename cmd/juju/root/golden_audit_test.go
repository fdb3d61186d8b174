package root

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withoutGolden are the commands that have no golden file, and why. Every other command needs
// golden files by the rule in contract_helpers_test.go: one per --format value, or at least one
// for a command without --format.
var withoutGolden = map[string]string{
	"set-constraints":       "prints nothing on success (application/constraints_test.go checks the call)",
	"set-model-constraints": "prints nothing on success (model/constraints_test.go checks the call)",
	"bootstrap":             "prints nothing on stdout; root/e2e_test.go asserts its exact stderr",
	"kill-controller":       "prints nothing on stdout; root/e2e_test.go asserts its exact stderr",
	"add-unit":              "prints nothing on stdout; application/addunit_test.go asserts its exact stderr",
	"add-machine":           "prints nothing on stdout; machine/add_test.go asserts its exact stderr",
	"completion":            "prints a shell script; completion/ tests it in real shells",
}

// TestGoldenFilesCoverEveryCommandAndFormat fails when a command of the live tree lacks a golden
// file for a value its --format accepts, or lacks any golden file and is not in withoutGolden.
func TestGoldenFilesCoverEveryCommandAndFormat(t *testing.T) {
	root := moduleRoot(t)
	seen := map[string]bool{}
	for _, c := range liveCommands(t) {
		seen[c.Name] = true
		files := goldenFiles(t, root, c.Name)
		dir := filepath.ToSlash(strings.TrimPrefix(goldenDirs(root, c.Name)[0], root+string(filepath.Separator)))
		if reason, ok := withoutGolden[c.Name]; ok {
			if len(files) > 0 {
				t.Errorf("juju %s has golden files now: remove it from withoutGolden (%s)", c.Name, reason)
			}
			if len(c.Formats) > 0 {
				t.Errorf("juju %s takes --format %s: it needs a golden file per format, not an entry in withoutGolden",
					c.Name, strings.Join(c.Formats, "|"))
			}
			continue
		}
		if len(c.Formats) == 0 {
			if len(files) == 0 {
				t.Errorf("juju %s has no golden file: add a golden test writing %s/<case>.stdout.golden "+
					"(or .stderr.golden), or say why not in withoutGolden", c.Name, dir)
			}
			continue
		}
		have := map[string]bool{}
		for _, f := range files {
			have[goldenFormat(filepath.Base(f))] = true
		}
		for _, format := range c.Formats {
			if !have[format] {
				t.Errorf("juju %s --format %s has no golden file: add %s/<case>.%s.golden", c.Name, format, dir, format)
			}
		}
	}
	for name := range withoutGolden {
		if !seen[name] {
			t.Errorf("withoutGolden names %q, which is not a command of the tree", name)
		}
	}
}

func TestGoldenFormatNamingRule(t *testing.T) {
	for name, want := range map[string]string{
		"full.json.golden":               "json",
		"one-app.tabular.golden":         "tabular",
		"set.constraints.golden":         "constraints",
		"all-json.stdout.golden":         "json",
		"all.yaml.stdout.golden":         "yaml",
		"dry-run.stderr.golden":          "",
		"failure.stdout.golden":          "",
		"ambiguous.error.golden":         "",
		"call-error.stderr.golden":       "",
		"dying-relations.oneline.golden": "oneline",
	} {
		if got := goldenFormat(name); got != want {
			t.Errorf("goldenFormat(%q) = %q, want %q", name, got, want)
		}
	}
	// Every command that takes --format lists its values the same way.
	for _, c := range liveCommands(t) {
		if c.Formats != nil && !slices.IsSorted(c.Formats) {
			t.Errorf("juju %s formats %v", c.Name, c.Formats)
		}
	}
}
