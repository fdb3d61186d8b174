package completion

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// deploy <Tab>: the repository's charms by the bare names deploy looks up (directories with
// metadata, .charm files), beside local paths; a path, or no repository, is left to the shell;
// the application name after the charm completes nothing.
func TestDeployCompletesRepositoryCharms(t *testing.T) {
	repo := t.TempDir()
	for _, dir := range []string{"mysql", "mongodb", "notes"} {
		if err := os.MkdirAll(filepath.Join(repo, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(repo, "mysql", "metadata.yaml"), []byte("name: mysql\n"), 0o644)
	_ = os.WriteFile(filepath.Join(repo, "mongodb", "charmcraft.yaml"), []byte("name: mongodb\n"), 0o644)
	_ = os.WriteFile(filepath.Join(repo, "mysql-router.charm"), nil, 0o644)
	_ = os.WriteFile(filepath.Join(repo, "README"), nil, 0o644)
	work := t.TempDir()
	t.Chdir(work)
	_ = os.Mkdir("my-charm", 0o755)

	c := &completer{src: &fakeSource{repo: repo}}
	for _, tc := range []struct {
		args      []string
		word      string
		want      []string
		directive cobra.ShellCompDirective
	}{
		{nil, "m", []string{"my-charm/", "mongodb", "mysql", "mysql-router"}, noFiles | cobra.ShellCompDirectiveNoSpace},
		{nil, "mys", []string{"mysql", "mysql-router"}, noFiles},
		{nil, "./", nil, cobra.ShellCompDirectiveDefault},
		{nil, "zzz", nil, cobra.ShellCompDirectiveDefault},
		{[]string{"mysql"}, "", nil, noFiles},
	} {
		got, directive := deployCharm(c, nil, tc.args, tc.word)
		if !slices.Equal(got, tc.want) || directive != tc.directive {
			t.Errorf("deploy %v %q = %v %v, want %v %v", tc.args, tc.word, got, directive, tc.want, tc.directive)
		}
	}
	if got, directive := deployCharm(&completer{src: &fakeSource{}}, nil, nil, "m"); got != nil || directive != cobra.ShellCompDirectiveDefault {
		t.Errorf("without a repository: %v %v", got, directive)
	}
}
