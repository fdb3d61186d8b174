package ssh

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type sshKeysOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (keysAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model string
	Full  bool
}

// NewCmdSSHKeys returns "juju ssh-keys [--full]".
func NewCmdSSHKeys(f *cmdutil.Factory, runF func(*sshKeysOptions) error) *cobra.Command {
	opts := &sshKeysOptions{IO: f.IO, Client: cmdutil.ClientFunc[keysAPI](f), ResolveModel: f.Model}
	cmd := &cobra.Command{
		Use:     "ssh-keys [options]",
		Aliases: []string{"list-ssh-keys"},
		Short:   "Lists the currently known SSH keys for the current (or specified) model",
		Long: `List the public SSH keys every machine of the model accepts, in the order they were
added, after a line naming the model. Each key shows as its fingerprint (MD5, as Juju
shows it, the form "ssh-keygen -E md5 -l" prints after "MD5:") and its comment in
parentheses; --full shows the whole keys instead.

Juju's own key (comment juju-client-key), which juju ssh and scp log in with, is not
listed. With no other key, "No keys to display." goes to stderr and stdout stays empty.`,
		Example: `  juju ssh-keys
  juju ssh-keys -m prod --full`,
		Annotations: map[string]string{cmdutil.SeeAlso: "add-ssh-key, remove-ssh-key"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return sshKeysRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Full, "full", false, "Show full key instead of just the fingerprint")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func sshKeysRun(ctx context.Context, opts *sshKeysOptions) error {
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	keys, err := c.ListSSHKeys(ctx, model.UUID)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		opts.IO.Infof("No keys to display.")
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "Keys used in model: %s\n", model.Qualified())
	for _, k := range keys {
		switch {
		case opts.Full:
			fmt.Fprintln(opts.IO.Out, k.GetKey())
		case k.GetComment() != "":
			fmt.Fprintf(opts.IO.Out, "%s (%s)\n", k.GetFingerprint(), k.GetComment())
		default:
			fmt.Fprintln(opts.IO.Out, k.GetFingerprint())
		}
	}
	return nil
}
