package controller

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// enableHAAPI is the part of the client "juju enable-ha" uses: the call, then the members, to
// refresh what the client store knows of them.
type enableHAAPI interface {
	EnableHA(ctx context.Context, n int) (*jujupb.EnableHAResponse, error)
	ControllerMembers(ctx context.Context) ([]*jujupb.ControllerMember, string, error)
}

var _ enableHAAPI = (*client.Client)(nil)

// formatSimple is enable-ha's default format, Juju's "maintaining machines: 0" lines.
const formatSimple output.Format = "simple"

type enableHAOptions struct {
	IO     *output.Streams
	Store  *cmdutil.Store
	Config func() (*cmdutil.Config, error)
	Client func(ctx context.Context) (enableHAAPI, error)

	// NumMembers is -n: 0 asks for the controller's default.
	NumMembers int
	Controller string
	Format     output.Format
}

// NewCmdEnableHA returns "juju enable-ha": make the controller have an odd number of members.
func NewCmdEnableHA(f *cmdutil.Factory, runF func(*enableHAOptions) error) *cobra.Command {
	opts := &enableHAOptions{
		IO:     f.IO,
		Store:  f.Store,
		Config: f.Config,
		Client: cmdutil.ClientFunc[enableHAAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "enable-ha [options]",
		Short: "Ensure that sufficient controllers exist to provide redundancy",
		Long: `To ensure availability of deployed applications, the Juju infrastructure must itself
be highly available. The enable-ha command ensures that the specified number of
controller members (jujud processes sharing the controller's etcd cluster, on this host)
make up the controller.

An odd number of members is required, so that a majority of them can always agree. Without
-n, a controller with one member gets 3; one that has more keeps its number. Members that
are missing are started, members of this host whose process is gone are restarted, and
extra members are removed one at a time, never one whose removal would cost the store its
quorum.

The output says what happened to each member: "maintaining members: 0", "adding members:
1, 2", "removing members: 3", "restarting members: 1" (the keys maintained, added, removed
and restarted of --format yaml|json). Afterwards the client store lists every member's
API address for the controller, so that commands reach it through any member.`,
		Example: `  juju enable-ha
  juju enable-ha -n 5
  juju enable-ha -c local --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "show-controller, remove-controller-member, controllers"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateNumMembers(opts.NumMembers, cmd.Flags().Changed("n")); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return enableHARun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.NumMembers, "n", "n", 0, "Number of controllers to make available")
	cmdutil.AddControllerFlag(cmd, &opts.Controller)
	output.AddFormatFlag(cmd, &opts.Format, formatSimple, output.JSON, output.YAML)
	return cmd
}

// validateNumMembers refuses, before anything is sent, a count the controller could not keep
// a majority with (Juju's words), and an explicit -n 0, which says nothing -n left out does not.
func validateNumMembers(n int, given bool) error {
	if n < 0 || (n > 0 && n%2 == 0) {
		return cmdutil.FlagErrorf("must specify a number of controllers odd and non-negative")
	}
	if n == 0 && given {
		return cmdutil.FlagErrorf("-n 0 not valid: leave -n out for the default number of controllers")
	}
	return nil
}

func enableHARun(ctx context.Context, opts *enableHAOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	resp, err := c.EnableHA(ctx, opts.NumMembers)
	if err != nil {
		return fmt.Errorf("enabling HA: %w", err)
	}
	view := &enableHAView{
		Maintained: resp.GetMaintained(),
		Removed:    resp.GetRemoved(),
		Added:      resp.GetAdded(),
		Restarted:  resp.GetRestarted(),
	}
	if err := output.Write(opts.IO.Out, opts.Format, view); err != nil {
		return err
	}
	// The members changed: the next command should find every one of them.
	members, _, err := c.ControllerMembers(ctx)
	if err == nil {
		err = recordMembers(opts.Store, cfg.Controller, members, "")
	}
	if err != nil {
		opts.IO.Warningf("cannot record the controller's members in the client store: %v", err)
	}
	return nil
}

// enableHAView is the documented shape of "juju enable-ha --format json|yaml": member ids by
// what enable-ha did to them, Juju's keys and order.
type enableHAView struct {
	Maintained []string `json:"maintained,omitempty" yaml:"maintained,flow,omitempty"`
	Removed    []string `json:"removed,omitempty" yaml:"removed,flow,omitempty"`
	Added      []string `json:"added,omitempty" yaml:"added,flow,omitempty"`
	Restarted  []string `json:"restarted,omitempty" yaml:"restarted,flow,omitempty"`
}

// WriteText writes Juju's simple format: one line per non-empty list.
func (v *enableHAView) WriteText(w io.Writer, f output.Format) error {
	if f != formatSimple {
		return fmt.Errorf("format %q not supported", f)
	}
	for _, l := range []struct {
		verb string
		ids  []string
	}{
		{"maintaining", v.Maintained},
		{"adding", v.Added},
		{"removing", v.Removed},
		{"restarting", v.Restarted},
	} {
		if len(l.ids) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s members: %s\n", l.verb, strings.Join(l.ids, ", ")); err != nil {
			return err
		}
	}
	return nil
}
