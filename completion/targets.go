package completion

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
)

// sshFileOptions are the options of ssh, given after juju ssh's target, whose value is a local
// file.
var sshFileOptions = []string{"-i", "-F", "-E"}

// sshTarget completes "juju ssh [user@]<target> [ssh options] [command]": the target is a unit,
// <application>/leader or a machine id; what follows is ssh's, of which only the file of an
// option such as -i is completed (locally, by the shell).
func sshTarget(c *completer, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		if slices.Contains(sshFileOptions, args[len(args)-1]) {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return nil, noFiles
	}
	return c.targets(cmd, toComplete, ""), noFiles
}

// scpLocation completes a source or destination of "juju scp": local paths as the shell completes
// them, and remote locations up to their ":" ("mysql/0:", "mysql/leader:", "0:"). After the ":"
// comes a remote path, which is never asked for: a Tab there must not cost a connection to the
// machine.
func scpLocation(c *completer, cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if strings.Contains(toComplete, ":") || strings.HasPrefix(toComplete, "-") {
		return nil, noFiles
	}
	remote := c.targets(cmd, toComplete, ":")
	if len(remote) == 0 {
		// A local path alone: the shell's own file completion does it best (~, quoting, a
		// space after a file and none after a directory).
		return nil, cobra.ShellCompDirectiveDefault
	}
	// Both kinds at once: the files are listed here, as the shell would not add them.
	out := append(localPaths(toComplete), remote...)
	directive := noFiles
	for _, cand := range out {
		// A directory or a target is not finished: no space after it.
		if strings.HasSuffix(cand, "/") || strings.HasSuffix(cand, ":") {
			directive |= cobra.ShellCompDirectiveNoSpace
			break
		}
	}
	return out, directive
}

// targets lists what juju ssh and juju scp take as a target, each followed by suffix, for a word
// [user@]<partial target>: units and <application>/leader of the applications that have units,
// and machines (only machines for a word starting with a digit). A word that cannot start a
// target (a path, say) asks the controller nothing.
func (c *completer) targets(cmd *cobra.Command, word, suffix string) []string {
	user, partial := "", word
	if i := strings.LastIndex(word, "@"); i >= 0 {
		user, partial = word[:i+1], word[i+1:]
	}
	if !couldBeTarget(partial) {
		return nil
	}
	var names []string
	switch {
	case partial == "":
		both := c.namesByKind(cmd, "", []client.NameKind{client.NameUnit, client.NameMachine})
		names = append(withLeaders(both[0]), both[1]...)
	case isDigit(partial[0]):
		names = c.names(cmd, client.NameMachine, partial)
	default:
		// The units of the application the word names, when it names one, so that
		// "mysql/l" still finds mysql/leader.
		prefix := partial
		if i := strings.Index(partial, "/"); i >= 0 {
			prefix = partial[:i+1]
		}
		names = withLeaders(c.names(cmd, client.NameUnit, prefix))
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, partial) {
			out = append(out, user+n+suffix)
		}
	}
	return out
}

// withLeaders adds <application>/leader after the units of each application among units.
func withLeaders(units []string) []string {
	var out []string
	added := map[string]bool{}
	for i, u := range units {
		out = append(out, u)
		app, _, _ := strings.Cut(u, "/")
		if !added[app] && (i+1 == len(units) || !strings.HasPrefix(units[i+1], app+"/")) {
			added[app] = true
			out = append(out, app+"/leader")
		}
	}
	return out
}

// couldBeTarget reports whether word may begin a unit name, <application>/leader or a machine
// id: lower-case letters, digits, "-" and "/", starting with a letter or digit.
func couldBeTarget(word string) bool {
	for i, r := range word {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '/') && i > 0:
		default:
			return false
		}
	}
	return true
}

// localPaths lists the files and directories starting with word, as the shell would complete
// them: relative to the current directory, a directory with "/" after it, hidden ones only when
// the word's last part starts with ".".
func localPaths(word string) []string {
	dir, base := "", word
	if i := strings.LastIndex(word, "/"); i >= 0 {
		dir, base = word[:i+1], word[i+1:]
	}
	read := dir
	if read == "" {
		read = "."
	}
	entries, err := os.ReadDir(read)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		path := dir + name
		// Stat follows a symbolic link to a directory, as the shell's completion does.
		if fi, err := os.Stat(filepath.Join(read, name)); err == nil && fi.IsDir() {
			path += "/"
		}
		out = append(out, path)
	}
	return out
}

// debugLogEntities completes the value of debug-log's --include and --exclude: a
// comma-separated list of units, applications and machines, the last of which is completed (as
// status selectors are) and the earlier ones kept.
func (c *completer) debugLogEntities(cmd *cobra.Command, toComplete string) ([]string, cobra.ShellCompDirective) {
	head, word := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		head, word = toComplete[:i+1], toComplete[i+1:]
	}
	if !couldBeTarget(word) {
		return nil, noFiles
	}
	names, _ := selectors(c, cmd, strings.Split(strings.TrimSuffix(head, ","), ","), word)
	for i, n := range names {
		names[i] = head + n
	}
	return names, noFiles
}
