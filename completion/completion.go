// Package completion generates the bash and zsh completion scripts of the CLI. The scripts call
// back into `juju __complete`, so they always match the commands and flags of the binary.
package completion

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// NewCmd returns `juju completion bash|zsh`.
func NewCmd(out func() io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh",
		Short: "Print the shell completion script for bash or zsh",
		Long: `Print the shell completion script for bash or zsh.

  source <(juju completion bash)            # bash, this shell
  juju completion zsh > "${fpath[1]}/_juju"  # zsh, every new shell`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				if _, err := io.WriteString(out(), bashShim); err != nil {
					return err
				}
				return root.GenBashCompletionV2(out(), true)
			case "zsh":
				return root.GenZshCompletion(out())
			}
			return fmt.Errorf("unknown shell %q: expected bash or zsh", args[0])
		},
	}
}

// bashShim stands in for the one bash-completion function cobra's script needs, so completion
// also works in a bash without the bash-completion package (a minimal image, `bash --norc`).
const bashShim = `# Fallback for shells without the bash-completion package.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
}
fi
`
