package completion

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "_get_comp_words_by_ref() {", "zsh": "#compdef juju"} {
		var out bytes.Buffer
		root := &cobra.Command{Use: "juju"}
		root.AddCommand(NewCmd(func() io.Writer { return &out }))
		root.SetArgs([]string{"completion", shell})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) || (shell == "bash" && !strings.Contains(out.String(), "complete -o default -F __start_juju juju")) {
			t.Errorf("%s script lacks %q", shell, want)
		}
	}
	root := &cobra.Command{Use: "juju", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(NewCmd(func() io.Writer { return io.Discard }))
	root.SetArgs([]string{"completion", "fish"})
	if err := root.Execute(); err == nil || err.Error() != `unknown shell "fish": expected bash or zsh` {
		t.Fatalf("fish: %v", err)
	}
}
