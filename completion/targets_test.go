package completion

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
)

// targetSource is liveSource with the units of an application that has none on its own prefix
// ("mysql-router") and a container.
func targetSource() *fakeSource {
	src := liveSource()
	src.names[client.NameUnit] = []string{"mysql/0", "mysql-router/0", "wordpress/0", "wordpress/1", "wordpress/10"}
	src.names[client.NameMachine] = []string{"0", "0/lxd/0", "1", "10"}
	return src
}

// workDir makes the current directory one with a file, a directory, a hidden file and a link to
// a directory, for the duration of the test.
func workDir(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"backup.tar", "my.cnf", ".hidden", "bin/tool"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("bin", filepath.Join(dir, "binlink")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
}

func TestCompleteTargets(t *testing.T) {
	workDir(t)
	const defaultDirective = cobra.ShellCompDirectiveDefault
	for _, tc := range []struct {
		args      []string
		want      []string
		directive cobra.ShellCompDirective
		calls     []string // Names calls, sorted
	}{
		// ssh: units, leaders and machines; one call a kind.
		{[]string{"ssh", ""}, []string{"mysql/0", "mysql/leader", "mysql-router/0", "mysql-router/leader", "wordpress/0", "wordpress/1", "wordpress/10", "wordpress/leader", "0", "0/lxd/0", "1", "10"},
			noFileComp, []string{"test default NAME_KIND_MACHINE ", "test default NAME_KIND_UNIT "}},
		{[]string{"ssh", "my"}, []string{"mysql/0", "mysql/leader", "mysql-router/0", "mysql-router/leader"}, noFileComp, []string{"test default NAME_KIND_UNIT my"}},
		{[]string{"ssh", "wordpress/1"}, []string{"wordpress/1", "wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/"}},
		{[]string{"ssh", "wordpress/l"}, []string{"wordpress/leader"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/"}},
		{[]string{"ssh", "mysql/"}, []string{"mysql/0", "mysql/leader"}, noFileComp, []string{"test default NAME_KIND_UNIT mysql/"}},
		{[]string{"ssh", "0"}, []string{"0", "0/lxd/0"}, noFileComp, []string{"test default NAME_KIND_MACHINE 0"}},
		{[]string{"ssh", "ubuntu@wordpress/1"}, []string{"ubuntu@wordpress/1", "ubuntu@wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/"}},
		{[]string{"ssh", "-m", "dead:prod", "1"}, []string{"1", "10"}, noFileComp, []string{"dead prod NAME_KIND_MACHINE 1"}},
		// Not a target: nothing asked.
		{[]string{"ssh", "Host"}, nil, noFileComp, nil},
		{[]string{"ssh", "host.example.com"}, nil, noFileComp, nil},
		// After the target: ssh's options and the remote command.
		{[]string{"ssh", "mysql/0", ""}, nil, noFileComp, nil},
		{[]string{"ssh", "mysql/0", "-i", ""}, nil, defaultDirective, nil},
		// scp: targets with their ":", and local paths.
		{[]string{"scp", "wordpress/1"}, []string{"wordpress/1:", "wordpress/10:"}, noFileComp | noSpace, []string{"test default NAME_KIND_UNIT wordpress/"}},
		{[]string{"scp", "my"}, []string{"my.cnf", "mysql/0:", "mysql/leader:", "mysql-router/0:", "mysql-router/leader:"}, noFileComp | noSpace, []string{"test default NAME_KIND_UNIT my"}},
		{[]string{"scp", "1"}, []string{"1:", "10:"}, noFileComp | noSpace, []string{"test default NAME_KIND_MACHINE 1"}},
		{[]string{"scp", "backup.tar", "ubuntu@0/"}, []string{"ubuntu@0/lxd/0:"}, noFileComp | noSpace, []string{"test default NAME_KIND_MACHINE 0/"}},
		{[]string{"scp", ""}, []string{"backup.tar", "bin/", "binlink/", "my.cnf",
			"mysql/0:", "mysql/leader:", "mysql-router/0:", "mysql-router/leader:", "wordpress/0:", "wordpress/1:", "wordpress/10:", "wordpress/leader:", "0:", "0/lxd/0:", "1:", "10:"},
			noFileComp | noSpace, []string{"test default NAME_KIND_MACHINE ", "test default NAME_KIND_UNIT "}},
		// No target matches: the shell completes the files itself.
		{[]string{"scp", "b"}, nil, defaultDirective, []string{"test default NAME_KIND_UNIT b"}},
		// A path: nothing asked.
		{[]string{"scp", "./b"}, nil, defaultDirective, nil},
		{[]string{"scp", "/etc/"}, nil, defaultDirective, nil},
		{[]string{"scp", "~/"}, nil, defaultDirective, nil},
		// A remote path: nothing asked, nothing offered.
		{[]string{"scp", "mysql/0:"}, nil, noFileComp, nil},
		{[]string{"scp", "mysql/0:/var/l"}, nil, noFileComp, nil},
		{[]string{"scp", "backup.tar", "ubuntu@0:"}, nil, noFileComp, nil},
		// scp's own options, after --.
		{[]string{"scp", "--", "-r", "wordpress/1"}, []string{"wordpress/1:", "wordpress/10:"}, noFileComp | noSpace, []string{"test default NAME_KIND_UNIT wordpress/"}},
		// debug-log --include and --exclude: entities, comma-separated.
		{[]string{"debug-log", "--include", "my"}, []string{"mysql", "mysql/0", "mysql-router/0"}, noFileComp,
			[]string{"test default NAME_KIND_APPLICATION my", "test default NAME_KIND_UNIT my"}},
		{[]string{"debug-log", "-x", "mysql,wordpress/1"}, []string{"mysql,wordpress/1", "mysql,wordpress/10"}, noFileComp, []string{"test default NAME_KIND_UNIT wordpress/1"}},
		{[]string{"debug-log", "--include", "mysql,"}, []string{"mysql,wordpress", "mysql,mysql/0", "mysql,mysql-router/0", "mysql,wordpress/0", "mysql,wordpress/1", "mysql,wordpress/10", "mysql,0", "mysql,0/lxd/0", "mysql,1", "mysql,10"}, noFileComp,
			[]string{"test default NAME_KIND_APPLICATION ", "test default NAME_KIND_MACHINE ", "test default NAME_KIND_UNIT "}},
		{[]string{"debug-log", "--include", "unit-*"}, nil, noFileComp, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			src := targetSource()
			got, directive := complete(t, testTree(src), tc.args...)
			if !slices.Equal(got, tc.want) || directive != tc.directive {
				t.Errorf("got %q %d, want %q %d", got, directive, tc.want, tc.directive)
			}
			if calls := src.recorded(); !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
}

func TestWithLeaders(t *testing.T) {
	got := withLeaders([]string{"a/0", "a/1", "a-b/0", "b/3"})
	if want := []string{"a/0", "a/1", "a/leader", "a-b/0", "a-b/leader", "b/3", "b/leader"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := withLeaders(nil); got != nil {
		t.Errorf("no units: %q", got)
	}
}

func TestCouldBeTarget(t *testing.T) {
	for word, want := range map[string]bool{
		"": true, "m": true, "mysql/0": true, "my-sql/le": true, "0/lxd/1": true, "12": true,
		"-r": false, "/etc": false, "./x": false, "~": false, "Mysql": false, "a.txt": false, "a_b": false, "unit-*": false,
	} {
		if got := couldBeTarget(word); got != want {
			t.Errorf("couldBeTarget(%q) = %v", word, got)
		}
	}
}
