package root

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
)

// unknownCommand is Juju's answer to a command it does not know, with the closest command
// when one is close: a usage error, found before anything is sent to the controller.
func unknownCommand(parent *cobra.Command, name string) error {
	path := parent.CommandPath()
	msg := fmt.Sprintf("%s: %q is not a %s command. See \"%s --help\".", path, name, path, path)
	if s := suggest(parent, name); s != "" {
		msg += "\n\nDid you mean:\n\t" + s
	}
	return &cmdutil.FlagError{Err: errors.New(msg)}
}

// suggest returns the subcommand of parent (or alias) closest to name: within two edits
// (a swap of neighbours counts as one), or starting with a name of three letters or more.
// Ties go to the first in alphabetical order; "" when none is close.
func suggest(parent *cobra.Command, name string) string {
	name = strings.ToLower(name)
	best, bestScore := "", 3.0
	consider := func(candidate, show string) {
		score := float64(editDistance(name, candidate))
		if len(name) >= 3 && strings.HasPrefix(candidate, name) {
			score = min(score, 1.5)
		}
		if score < bestScore || score == bestScore && show < best {
			best, bestScore = show, score
		}
	}
	for _, c := range parent.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		consider(c.Name(), c.Name())
		for _, a := range c.Aliases {
			consider(a, a)
		}
	}
	// A suggestion as far from the typo as the typo is long ("st" and "scp") is a guess.
	if bestScore > 2 || bestScore >= float64(len([]rune(name))) {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions, deletions, substitutions
// and transpositions of neighbours each cost one ("stauts" is one edit from "status").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// firstPositional returns the first argument of args that is neither an option of c nor an
// option's value, or "". As cobra does, an unknown option is taken to have a value.
func firstPositional(c *cobra.Command, args []string) string {
	takesValue := func(name string, short bool) bool {
		var f *pflag.Flag
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags(), c.InheritedFlags()} {
			if short {
				f = fs.ShorthandLookup(name)
			} else {
				f = fs.Lookup(name)
			}
			if f != nil {
				return f.NoOptDefVal == ""
			}
		}
		return true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			if takesValue(a[2:], false) {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) == 2:
			if takesValue(a[1:], true) {
				i++
			}
		case a != "" && !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}

// misplacedCommand finds an unknown command name before cobra parses any flag: "juju stauts
// --format json" is a mistyped command, not an unknown --format option. It returns nil when
// args name a command (or none).
func misplacedCommand(root *cobra.Command, args []string) error {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil
	}
	c, rest, err := root.Find(args)
	if err != nil || c.Name() == "help" {
		return nil
	}
	if c != root && (c.Runnable() || !c.HasSubCommands()) {
		return nil
	}
	if name := firstPositional(c, rest); name != "" {
		return unknownCommand(c, name)
	}
	return nil
}
