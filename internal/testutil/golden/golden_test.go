package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTB records failures instead of failing the real test.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}
func (f *fakeTB) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

func TestAssertRoundTrip(t *testing.T) {
	root := fakeModule(t)
	name := "sub/table.golden"

	t.Setenv("UPDATE_GOLDEN", "1")
	Assert(t, "a  b   \r\nc\n", name)
	b, err := os.ReadFile(filepath.Join(root, "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "a  b\nc\n" {
		t.Fatalf("written golden = %q, want normalised %q", b, "a  b\nc\n")
	}

	t.Setenv("UPDATE_GOLDEN", "")
	Assert(t, "a  b\r\nc  \n", name) // equal after normalising

	f := &fakeTB{TB: t}
	Assert(f, "a  x\nc\nd\n", name)
	if !f.failed {
		t.Fatal("mismatch did not fail")
	}
	for _, want := range []string{"line 1:", `want: "a  b"`, `got:  "a  x"`, "line 3:", "want 3 lines, got 4", "UPDATE_GOLDEN=1 go test ./..."} {
		if !strings.Contains(f.msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, f.msg)
		}
	}
}

// fakeModule makes a module root in a temporary directory and moves into a package dir below it.
func fakeModule(t *testing.T) string {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "cmd", "x")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	return root
}

func TestAssertMissingFile(t *testing.T) {
	fakeModule(t)
	f := &fakeTB{TB: t}
	Assert(f, "x", "does-not-exist.golden")
	if !f.failed || !strings.Contains(f.msg, "UPDATE_GOLDEN=1") {
		t.Fatalf("missing golden: failed=%v msg=%q", f.failed, f.msg)
	}
}

func TestDiffEqual(t *testing.T) {
	if d := Diff("a\nb", "a\nb"); d != "" {
		t.Fatalf("Diff of equal strings = %q", d)
	}
}
