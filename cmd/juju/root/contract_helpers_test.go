package root

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// The scripting contract's tests (contract_doc_test.go, golden_audit_test.go,
// contract_e2e_test.go) discover commands from the live command tree, so that a command added
// to root.go is covered, or makes them fail until its rows are added, without anyone editing a
// list here first.

// liveCommand is one runnable command of the tree.
type liveCommand struct {
	// Name is the command path without "juju": "status", or "completion bash" for a
	// subcommand.
	Name string
	Cmd  *cobra.Command
	// Formats are the values --format accepts, sorted; nil when the command has no --format.
	Formats []string
}

// liveCommands walks the tree NewCmdRoot builds and returns every runnable, visible command.
func liveCommands(t *testing.T) []liveCommand {
	t.Helper()
	var out []liveCommand
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			if sub.Runnable() {
				name := strings.TrimPrefix(sub.CommandPath(), "juju ")
				out = append(out, liveCommand{Name: name, Cmd: sub, Formats: formatsOf(t, sub)})
			}
			walk(sub)
		}
	}
	walk(NewCmdRoot(cmdutil.TestFactory()))
	slices.SortFunc(out, func(a, b liveCommand) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// usageFormatsRe reads the allowed values from --format's usage: "Specify output format
// (json|tabular|yaml)".
var usageFormatsRe = regexp.MustCompile(`\(([a-z]+(?:\|[a-z]+)*)\)`)

// formatsOf returns the values c's --format accepts: what the flag completes to, else what its
// usage lists. A --format whose values cannot be found fails the test.
func formatsOf(t *testing.T, c *cobra.Command) []string {
	t.Helper()
	fl := c.Flags().Lookup("format")
	if fl == nil {
		return nil
	}
	var formats []string
	if complete, ok := c.GetFlagCompletionFunc("format"); ok {
		values, _ := complete(c, nil, "")
		for _, v := range values {
			v, _, _ = strings.Cut(v, "\t") // a completion may carry a description
			formats = append(formats, v)
		}
	}
	if len(formats) == 0 {
		if m := usageFormatsRe.FindStringSubmatch(fl.Usage); m != nil {
			formats = strings.Split(m[1], "|")
		}
	}
	if len(formats) == 0 {
		t.Fatalf("juju %s: cannot tell which values --format accepts (no completion, usage %q)", c.CommandPath(), fl.Usage)
	}
	slices.Sort(formats)
	return slices.Compact(formats)
}

// moduleRoot is the directory holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(errors.New("no go.mod above the working directory"))
		}
		dir = parent
	}
}

// The golden-file naming rule of the scripting contract. A command's golden files live in
// testdata/golden/<command>/ (a subcommand's spaces become "-": completion-bash), or in
// testdata/golden/<command>-command/; one rendered in format F is named
//
//	<case>.<F>.golden            e.g. status/full.json.golden, constraints/set.constraints.golden
//	<case>.<F>.stdout.golden     what the command wrote to stdout in format F
//	<case>-<F>.stdout.golden     the older spelling, e.g. config/all-json.stdout.golden
//
// Other files (<case>.stdout.golden, <case>.stderr.golden, <case>.error.golden ...) are a
// command's output without --format.
var goldenFormatRe = regexp.MustCompile(`^(.+?)(?:\.([a-z]+)(?:\.stdout)?|-([a-z]+)\.stdout)\.golden$`)

// goldenFormat returns the format a golden file's name says it holds, or "".
func goldenFormat(name string) string {
	m := goldenFormatRe.FindStringSubmatch(name)
	if m == nil {
		return ""
	}
	f := m[2] + m[3]
	if f == "stdout" || f == "stderr" || f == "error" {
		return ""
	}
	return f
}

// goldenDirs are the directories that hold command's golden files.
func goldenDirs(root, command string) []string {
	base := strings.ReplaceAll(command, " ", "-")
	return []string{
		filepath.Join(root, "testdata", "golden", base),
		filepath.Join(root, "testdata", "golden", base+"-command"),
	}
}

// goldenFiles lists command's golden files (full paths), sorted.
func goldenFiles(t *testing.T, root, command string) []string {
	t.Helper()
	var files []string
	for _, dir := range goldenDirs(root, command) {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".golden") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	slices.Sort(files)
	return files
}
