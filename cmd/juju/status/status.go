// Package status holds "juju status".
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// statusAPI is the part of the client "juju status" uses.
type statusAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
}

var _ statusAPI = (*client.Client)(nil)

type statusOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (statusAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	Now          func() time.Time

	Model     string
	Patterns  []string
	Format    output.Format
	Output    string
	UTC       bool
	Color     bool
	NoColor   bool
	Relations bool
}

// NewCmdStatus returns "juju status [<selector>...]": report the model's machines,
// applications and units.
func NewCmdStatus(f *cmdutil.Factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Now:          f.Now,
		Client:       cmdutil.ClientFunc[statusAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "status [options] [<selector> ...]",
		Short: "Report the status of the model, its machines, applications and units",
		Long: `Report the status of the model. Selectors narrow it to applications, units or machines
by name, with "*" wildcards (juju status 'mysql*' wordpress/0 1); a unit brings its machine.

--relations (or --integrations) adds the Integration section to the tabular output; json and
yaml always list each application's relations.

An entity that is not alive shows its life and what its removal waits for in the Message
column ("dying: waiting for 2 units to be removed"); json and yaml show it as life,
removal-blocked-by and, once a forced removal is scheduled, forced-removal-at.

--format json and yaml are a stable interface for scripts.`,
		Example: "  juju status\n  juju status --relations\n  juju status mysql --format yaml\n  juju status --format json -o status.json",
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Color && opts.NoColor {
				return cmdutil.FlagErrorf("cannot mix --no-color and --color")
			}
			opts.Patterns = args
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Display times in UTC")
	cmd.Flags().BoolVar(&opts.Color, "color", false, "Use ANSI colour codes in tabular output, even when not on a terminal")
	cmd.Flags().BoolVar(&opts.NoColor, "no-color", false, "Disable ANSI colour codes in tabular output")
	cmd.Flags().BoolVar(&opts.Relations, "relations", false, "Show 'relations' section in tabular output")
	cmd.Flags().BoolVar(&opts.Relations, "integrations", false, "Show 'integrations' section in tabular output")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

func statusRun(ctx context.Context, opts *statusOptions) error {
	if opts.Relations && opts.Format != output.Tabular {
		fmt.Fprintln(opts.IO.ErrOut, "provided relations option is always enabled in non tabular formats")
	}
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	fs, err := c.FullStatus(ctx, model.UUID, opts.Patterns)
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	streams := *opts.IO
	streams.Color = opts.Color || (opts.IO.Color && !opts.NoColor && opts.Output == "")
	view := NewView(fs, model.Controller, opts.Now(), opts.UTC).WithColor(&streams).WithRelations(opts.Relations)
	if err := output.WriteFile(opts.Output, opts.Format, view, &streams); err != nil {
		return err
	}
	if view.Empty() {
		switch {
		case len(opts.Patterns) == 1:
			fmt.Fprintln(opts.IO.ErrOut, "Nothing matched specified filter.")
		case len(opts.Patterns) > 1:
			fmt.Fprintln(opts.IO.ErrOut, "Nothing matched specified filters.")
		default:
			fmt.Fprintf(opts.IO.ErrOut, "\nModel %q is empty.\n", model.Name)
		}
	}
	return nil
}
