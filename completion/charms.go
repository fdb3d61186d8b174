package completion

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// deployCharm completes deploy's charm: the charms of $JUJU_REPOSITORY by the bare names deploy
// looks up there (a charm directory <name>, or <name>.charm), beside local paths. Only the first
// argument is a charm; the second names the application, which nobody can complete.
func deployCharm(c *completer, _ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 || strings.HasPrefix(toComplete, "-") {
		return nil, noFiles
	}
	var names []string
	if !strings.ContainsAny(toComplete, "/~") && !strings.HasPrefix(toComplete, ".") {
		names = repositoryCharms(c.src.Repository(), toComplete)
	}
	if len(names) == 0 {
		// A path alone: the shell's own file completion does it best.
		return nil, cobra.ShellCompDirectiveDefault
	}
	out := append(localPaths(toComplete), names...)
	directive := noFiles
	if slices.ContainsFunc(out, func(s string) bool { return strings.HasSuffix(s, "/") }) {
		directive |= cobra.ShellCompDirectiveNoSpace
	}
	return out, directive
}

// repositoryCharms lists the bare charm names in repo that start with prefix: directories with
// a metadata.yaml or charmcraft.yaml, and .charm files by their name without the extension.
// Nothing is read beyond the repository's listing and one stat per directory.
func repositoryCharms(repo, prefix string) []string {
	if repo == "" {
		return nil
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if charm, ok := strings.CutSuffix(name, ".charm"); ok && !e.IsDir() {
			name = charm
		} else if !isCharmDir(filepath.Join(repo, name)) {
			continue
		}
		if strings.HasPrefix(name, prefix) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func isCharmDir(dir string) bool {
	for _, f := range []string{"metadata.yaml", "charmcraft.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}
