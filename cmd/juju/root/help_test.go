package root

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// helpTree returns the root and every visible command under it (the tree others extend in
// NewCmdRoot is walked as it is, so a new command is checked without being listed here).
func helpTree(t *testing.T) (*cobra.Command, []*cobra.Command) {
	t.Helper()
	root := NewCmdRoot(cmdutil.TestFactory())
	root.InitDefaultHelpCmd()
	all := []*cobra.Command{root}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden {
				continue
			}
			all = append(all, sub)
			walk(sub)
		}
	}
	walk(root)
	return root, all
}

// cmdWords is a command's words after "juju": "status", "completion bash"; nil for the root.
func cmdWords(c *cobra.Command) []string {
	return strings.Fields(strings.TrimPrefix(c.CommandPath(), "juju"))
}

// TestEveryCommandHasHelp checks that every command has a purpose, a usage line, details,
// examples and related commands that exist, and that "juju <cmd> --help" and "juju help
// <cmd>" print them on stdout and exit 0.
func TestEveryCommandHasHelp(t *testing.T) {
	root, all := helpTree(t)
	if len(all) < 30 {
		t.Fatalf("only %d commands in the tree", len(all))
	}
	for _, c := range all {
		name := strings.Join(append([]string{"juju"}, cmdWords(c)...), " ")
		t.Run(name, func(t *testing.T) {
			if strings.TrimSpace(c.Short) == "" {
				t.Error("no purpose (Short)")
			}
			if strings.TrimSpace(c.Use) == "" {
				t.Error("no usage (Use)")
			}
			if strings.TrimSpace(c.Long) == "" {
				t.Error("no description (Long)")
			}
			if strings.TrimSpace(c.Example) == "" {
				t.Error("no examples (Example)")
			} else if !strings.Contains(c.Example, "juju ") {
				t.Errorf("examples do not show a juju command line: %q", c.Example)
			}
			also := cmdutil.SeeAlsoOf(c)
			if len(also) == 0 {
				t.Errorf("no related commands: set Annotations[cmdutil.SeeAlso]")
			}
			for _, other := range also {
				found, rest, err := root.Find([]string{other})
				if err != nil || found == root || len(rest) != 0 || found.Hidden {
					t.Errorf("see also %q: not a command", other)
				} else if found == c {
					t.Errorf("see also %q: the command itself", other)
				}
			}

			code, stdout, stderr := runRoot(t, append(cmdWords(c), "--help")...)
			if code != 0 || stderr != "" {
				t.Fatalf("--help = %d, stderr %q", code, stderr)
			}
			for _, want := range []string{"Usage: " + name, "\nSummary:\n" + c.Short + "\n", "\nDetails:\n", "\nExamples:\n    juju ", "\nSee also:\n - "} {
				if !strings.Contains(stdout, want) {
					t.Errorf("--help lacks %q:\n%s", want, stdout)
				}
			}
			code, viaHelp, stderr := runRoot(t, append([]string{"help"}, cmdWords(c)...)...)
			if code != 0 || stderr != "" || viaHelp != stdout {
				t.Errorf("juju help %s = %d, stderr %q, differs from --help: %v", strings.Join(cmdWords(c), " "), code, stderr, viaHelp != stdout)
			}
		})
	}
}

func TestHelpLayout(t *testing.T) {
	_, stdout, _ := runRoot(t, "help", "add-unit")
	for _, want := range []string{
		"Usage: juju add-unit [options] <application name>\n\nSummary:\nAdd units to an application\n\nGlobal Options:\n",
		"\n-h, --help (= false)\n    Show help on a command or other topic\n",
		"\n-q, --quiet (= false)\n    Show no informational output\n",
		"\nCommand Options:\n",
		"\n-n, --num-units (= 1)\n    Number of units to add\n",
		"\n--to (= \"\")\n",
		"\n--timeout (= 10m0s)\n",
		"\nExamples:\n    juju add-unit mysql\n",
		"\nSee also:\n - remove-unit\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
	// The root lists its commands; "help commands" lists them and their aliases for scripts.
	_, stdout, _ = runRoot(t, "--help")
	if !strings.HasPrefix(stdout, "Usage: juju [options] <command> ...\n") || !strings.Contains(stdout, "\nCommands:\n") ||
		!strings.Contains(stdout, "\nstatus ") || strings.Contains(stdout, "__complete") {
		t.Errorf("root help:\n%s", stdout)
	}
	code, stdout, stderr := runRoot(t, "help", "commands")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || stderr != "" || !slices.IsSorted(lines) {
		t.Fatalf("help commands = %d %q:\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"relate", "integrate", "status", "whoami", "help"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want+" ") }) {
			t.Errorf("help commands lacks %s", want)
		}
	}
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "relate ") && strings.HasSuffix(l, "Alias for 'integrate'.")
	}) {
		t.Errorf("help commands does not explain the alias relate:\n%s", stdout)
	}
	// The shell completes help's argument with command names.
	if _, stdout, _ = runRoot(t, cobra.ShellCompNoDescRequestCmd, "help", "sta"); stdout != "status\n:4\n" {
		t.Errorf("help completion = %q", stdout)
	}
}

// TestDidYouMean checks mistyped commands, in first and in later position: one block on
// stderr, exit 2, nothing on stdout and no client built.
func TestDidYouMean(t *testing.T) {
	suggestion := func(typo, want string) string {
		msg := "ERROR juju: \"" + typo + "\" is not a juju command. See \"juju --help\".\n"
		if want != "" {
			msg += "\nDid you mean:\n\t" + want + "\n"
		}
		return msg
	}
	tests := []struct {
		args       []string
		wantStderr string
	}{
		{[]string{"stauts"}, suggestion("stauts", "status")},
		{[]string{"remove-unti"}, suggestion("remove-unti", "remove-unit")},
		{[]string{"remove-unti", "mysql/0"}, suggestion("remove-unti", "remove-unit")},
		{[]string{"delpoy", "./charm", "-n", "3"}, suggestion("delpoy", "deploy")},
		{[]string{"stauts", "--format", "json"}, suggestion("stauts", "status")},
		{[]string{"--quiet", "stauts"}, suggestion("stauts", "status")},
		{[]string{"help", "stauts"}, suggestion("stauts", "status")},
		{[]string{"relat"}, suggestion("relat", "relate")},
		{[]string{"whoam"}, suggestion("whoam", "whoami")},
		{[]string{"Status"}, suggestion("Status", "status")},
		{[]string{"frobnicate"}, suggestion("frobnicate", "")},
		{[]string{"group", "chidl"}, "ERROR juju group: \"chidl\" is not a juju group command. See \"juju group --help\".\n\nDid you mean:\n\tchild\n"},
		{[]string{"help", "group", "chidl"}, "ERROR juju group: \"chidl\" is not a juju group command. See \"juju group --help\".\n\nDid you mean:\n\tchild\n"},
		{[]string{"help", "deploy", "extra"}, "ERROR unrecognized args: [\"extra\"]\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f := cmdutil.TestFactory()
			dialled := false
			f.Client = func(context.Context) (*client.Client, error) { dialled = true; return nil, context.Canceled }
			cmd := NewCmdRoot(f)
			group := &cobra.Command{Use: "group", Short: "A command group"}
			group.AddCommand(&cobra.Command{Use: "child", RunE: func(*cobra.Command, []string) error { return nil }})
			cmd.AddCommand(group)
			code := run(context.Background(), cmd, tt.args, f.IO)
			stdout, stderr := f.IO.Out.(*bytes.Buffer).String(), f.IO.ErrOut.(*bytes.Buffer).String()
			if code != 2 || stdout != "" || stderr != tt.wantStderr || dialled {
				t.Errorf("juju %v = %d, dialled %v\nstdout %q\nstderr %q\nwant   %q", tt.args, code, dialled, stdout, stderr, tt.wantStderr)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	root, _ := helpTree(t)
	for typo, want := range map[string]string{
		"stauts": "status", "statsu": "status", "sttaus": "status", "satus": "status",
		"add-untis": "add-unit", "remove-aplication": "remove-application", "show-unti": "show-unit",
		"integrat": "integrate", "bootstarp": "bootstrap", "kill-contoller": "kill-controller",
		"x": "", "zzzzzz": "", "st": "",
	} {
		if got := suggest(root, typo); got != want {
			t.Errorf("suggest(%q) = %q, want %q", typo, got, want)
		}
	}
}

func TestQuietAndVerbose(t *testing.T) {
	for _, args := range [][]string{{"-q", "-v", "status"}, {"status", "--quiet", "--verbose"}} {
		code, stdout, stderr := runRoot(t, args...)
		if code != 2 || stdout != "" || stderr != "ERROR \"verbose\" and \"quiet\" flags clash, please use one or the other, not both\n" {
			t.Errorf("juju %v = %d %q %q", args, code, stdout, stderr)
		}
	}
	for _, tt := range []struct {
		args           []string
		quiet, verbose bool
	}{
		{[]string{"version"}, false, false},
		{[]string{"version", "-q"}, true, false},
		{[]string{"--quiet", "version"}, true, false},
		{[]string{"version", "--verbose"}, false, true},
		{[]string{"-v", "version"}, false, true},
	} {
		f := cmdutil.TestFactory()
		if code := run(context.Background(), NewCmdRoot(f), tt.args, f.IO); code != 0 || f.IO.Quiet != tt.quiet || f.IO.Verbose != tt.verbose {
			t.Errorf("juju %v = %d, quiet %v verbose %v", tt.args, code, f.IO.Quiet, f.IO.Verbose)
		}
	}
}

// TestQuietHidesInformation runs real commands on a client store (no controller needed):
// --quiet drops the informational line of switch, --verbose changes nothing there, and whoami
// is registered and reads the store alone.
func TestQuietHidesInformation(t *testing.T) {
	data := t.TempDir()
	t.Setenv("JUJU_DATA", data)
	t.Setenv("JUJU_CONTROLLER", "")
	t.Setenv("JUJU_MODEL", "")
	store := cmdutil.NewStore(data)
	for _, err := range []error{
		store.AddController("local", cmdutil.ControllerDetails{UUID: "u", APIEndpoints: []string{"127.0.0.1:1"}}),
		store.UpdateAccount("local", cmdutil.AccountDetails{User: "admin", Password: "pw"}),
		store.UpdateModel("local", "default", cmdutil.ModelDetails{UUID: "d", Type: "iaas"}),
		store.UpdateModel("local", "other", cmdutil.ModelDetails{UUID: "o", Type: "iaas"}),
		store.SetCurrentController("local"),
		store.SetCurrentModel("local", "default"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		args                   []string
		wantStdout, wantStderr string
	}{
		{[]string{"switch", "other"}, "", "local:admin/default -> local:admin/other\n"},
		{[]string{"switch", "-q", "default"}, "", ""},
		{[]string{"--quiet", "switch", "other"}, "", ""},
		{[]string{"switch", "--verbose", "default"}, "", "local:admin/other -> local:admin/default\n"},
		{[]string{"whoami"}, "Controller:  local\nModel:       admin/default\nUser:        admin\n", ""},
		{[]string{"whoami", "--format", "yaml", "-q"}, "controller: local\nmodel: admin/default\nuser: admin\n", ""},
	} {
		code, stdout, stderr := jujuCLI(t, tt.args...)
		if code != 0 || stdout != tt.wantStdout || stderr != tt.wantStderr {
			t.Errorf("juju %v = %d\nstdout %q\nstderr %q\nwant %q %q", tt.args, code, stdout, stderr, tt.wantStdout, tt.wantStderr)
		}
	}
}
