package ssh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type sshOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (targetAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	DataDir      func() (string, error)
	Run          Runner
	Wait         time.Duration

	Model string
	// Target is [user@]<machine|unit|application/leader>, or a host name used as it is.
	Target string
	// Args are ssh's options and the remote command, passed to ssh after the target.
	Args            []string
	NoHostKeyChecks bool
	Pty             autoBool
	Container       string
	Proxy           bool
}

// NewCmdSSH returns "juju ssh <[user@]target> [openssh options] [command]".
func NewCmdSSH(f *cmdutil.Factory, runF func(*sshOptions) error) *cobra.Command {
	opts := &sshOptions{
		IO:           f.IO,
		Client:       cmdutil.ClientFunc[targetAPI](f),
		ResolveModel: f.Model,
		DataDir:      dataDir(f),
		Run:          RunOpenSSH,
		Wait:         DefaultTargetWait,
	}
	cmd := &cobra.Command{
		Use:   "ssh [options] <[user@]target> [openssh options] [command]",
		Short: "Initiates an SSH session or executes a command on a Juju machine",
		Long: `The target is a machine id or a unit name (the machine of that unit, for a subordinate
its principal's), or <application>/leader for the application's leader. Anything else is
taken as a host name and given to ssh as it is.

Each machine runs its own OpenSSH server on the machine's address, which accepts the keys
of the model (see "juju ssh-keys"). juju ssh runs your OpenSSH client against it, logging in
with the client's own key ($JUJU_DATA/ssh/juju_id_ed25519, made on first use and authorized
in the model before it connects) and then your default keys.

On the local provider a machine logs in the account the controller runs as (root when it
runs as root), not Juju's "ubuntu", and the session starts in that account's home
directory; "user@" picks another account, which the server refuses unless it is the same.

Without a command, an interactive shell starts. A pseudo-terminal is allocated when juju's
standard input is a terminal, unless --pty says otherwise.

The machine's host key is checked against the one its agent recorded (a temporary
known_hosts file; yours is neither read nor written). --no-host-key-checks turns that off,
which lets anyone on the path impersonate the machine.

Options after the target, up to the command, are given to ssh (see "man ssh"). juju exits
with ssh's exit status: the remote command's, or 255 when ssh could not connect.

--container (Kubernetes models) and --proxy (reaching machines through the controller) are
refused: this controller's models run on machines that the client reaches directly.`,
		Example: `  juju ssh 0
  juju ssh 1 uname -a
  juju ssh mysql/0 'echo hello'
  juju ssh mysql/leader
  juju ssh mysql/0 -i ~/.ssh/my_private_key echo hello
  juju ssh --no-host-key-checks 0 hostname`,
		Annotations: map[string]string{cmdutil.SeeAlso: "scp, ssh-keys, add-ssh-key"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("no target name specified")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target, opts.Args = args[0], args[1:]
			if err := refuseUnsupported(opts.Container, opts.Proxy); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return sshRun(cmd.Context(), opts)
		},
	}
	// Flags after the target are ssh's: "juju ssh 0 -v uname" passes -v to ssh.
	cmd.Flags().SetInterspersed(false)
	addTargetFlags(cmd, &opts.NoHostKeyChecks, &opts.Container, &opts.Proxy)
	cmd.Flags().Var(&opts.Pty, "pty", "Enable pseudo-tty allocation")
	cmd.Flags().Lookup("pty").NoOptDefVal = "true"
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// addTargetFlags registers the flags juju ssh and juju scp share.
func addTargetFlags(cmd *cobra.Command, noHostKeyChecks *bool, container *string, proxy *bool) {
	cmd.Flags().BoolVar(noHostKeyChecks, "no-host-key-checks", false, "Skip host key checking (INSECURE)")
	cmd.Flags().StringVar(container, "container", "", "the container name of the target pod (Kubernetes models only; refused here)")
	cmd.Flags().BoolVar(proxy, "proxy", false, "Proxy through the API server (not supported here)")
}

// dataDir is $JUJU_DATA, where the client's key lives.
func dataDir(f *cmdutil.Factory) func() (string, error) {
	return func() (string, error) {
		cfg, err := f.Config()
		if err != nil {
			return "", err
		}
		return cfg.DataDir, nil
	}
}

func sshRun(ctx context.Context, opts *sshOptions) error {
	t, agent := parseTarget(opts.Target)
	var ep endpoint
	var knownHostsPath string
	var key ClientKey
	if agent {
		r, err := newResolver(ctx, opts.Client, opts.ResolveModel, opts.DataDir, opts.Wait)
		if err != nil {
			return err
		}
		key = r.key
		if ep, err = r.resolve(ctx, t); err != nil {
			return err
		}
		if !opts.NoHostKeyChecks {
			if knownHostsPath, err = knownHosts([]endpoint{ep}); err != nil {
				return err
			}
			defer os.Remove(knownHostsPath)
		}
	} else {
		// A host of the user's own: the user's known_hosts decides, as Juju leaves it.
		dir, err := opts.DataDir()
		if err != nil {
			return err
		}
		if key, err = EnsureClientKey(dir); err != nil {
			return err
		}
		ep = endpoint{user: t.user, address: t.entity}
	}
	args := sshArgs(opts, ep, knownHostsPath, key)
	err := opts.Run(ctx, "ssh", args, opts.IO.In, opts.IO.Out, opts.IO.ErrOut)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &ExitCodeError{Code: exit.ExitCode()}
	}
	return err
}

// sshArgs is ssh's command line: our options, the pty choice, the port, then the user's
// options and command after the target, where ssh reads them.
func sshArgs(opts *sshOptions, ep endpoint, knownHostsPath string, key ClientKey) []string {
	args := commonOptions(opts.NoHostKeyChecks, knownHostsPath, key)
	switch v := opts.Pty.value; {
	case v == nil && opts.IO.InTerminal, v != nil && *v:
		args = append(args, "-t", "-t") // twice: a terminal even when a command is given
	case v != nil && !*v:
		args = append(args, "-T")
	}
	if ep.port != 0 && ep.port != 22 {
		args = append(args, "-p", strconv.Itoa(ep.port))
	}
	args = append(args, ep.userHost())
	return append(args, opts.Args...)
}

// newResolver finds the model, the client and the client's key.
func newResolver(ctx context.Context, clientF func(context.Context) (targetAPI, error),
	resolveModel func(context.Context) (*cmdutil.ModelRef, error), dataDir func() (string, error), wait time.Duration) (*resolver, error) {
	dir, err := dataDir()
	if err != nil {
		return nil, err
	}
	key, err := EnsureClientKey(dir)
	if err != nil {
		return nil, err
	}
	model, err := resolveModel(ctx)
	if err != nil {
		return nil, err
	}
	c, err := clientF(ctx)
	if err != nil {
		return nil, err
	}
	return &resolver{api: c, model: model.UUID, key: key, wait: wait}, nil
}

// autoBool is --pty: unset (auto: a pseudo-terminal when stdin is a terminal), true or false.
type autoBool struct {
	value *bool
}

func (b *autoBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("expected true or false")
	}
	b.value = &v
	return nil
}

func (b *autoBool) String() string {
	if b.value == nil {
		return "<auto>"
	}
	return strconv.FormatBool(*b.value)
}

func (b *autoBool) Type() string { return "bool" }
