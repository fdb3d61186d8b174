// Package completion is shell completion for the CLI: `juju completion bash|zsh|fish` prints a
// script that calls back into `juju __complete`, so it always matches the binary's commands and
// flags, and Register attaches to the command tree what cobra cannot know: flag values and live
// names from the controller.
package completion

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
)

// NewCmd returns `juju completion bash|zsh|fish`.
func NewCmd(out func() io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script for bash, zsh or fish",
		Long: `Print the shell completion script for bash, zsh or fish.

Tab completes commands, flags, flag values (--format, --base, --constraints keys) and the
names the controller knows: applications, units, machines, endpoints after "app:", models,
the targets of ssh and scp ("mysql/0", "mysql/leader", "0"; for scp with their ":", next to
local files), and controllers from the local store. A controller that does not answer within 200 ms
gives no names rather than a hanging Tab ($JUJU_COMPLETION_TIMEOUT gives it longer).`,
		Example: `  juju completion bash > ~/.local/share/bash-completion/completions/juju   # bash, every shell
  source <(juju completion bash)                     # bash, this shell
  juju completion zsh > "${fpath[1]}/_juju"          # zsh, every shell (after compinit)
  source <(juju completion zsh)                      # zsh, this shell (after compinit)
  juju completion fish > ~/.config/fish/completions/juju.fish`,
		// "seeAlso" is cmdutil.SeeAlso's key (this package does not import cmd/).
		Annotations: map[string]string{"seeAlso": "help"},
		ValidArgs:   shells,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) != 1:
				return usageError(cmd, errors.New("expected one shell: bash, zsh or fish"))
			case !slices.Contains(shells, args[0]):
				return usageError(cmd, fmt.Errorf("unknown shell %q: expected bash, zsh or fish", args[0]))
			}
			return nil
		},
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
			default:
				return root.GenFishCompletion(out(), true)
			}
		},
	}
}

var shells = []string{"bash", "fish", "zsh"}

// usageError hands err to the flag error function the command inherits, which is how the root
// tells usage errors (exit 2) from failures.
func usageError(cmd *cobra.Command, err error) error {
	return cmd.FlagErrorFunc()(cmd, err)
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
