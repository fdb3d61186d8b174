package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docBlock is one fenced block of README.md or docs/*.md.
type docBlock struct {
	file string // relative to the project root
	line int    // of the opening fence
	lang string
	body string
}

func (b docBlock) String() string { return b.file + ":" + strconv.Itoa(b.line) }

// readDocBlocks returns every fenced block of the project's documents, fences indented in
// lists included.
func readDocBlocks(t *testing.T, root string) []docBlock {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var blocks []docBlock
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		sc := bufio.NewScanner(f)
		var cur *docBlock
		var indent string
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			trimmed := strings.TrimLeft(line, " ")
			switch {
			case cur == nil && strings.HasPrefix(trimmed, "```"):
				cur = &docBlock{file: rel, line: n, lang: strings.TrimPrefix(trimmed, "```")}
				indent = line[:len(line)-len(trimmed)]
			case cur != nil && trimmed == "```":
				blocks = append(blocks, *cur)
				cur = nil
			case cur != nil:
				cur.body += strings.TrimPrefix(line, indent) + "\n"
			}
		}
		f.Close()
		if cur != nil {
			t.Errorf("%s: fence opened at line %d never closes", rel, cur.line)
		}
	}
	return blocks
}

// docExempt says why a block is not run: pictures; the two set-up commands (`make test` is
// this very suite; `make demo` bootstraps the controller the demo leaves running for the
// user); and the lines that install completion into each shell's own places, whose scripts
// completion/shell_test.go drives in real bash and zsh.
func docExempt(b docBlock) string {
	switch {
	case b.lang == "yaml" && strings.HasPrefix(b.body, "default-base:"):
		return "export-bundle's output, checked against the command by TestExportBundleRoundTrip"
	case strings.ContainsAny(b.body, "─│▶┌└"), strings.HasPrefix(b.body, "cmd/juju "):
		return "a diagram"
	case strings.HasPrefix(b.body, "make demo"):
		return "the set-up commands"
	case strings.HasPrefix(b.body, "# bash (needs the bash-completion package"):
		return "per-shell completion install lines"
	}
	return ""
}

// docSetups prepares the model a shell example expects, by the example's first line; an
// example with no entry here fails the test, so that no new example goes unrun.
var docSetups = map[string][]string{
	// docs/bundles.md: a fresh controller; the sample bundle and its overlay.
	"juju deploy ./testdata/bundles/blog.yaml --overlay ./testdata/bundles/blog-overlay.yaml --dry-run": {"bootstrap"},
	// README: by hand, and real charms: each bootstraps and kills its own controller.
	"make build":  nil,
	"make charms": nil,
	// docs/scripting.md: a model with mysql and wordpress.
	"# wait until mysql is active, then read the leader's address": {"bootstrap", "deploy mysql", "deploy wordpress", "integrate wordpress mysql"},
	// docs/lifecycle.md: a fresh controller.
	"juju deploy --constraints mem=2G wordpress": {"bootstrap"},
	// docs/ha.md: a fresh controller made highly available, a member killed and replaced.
	`juju enable-ha                        # three members: "maintaining members: 0", "adding members: 1, 2"`: {"bootstrap"},
	// docs/lifecycle.md: a grep of the sources, run in the project.
	"grep -rn 'L-U3\\|_LU3' --include=*.go .": nil,
}

// Every example in README.md and docs/ is held true by a test (issue 17): shell examples run
// as written, with the real binaries against the sample charms (make build and make charms
// stand for what the test already built and packed); JSON examples parse, and the one for
// `juju config` is exactly what the command prints.
func TestDocExamples(t *testing.T) {
	longJourney(t)
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readDocBlocks(t, root)
	if len(blocks) < 10 {
		t.Fatalf("found only %d fenced blocks", len(blocks))
	}
	for _, b := range blocks {
		if b.lang != "json" {
			continue
		}
		for i, doc := range jsonDocs(b.body) {
			if !json.Valid([]byte(doc)) {
				t.Errorf("%s: JSON example %d does not parse:\n%s", b, i+1, doc)
			}
		}
	}
	for _, b := range blocks {
		if b.lang == "json" || docExempt(b) != "" {
			continue
		}
		first, _, _ := strings.Cut(b.body, "\n")
		setup, known := docSetups[first]
		if !known {
			t.Errorf("%s: no test runs this example (starting %q): add its set-up to docSetups", b, first)
			continue
		}
		t.Run(strings.ReplaceAll(b.String(), "/", "_"), func(t *testing.T) {
			runDocExample(t, root, b, setup)
		})
	}
}

// jsonDocs splits a JSON block into its documents: one per line when every line is one,
// else the whole block.
func jsonDocs(body string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		if !json.Valid([]byte(l)) {
			return []string{body}
		}
		lines = append(lines, l)
	}
	return lines
}

// runDocExample runs a shell example in a copy of the project's layout: bin/ holds the built
// binaries (and bin/charms the packed ops charms), testdata/ is the project's, and bash runs
// the block with -e, so any failing line fails the example.
func runDocExample(t *testing.T, root string, b docBlock, setup []string) {
	e := build(t)
	dir := root
	first, _, _ := strings.Cut(b.body, "\n")
	if strings.HasPrefix(first, "make ") {
		dir = t.TempDir()
		bin := filepath.Join(dir, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"juju", "jujud", "jujuc"} {
			if err := os.Symlink(filepath.Join(e.bin, name), filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
			t.Fatal(err)
		}
		if first == "make charms" {
			packDocCharms(t, root, filepath.Join(bin, "charms"))
		}
	}
	for _, s := range setup {
		e.ok(strings.Fields(s)...)
	}
	if len(setup) > 0 {
		t.Cleanup(func() { e.juju("kill-controller", "local", "--no-prompt") })
	}
	if b.file == "docs/scripting.md" {
		checkConfigExample(t, e, root)
	}
	// make build and make charms: done above, by the test.
	script := "make() { case \"$1\" in build|charms) return 0;; esac; echo \"unexpected: make $*\" >&2; return 1; }\n" + b.body
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "JUJU_DATA="+e.data, "PATH="+e.bin+":"+os.Getenv("PATH"), "NO_COLOR=1",
		"JUJU_REPOSITORY="+filepath.Join(root, "testdata", "charms"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: the example fails: %v\n%s", b, err, out)
	}
	if strings.HasPrefix(first, "grep ") && len(strings.TrimSpace(string(out))) == 0 {
		t.Errorf("%s: the grep finds nothing", b)
	}
}

// checkConfigExample: the `juju config` example of docs/scripting.md is what the command
// prints for the sample wordpress with its title set.
func checkConfigExample(t *testing.T, e *env, root string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "scripting.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "### `juju config`")
	if !ok {
		t.Fatal("docs/scripting.md has no juju config section")
	}
	_, after, _ = strings.Cut(after, "```json\n")
	example, _, _ := strings.Cut(after, "\n```")
	e.ok("config", "wordpress", "blog-title=Our blog")
	if got := strings.TrimSpace(e.ok("config", "wordpress", "--format", "json").stdout); got != strings.TrimSpace(example) {
		t.Errorf("docs/scripting.md juju config example:\n%s\nbut juju config wordpress --format json prints:\n%s", example, got)
	}
}

// packDocCharms packs the project's ops charms into out as `make charms` does, or skips (fails
// under CI) when this machine cannot run them (see opsThirdparty).
func packDocCharms(t *testing.T, root, out string) {
	t.Helper()
	_, opsDir := opsThirdparty(t, root, false)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	sources, _ := filepath.Glob(filepath.Join(root, "testdata", "opscharms", "*"))
	packCharms(t, opsDir, sources, out)
}
