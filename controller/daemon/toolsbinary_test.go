package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestToolsBinaryPrefersJujucBesideJujud(t *testing.T) {
	dir := t.TempDir()
	jujud := filepath.Join(dir, "jujud")
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))

	// Without jujuc, jujud itself answers to the tools' names, and says it will be slower.
	if got := toolsBinary(jujud, log); got != jujud {
		t.Errorf("without jujuc: %q, want %q", got, jujud)
	}
	if !strings.Contains(logged.String(), "no jujuc beside jujud") {
		t.Errorf("no warning logged: %q", logged.String())
	}

	// A jujuc that cannot run is not used.
	jujuc := filepath.Join(dir, "jujuc")
	if err := os.WriteFile(jujuc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := toolsBinary(jujud, log); got != jujud {
		t.Errorf("with a jujuc that is not executable: %q, want %q", got, jujud)
	}

	if err := os.Chmod(jujuc, 0o755); err != nil {
		t.Fatal(err)
	}
	logged.Reset()
	if got := toolsBinary(jujud, log); got != jujuc {
		t.Errorf("with jujuc: %q, want %q", got, jujuc)
	}
	if logged.Len() != 0 {
		t.Errorf("logged with jujuc present: %q", logged.String())
	}
}
