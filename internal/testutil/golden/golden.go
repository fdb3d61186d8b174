// Package golden compares test output with files under testdata/golden/ at the module root.
package golden

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const refreshHint = "refresh with UPDATE_GOLDEN=1 go test ./..."

// maxDiffLines bounds how many differing lines a failure prints.
const maxDiffLines = 10

// Assert fails t unless got equals testdata/golden/<name>, both normalised (CRLF→LF, trailing spaces
// trimmed per line). With UPDATE_GOLDEN=1 in the environment it writes the file instead.
func Assert(t testing.TB, got, name string) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
		return
	}
	path := filepath.Join(root, "testdata", "golden", filepath.FromSlash(name))
	got = normalize(got)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden %s: %v", name, err)
			return
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("golden %s: %v", name, err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v\n%s", name, err, refreshHint)
		return
	}
	if want := normalize(string(b)); got != want {
		t.Errorf("output differs from testdata/golden/%s:\n%s%s", name, Diff(want, got), refreshHint)
	}
}

// Diff describes how got differs from want line by line: the first maxDiffLines differing lines,
// each with its 1-based line number. It returns "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var sb strings.Builder
	if len(wl) != len(gl) {
		fmt.Fprintf(&sb, "want %d lines, got %d\n", len(wl), len(gl))
	}
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < maxDiffLines; i++ {
		w, wok := line(wl, i)
		g, gok := line(gl, i)
		if w == g && wok == gok {
			continue
		}
		shown++
		fmt.Fprintf(&sb, "line %d:\n", i+1)
		if wok {
			fmt.Fprintf(&sb, "  want: %q\n", w)
		} else {
			sb.WriteString("  want: (no line)\n")
		}
		if gok {
			fmt.Fprintf(&sb, "  got:  %q\n", g)
		} else {
			sb.WriteString("  got:  (no line)\n")
		}
	}
	return sb.String()
}

func line(lines []string, i int) (string, bool) {
	if i < len(lines) {
		return lines[i], true
	}
	return "", false
}

func normalize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
