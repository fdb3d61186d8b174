package ssh

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/sshkey"
	"github.com/jujuclone/juju/output"
)

// keysAPI is the part of the client the key commands use.
type keysAPI interface {
	ListSSHKeys(ctx context.Context, model string) ([]*jujupb.SSHKey, error)
	AddSSHKeys(ctx context.Context, model string, keys []string) error
	RemoveSSHKeys(ctx context.Context, model string, ids []string) error
}

var _ keysAPI = (*client.Client)(nil)

type addSSHKeyOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (keysAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	Keys  []string
}

// NewCmdAddSSHKey returns "juju add-ssh-key <ssh key> ...".
func NewCmdAddSSHKey(f *cmdutil.Factory, runF func(*addSSHKeyOptions) error) *cobra.Command {
	opts := &addSSHKeyOptions{IO: f.IO, Client: cmdutil.ClientFunc[keysAPI](f), ResolveModel: f.Model}
	cmd := &cobra.Command{
		Use:   "add-ssh-key [options] <ssh key> ...",
		Short: "Adds a public SSH key to a model",
		Long: `Juju keeps a list of public SSH keys per model, and every machine of the model accepts
each of them (machines already running take up a new key within moments). Quote each
key whole, as one argument: "<type> <base64> [comment]", the line of a .pub file.

A key that is not an SSH public key, one the model has already (same fingerprint), or one
with the comment juju-client-key or juju-system-key (Juju's own) is refused, and then no
key of the command is added.`,
		Example: `  juju add-ssh-key "$(cat ~/.ssh/id_ed25519.pub)"
  juju add-ssh-key "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO/ouXKD6+/xvlq9BNcqk3yJ8TzC8wg8oSK+pUJhJNnU me@host"
  juju add-ssh-key -m prod "$(cat alice.pub)" "$(cat bob.pub)"`,
		Annotations: map[string]string{cmdutil.SeeAlso: "ssh-keys, remove-ssh-key, ssh"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("no ssh key specified")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// Checked here before anything is sent, with Juju's words for a bad key.
			for _, a := range args {
				if _, err := sshkey.Parse(a); err != nil {
					return cmdutil.FlagErrorf("cannot add key %q: invalid ssh key: %s", a, strings.ReplaceAll(a, "\n", `\n`))
				}
			}
			opts.Keys = args
			if runF != nil {
				return runF(opts)
			}
			return addSSHKeyRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func addSSHKeyRun(ctx context.Context, opts *addSSHKeyOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	// The controller names the key it refuses ("cannot add key ...: duplicate ssh key: ...").
	return c.AddSSHKeys(ctx, model.UUID, opts.Keys)
}
