package ssh

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type removeSSHKeyOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (keysAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	IDs   []string
}

// NewCmdRemoveSSHKey returns "juju remove-ssh-key <ssh key id> ...".
func NewCmdRemoveSSHKey(f *cmdutil.Factory, runF func(*removeSSHKeyOptions) error) *cobra.Command {
	opts := &removeSSHKeyOptions{IO: f.IO, Client: cmdutil.ClientFunc[keysAPI](f), ResolveModel: f.Model}
	cmd := &cobra.Command{
		Use:   "remove-ssh-key [options] <ssh key id> ...",
		Short: "Removes a public SSH key (or keys) from a model",
		Long: `Remove keys from the model's list; every machine of the model stops accepting them
within moments. A key is named by its fingerprint (as "juju ssh-keys" shows it), by its
comment, or by the whole key.

An id that names no key of the model, Juju's own key named by its comment
(juju-client-key), or removing the model's last key is refused, and then no key of the
command is removed.`,
		Example: `  juju remove-ssh-key me@host
  juju remove-ssh-key 28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31
  juju remove-ssh-key bob@ubuntu carol@ubuntu`,
		Annotations: map[string]string{cmdutil.SeeAlso: "ssh-keys, add-ssh-key"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("no ssh key id specified")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if runF != nil {
				return runF(opts)
			}
			return removeSSHKeyRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func removeSSHKeyRun(ctx context.Context, opts *removeSSHKeyOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	return c.RemoveSSHKeys(ctx, model.UUID, opts.IDs)
}
