package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

type scpOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (targetAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	DataDir      func() (string, error)
	Run          Runner
	Wait         time.Duration

	Model string
	// Args are the sources and the destination ([[user@]target:]path), with any of scp's own
	// options among them.
	Args            []string
	NoHostKeyChecks bool
	Container       string
	Proxy           bool
}

var unknownShortFlagRe = regexp.MustCompile(`^unknown shorthand flag: '(.)' in `)

// NewCmdSCP returns "juju scp [options] [-- <scp options>] <source> ... <destination>".
func NewCmdSCP(f *cmdutil.Factory, runF func(*scpOptions) error) *cobra.Command {
	opts := &scpOptions{
		IO:           f.IO,
		Client:       cmdutil.ClientFunc[targetAPI](f),
		ResolveModel: f.Model,
		DataDir:      dataDir(f),
		Run:          RunOpenSSH,
		Wait:         DefaultTargetWait,
	}
	cmd := &cobra.Command{
		Use:   "scp [options] [-- <scp options>] <source> ... <destination>",
		Short: "Securely transfer files within a model",
		Long: `Copy files to, from and between the model's machines and units and the client, with
OpenSSH's scp.

Sources and the destination are local paths or remote locations:

    [[<user>@]<target>:]<path>

<target> is a machine id, a unit name or <application>/leader, as for "juju ssh"; <user>
defaults to the account the machine's ssh server logs in (on the local provider, the
account the controller runs as). Remote relative paths start in that account's home
directory; local ones in the current directory. A target that is none of these is given
to scp as a host name.

scp's own options go after "--": "-r" copies directories, "-C" compresses, "-3" copies
between two machines through the client.

Host keys are checked as for "juju ssh"; --no-host-key-checks turns that off. Errors from
scp are reported in one line and juju exits 1.`,
		Example: `  juju scp mysql/0:/etc/hostname .
  juju scp 2:/var/log/syslog .
  juju scp -- -r mysql/0:/var/lib/mysql-backups backups
  juju scp file1 file2 2:
  juju scp -- -r ./config mysql/leader:/tmp/config
  juju scp -- -3 0:file.dat mysql/0:`,
		Annotations: map[string]string{cmdutil.SeeAlso: "ssh, ssh-keys"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.FlagErrorf("at least two arguments required")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if err := refuseUnsupported(opts.Container, opts.Proxy); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return scpRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().SetInterspersed(false)
	// "juju scp -r a b" is a common slip: say where scp's options go.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if m := unknownShortFlagRe.FindStringSubmatch(err.Error()); m != nil {
			return cmdutil.FlagErrorf("option provided but not defined: -%s (scp's own options go after --: juju scp -- -%s <source> <destination>)", m[1], m[1])
		}
		if p := c.Parent(); p != nil {
			return p.FlagErrorFunc()(c, err)
		}
		return cmdutil.FlagErrorWrap(err)
	})
	addTargetFlags(cmd, &opts.NoHostKeyChecks, &opts.Container, &opts.Proxy)
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// remoteArg is one argument of the command line naming a remote location.
type remoteArg struct {
	index int
	t     target
	path  string
}

func scpRun(ctx context.Context, opts *scpOptions) error {
	args := append([]string(nil), opts.Args...)
	var agents []remoteArg
	others := 0
	for i, a := range args {
		left, path, ok := strings.Cut(a, ":")
		if strings.HasPrefix(a, "-") || !ok {
			continue // an option, or a local path
		}
		if t, agent := parseTarget(left); agent {
			agents = append(agents, remoteArg{index: i, t: t, path: path})
		} else {
			others++
		}
	}
	if len(agents) > 0 && others > 0 && !opts.NoHostKeyChecks {
		return errors.New("can't determine host keys for all targets: consider --no-host-key-checks")
	}
	var key ClientKey
	var eps []endpoint
	if len(agents) > 0 {
		r, err := newResolver(ctx, opts.Client, opts.ResolveModel, opts.DataDir, opts.Wait)
		if err != nil {
			return err
		}
		key = r.key
		for _, ra := range agents {
			ep, err := r.resolve(ctx, ra.t)
			if err != nil {
				return err
			}
			eps = append(eps, ep)
			args[ra.index] = scpLocation(ep, ra.path)
		}
	} else {
		dir, err := opts.DataDir()
		if err != nil {
			return err
		}
		if key, err = EnsureClientKey(dir); err != nil {
			return err
		}
	}
	var knownHostsPath string
	if len(eps) > 0 && !opts.NoHostKeyChecks {
		var err error
		if knownHostsPath, err = knownHosts(eps); err != nil {
			return err
		}
		defer os.Remove(knownHostsPath)
	}
	all := append(commonOptions(opts.NoHostKeyChecks, knownHostsPath, key), args...)
	// scp's complaints become the error; its progress and anything else it prints go through.
	var stderr bytes.Buffer
	err := opts.Run(ctx, "scp", all, opts.IO.In, opts.IO.Out, &stderr)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if msg := oneLine(stderr.String()); msg != "" {
			return fmt.Errorf("%v (%s)", err, msg)
		}
	}
	return err
}

// scpLocation names a remote path on an endpoint: user@address:path on port 22, else the
// scp:// form, the only one that carries a port per host ("//" makes its path absolute; scp
// decodes %-escapes there).
func scpLocation(ep endpoint, path string) string {
	if ep.port == 0 || ep.port == 22 {
		return ep.userHost() + ":" + path
	}
	loc := "scp://" + ep.userHost() + ":" + strconv.Itoa(ep.port)
	if path != "" {
		loc += "/" + strings.ReplaceAll(path, "%", "%25")
	}
	return loc
}

// oneLine joins the lines of a program's complaints.
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
