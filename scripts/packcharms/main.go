// Command packcharms packs the ops charms the tests and benchmarks deploy, as `charmcraft pack`
// would: every charm under testdata/opscharms/ and jubilant's two test charms (testdb, testapp)
// into bin/charms/<name>_<arch>.charm, with ops from the third-party folder. Run it from the
// project's root (`make charms`).
//
// The third-party folder is $JUJU_THIRDPARTY, else ../shared/thirdparty beside the project.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/jujuclone/juju/internal/charmpack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ERROR", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	thirdparty := os.Getenv("JUJU_THIRDPARTY")
	if thirdparty == "" {
		thirdparty = filepath.Join(root, "..", "shared", "thirdparty")
	}
	if _, err := os.Stat(thirdparty); err != nil {
		return fmt.Errorf("cannot pack charms: third-party folder %s not found (set JUJU_THIRDPARTY to where ops-2.20.0 and jubilant-test-charms are)", thirdparty)
	}
	opsDir := filepath.Join(thirdparty, "ops-2.20.0", "ops")
	if _, err := os.Stat(filepath.Join(opsDir, "__init__.py")); err != nil {
		return fmt.Errorf("cannot pack charms: ops 2.20.0 not found at %s", opsDir)
	}

	var sources []string
	own, err := os.ReadDir(filepath.Join(root, "testdata", "opscharms"))
	if err != nil {
		return fmt.Errorf("cannot pack charms: %w", err)
	}
	for _, d := range own {
		if d.IsDir() {
			sources = append(sources, filepath.Join(root, "testdata", "opscharms", d.Name()))
		}
	}
	sort.Strings(sources)
	for _, name := range []string{"testdb", "testapp"} {
		dir := filepath.Join(thirdparty, "jubilant-test-charms", name)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot pack charms: jubilant's %s charm not found at %s", name, dir)
		}
		sources = append(sources, dir)
	}

	out := filepath.Join(root, "bin", "charms")
	for _, src := range sources {
		name, err := charmpack.Name(src)
		if err != nil {
			return err
		}
		file := filepath.Join(out, name+"_"+charmpack.HostArch()+".charm")
		if err := charmpack.Pack(src, opsDir, file); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, file)
		fmt.Println(rel)
	}
	return nil
}
