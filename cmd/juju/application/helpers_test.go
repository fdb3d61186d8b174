package application

import (
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"

	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

func testModel(context.Context) (*cmdutil.ModelRef, error) {
	return &cmdutil.ModelRef{Controller: "local", Name: "default", UUID: "uuid-default", Owner: "admin"}, nil
}

// writeCharm makes a charm directory dir/name with a hook, config.yaml (options title, posts
// and public), a .git directory and a build/ directory; bases go to manifest.yaml.
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
		"config.yaml":   "options:\n  title: {type: string}\n  posts: {type: int, default: 5}\n  public: {type: boolean}\n",
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

// Shared helpers, under the short names these tests use.
var (
	execute  = cmdtest.Execute
	checkErr = cmdtest.CheckErr
)
