package application

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// execute runs cmd with the space-separated args, discarding cobra's own output.
func execute(cmd *cobra.Command, args string) error {
	cmd.SetArgs(strings.Fields(args))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

// checkErr fails unless err is nil and want is "", or err's message is want; usage says whether
// it must be a *cmdutil.FlagError.
func checkErr(t *testing.T, err error, want string, usage bool) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	var fe *cmdutil.FlagError
	if usage != errors.As(err, &fe) {
		t.Errorf("usage error = %v, want %v", !usage, usage)
	}
}

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

// writeCharm makes a charm directory dir/name with a hook, a .git directory and a build/
// directory; bases go to manifest.yaml.
func writeCharm(t *testing.T, dir, name string, subordinate bool, bases ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	meta := "name: " + name + "\nsummary: test charm\ndescription: test charm\n"
	if subordinate {
		meta += "subordinate: true\nrequires:\n  juju-info:\n    interface: juju-info\n    scope: container\n"
	} else {
		meta += "provides:\n  website: http\nrequires:\n  db: mysql\npeers:\n  cluster: " + name + "-peers\n"
	}
	manifest := "bases:\n"
	for _, b := range bases {
		os, channel, _ := strings.Cut(b, "@")
		manifest += "  - name: " + os + "\n    channel: \"" + channel + "\"\n    architectures: [amd64]\n"
	}
	files := map[string]string{
		"metadata.yaml": meta,
		"manifest.yaml": manifest,
		"hooks/install": "#!/bin/sh\necho installed\n",
		".git/HEAD":     "ref: refs/heads/main\n",
		"build/junk":    "junk\n",
	}
	for rel, content := range files {
		p := filepath.Join(path, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "hooks/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
