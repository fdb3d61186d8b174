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
				return root.GenBashCompletionV2(out(), true)
			case "zsh":
				return root.GenZshCompletion(out())
			}
			return fmt.Errorf("unknown shell %q: expected bash or zsh", args[0])
		},
	}
}
