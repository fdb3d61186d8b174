package root

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// adviceRe finds the commands a message or a help text tells the user to run: quoted ("juju
// bootstrap", `juju add-unit <app> --to 3`) or an example line ("  juju add-machine -n 2").
var adviceRe = regexp.MustCompile("(?m)(?:^\\s+|[\"`'])juju ([a-z][a-z-]*)")

// TestAdviceNamesCommandsThatExist holds every "juju <command>" that an error or a help text
// advises to a command of this tree: advice to run what is not there (Juju's "juju register")
// is worse than none.
func TestAdviceNamesCommandsThatExist(t *testing.T) {
	t.Setenv("JUJU_DATA", filepath.Join(t.TempDir(), "juju"))
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	tree := NewCmdRoot(cmdutil.TestFactory())
	known := map[string]bool{}
	for _, c := range tree.Commands() {
		known[c.Name()] = true
		for _, a := range c.Aliases {
			known[a] = true
		}
	}
	texts := map[string]string{
		"ErrNoControllers":       cmdutil.ErrNoControllers.Error(),
		"ErrNoCurrentController": cmdutil.ErrNoCurrentController.Error(),
	}
	for _, args := range [][]string{{"status"}, {"add-machine", "ssh:ubuntu@10.0.0.1"}} {
		_, _, stderr := jujuCLI(t, args...)
		texts["juju "+strings.Join(args, " ")] = stderr
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			texts[sub.CommandPath()+" --help"] = sub.Long + "\n" + sub.Example
			walk(sub)
		}
	}
	walk(tree)
	for where, text := range texts {
		for _, m := range adviceRe.FindAllStringSubmatch(text, -1) {
			if !known[m[1]] {
				t.Errorf("%s advises %q, which is not a command here:\n%s", where, m[0], text)
			}
		}
	}
	if !strings.Contains(texts["ErrNoControllers"], `"juju bootstrap`) {
		t.Errorf("No controllers registered does not say to bootstrap: %s", texts["ErrNoControllers"])
	}
}

// The local provider refuses containers: neither add-machine's help nor its ssh: error may
// show a container placement as something to do.
func TestAddMachineAdvisesWhatWorks(t *testing.T) {
	t.Setenv("JUJU_DATA", filepath.Join(t.TempDir(), "juju"))
	code, _, stderr := jujuCLI(t, "add-machine", "ssh:ubuntu@10.0.0.1")
	if code != 2 || !strings.Contains(stderr, `add a machine with "juju add-machine"`) || strings.Contains(stderr, "lxd") {
		t.Errorf("add-machine ssh: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := jujuCLI(t, "add-machine", "--help")
	if code != 0 || strings.Contains(stdout, "lxd:") || strings.Contains(stdout, "containers to the model") {
		t.Errorf("add-machine --help shows a container placement:\n%s", stdout)
	}
}
