package completion

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestScripts(t *testing.T) {
	for shell, want := range map[string][]string{
		"bash": {"_get_comp_words_by_ref() {", "complete -o default -F __start_juju juju"},
		"zsh":  {"#compdef juju", "compdef _juju juju"},
		"fish": {"complete -c juju -n 'not __juju_requires_order_preservation && __juju_prepare_completions'"},
	} {
		var out bytes.Buffer
		root := &cobra.Command{Use: "juju"}
		root.AddCommand(NewCmd(func() io.Writer { return &out }))
		root.SetArgs([]string{"completion", shell})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s script lacks %q", shell, w)
			}
		}
	}
	for args, want := range map[string]string{
		"tcsh": `usage: unknown shell "tcsh": expected bash, zsh or fish`,
		"":     "usage: expected one shell: bash, zsh or fish",
	} {
		root := &cobra.Command{Use: "juju", SilenceErrors: true, SilenceUsage: true}
		// The root's flag error function decides what a usage error is.
		root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return errors.New("usage: " + err.Error()) })
		root.AddCommand(NewCmd(func() io.Writer { return io.Discard }))
		root.SetArgs(append([]string{"completion"}, strings.Fields(args)...))
		if err := root.Execute(); err == nil || err.Error() != want {
			t.Errorf("completion %s: %v, want %s", args, err, want)
		}
	}
}
