package root

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// newCmdHelp returns "juju help [<command>|commands]", which replaces cobra's: an unknown name is
// a usage error with a suggestion, and "commands" lists every command with its purpose.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [<command> ...|commands]",
		Short: "Show help on a command or other topic",
		Long: `Show the help of a command: its usage, purpose, options, details, examples and related
commands. "juju help" alone describes juju; "juju help commands" lists every command with
its purpose, one a line (aliases too), for scripts and shell completion.

"juju help <command>" and "juju <command> --help" print the same text on stdout and exit 0.
An unknown command is a usage error (exit 2) with a suggestion when one is close.`,
		Example: `  juju help deploy
  juju help commands
  juju deploy --help`,
		Annotations: map[string]string{cmdutil.SeeAlso: "completion, version"},
		Args:        cobra.ArbitraryArgs,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, c := range append([]*cobra.Command{{Use: "commands"}}, cmd.Root().Commands()...) {
				if (c.Name() == "commands" || c.IsAvailableCommand()) && strings.HasPrefix(c.Name(), toComplete) {
					names = append(names, c.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			if len(args) == 1 && args[0] == "commands" {
				writeCommandList(cmd.OutOrStdout(), root)
				return nil
			}
			target, rest, err := root.Find(args)
			if err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if name := firstPositional(target, rest); name != "" {
				if target.HasSubCommands() {
					return unknownCommand(target, name)
				}
				return cmdutil.UnrecognizedArgs(rest)
			}
			return target.Help()
		},
	}
}

// writeHelp prints a command's help the way Juju lays it out: usage, summary, options, details,
// examples and related commands.
func writeHelp(w io.Writer, c *cobra.Command) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintf(bw, "Usage: %s\n", usageLine(c))
	fmt.Fprintf(bw, "\nSummary:\n%s\n", c.Short)
	if len(c.Aliases) > 0 {
		fmt.Fprintf(bw, "\nAliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	global, local := splitFlags(c)
	if len(global) > 0 {
		fmt.Fprintf(bw, "\nGlobal Options:\n")
		writeFlags(bw, global)
	}
	if len(local) > 0 {
		fmt.Fprintf(bw, "\nCommand Options:\n")
		writeFlags(bw, local)
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(bw, "\nDetails:\n%s\n", long)
	}
	if subs := availableCommands(c); len(subs) > 0 {
		fmt.Fprintf(bw, "\nCommands:\n")
		writeCommandLines(bw, subs, !c.HasParent())
	}
	if ex := strings.TrimRight(c.Example, " \n"); ex != "" {
		fmt.Fprintf(bw, "\nExamples:\n%s\n", indentExamples(ex))
	}
	if also := cmdutil.SeeAlsoOf(c); len(also) > 0 {
		fmt.Fprintf(bw, "\nSee also:\n")
		for _, name := range also {
			fmt.Fprintf(bw, " - %s\n", name)
		}
	}
}

// usageLine is "juju <command> [options] <args>": the command's Use under its parent's path,
// with "[options]" after the name when the command has options of its own and Use lacks it.
func usageLine(c *cobra.Command) string {
	use := c.Use
	if !c.HasParent() {
		use = strings.TrimSpace(strings.TrimPrefix(use, c.Name()))
		if use == "" {
			use = "[options] <command> ..."
		}
		return c.Name() + " " + use
	}
	name, args, _ := strings.Cut(use, " ")
	_, local := splitFlags(c)
	if len(local) > 0 && !strings.Contains(args, "[options]") {
		args = strings.TrimSpace("[options] " + args)
	}
	line := c.Parent().CommandPath() + " " + name
	if args != "" {
		line += " " + args
	}
	return line
}

// splitFlags separates the options every command takes (the root's persistent flags, --help)
// from the command's own, leaving out hidden ones.
func splitFlags(c *cobra.Command) (global, local []*pflag.Flag) {
	persistent := c.Root().PersistentFlags()
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if persistent.Lookup(f.Name) != nil {
			global = append(global, f)
			return
		}
		if !c.HasParent() && f.Name == "version" {
			global = append(global, f)
			return
		}
		local = append(local, f)
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(global, f) && !slices.Contains(local, f) {
			global = append(global, f)
		}
	})
	sortFlags(global)
	sortFlags(local)
	return global, local
}

func sortFlags(fs []*pflag.Flag) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
}

// writeFlags lists options as Juju does: "-n, --num-units (= 1)", then the usage indented.
func writeFlags(w io.Writer, fs []*pflag.Flag) {
	for _, f := range fs {
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		fmt.Fprintf(w, "%s%s\n", name, flagDefault(f))
		_, usage := pflag.UnquoteUsage(f) // "at most once per `interval`" loses its backquotes
		for _, line := range strings.Split(usage, "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
}

// flagDefault is " (= <default>)": strings quoted, nothing for empty lists.
func flagDefault(f *pflag.Flag) string {
	switch {
	case f.Value.Type() == "string":
		return fmt.Sprintf(" (= %q)", f.DefValue)
	case f.DefValue == "[]" || f.DefValue == "":
		return ""
	}
	return " (= " + f.DefValue + ")"
}

func availableCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() || s.Name() == "help" {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// writeCommandList is "juju help commands": every command and alias with its purpose.
func writeCommandList(w io.Writer, root *cobra.Command) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	writeCommandLines(bw, availableCommands(root), true)
}

// writeCommandLines writes "name  purpose" lines, sorted, names padded to one column; with
// aliases, each alias gets its own line too ("relate  Alias for 'integrate'.").
func writeCommandLines(w io.Writer, cmds []*cobra.Command, aliases bool) {
	type line struct{ name, purpose string }
	var lines []line
	width := 0
	for _, c := range cmds {
		lines = append(lines, line{c.Name(), c.Short})
		if aliases {
			for _, a := range c.Aliases {
				lines = append(lines, line{a, fmt.Sprintf("Alias for '%s'.", c.Name())})
			}
		}
	}
	for _, l := range lines {
		width = max(width, len(l.name))
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].name < lines[j].name })
	for _, l := range lines {
		fmt.Fprintf(w, "%-*s  %s\n", width, l.name, l.purpose)
	}
}

// indentExamples re-indents the examples by four spaces, as Juju prints them, keeping their
// relative indentation.
func indentExamples(ex string) string {
	lines := strings.Split(ex, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" {
			lines[i] = ""
			continue
		}
		lines[i] = "    " + l[common:]
	}
	return strings.Join(lines, "\n")
}
