// Package status holds "juju status".
package status

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/selector"
	"github.com/jujuclone/juju/output"
)

// statusAPI is the part of the client "juju status" uses: the status, and for --watch a watch
// of the model that says when to read it again.
type statusAPI interface {
	FullStatus(ctx context.Context, model string, patterns []string) (*jujupb.FullStatusResponse, error)
	Watch(ctx context.Context, req *jujupb.WatchRequest) (cmdutil.Watcher, error)
}

var _ statusAPI = cmdutil.WatchClient{}

// Formats are the values of status's --format.
var Formats = []output.Format{output.Tabular, output.JSON, output.YAML, output.Oneline, output.Short, output.Line, output.Summary}

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
	Watch     time.Duration

	// RetryCount and RetryDelay: how often, and how long apart, a status call that failed for a
	// transient reason is tried again (Juju's defaults: 3 and 100ms).
	RetryCount int
	RetryDelay time.Duration
}

// NewCmdStatus returns "juju status [<selector>...]": report the model's machines,
// applications and units.
func NewCmdStatus(f *cmdutil.Factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Now:          f.Now,
		Client: func(ctx context.Context) (statusAPI, error) {
			c, err := f.Client(ctx)
			if err != nil {
				return nil, err
			}
			return cmdutil.WatchClient{Client: c}, nil
		},
	}
	cmd := &cobra.Command{
		Use:   "status [options] [<selector> ...]",
		Short: "Report the status of the model, its machines, applications and units",
		Long: `Report the status of the model. Selectors narrow it to applications, units or machines
by name, with "*" wildcards (juju status 'mysql*' wordpress/0 1), or to what is in a status
(juju status error, juju status blocked): a unit brings its machine and subordinates, a
machine its units and containers.

--format is tabular (the default), json, yaml, oneline (also short or line: a line per unit)
or summary (subnets, ports, and counts of machines and units per status). --relations (or
--integrations) adds the Integration section to the tabular output; json and yaml always
list each application's relations.

Colour is on when stdout is a terminal; --color forces it, --no-color, NO_COLOR or TERM=dumb
turn it off. json and yaml are never coloured.

--watch 5s redraws the status in place on a terminal whenever the model changes, at most once
per interval (elsewhere it prints each new status after a blank line), until interrupted.

An entity that is not alive shows its life and what its removal waits for in the Message
column ("dying: waiting for 2 units to be removed"); json and yaml show it as life,
removal-blocked-by and, once a forced removal is scheduled, forced-removal-at.

--format json and yaml are a stable interface for scripts.`,
		Example: `  juju status
  juju status --relations
  juju status mysql --format yaml
  juju status 'wordpress/*' error
  juju status --format oneline
  juju status --watch 2s
  juju status --format json -o status.json`,
		Args:        cobra.ArbitraryArgs,
		Annotations: map[string]string{cmdutil.SeeAlso: "machines, show-application, show-unit, show-machine, wait-for"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Color && opts.NoColor {
				return cmdutil.FlagErrorf("cannot mix --no-color and --color")
			}
			if cmd.Flags().Changed("watch") && opts.Watch <= 0 {
				return cmdutil.FlagErrorf("invalid --watch interval %s: must be positive", opts.Watch)
			}
			if opts.RetryCount < 0 {
				return cmdutil.FlagErrorf("invalid --retry-count %d: must not be negative", opts.RetryCount)
			}
			if opts.RetryDelay < 0 {
				return cmdutil.FlagErrorf("invalid --retry-delay %s: must not be negative", opts.RetryDelay)
			}
			if opts.Watch > 0 && opts.Output != "" {
				return cmdutil.FlagErrorf("cannot use --watch with --output")
			}
			// Bad selectors are usage errors, found before anything is sent to the controller.
			if _, err := selector.ParseAll(args); err != nil {
				return cmdutil.FlagErrorf("%v", err)
			}
			opts.Patterns = args
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	output.AddFormatFlag(cmd, &opts.Format, output.Tabular, Formats...)
	output.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.UTC, "utc", false, "Display times in UTC")
	AddColorFlags(cmd, &opts.Color, &opts.NoColor)
	cmd.Flags().BoolVar(&opts.Relations, "relations", false, "Show 'relations' section in tabular output")
	cmd.Flags().BoolVar(&opts.Relations, "integrations", false, "Show 'integrations' section in tabular output")
	cmd.Flags().DurationVar(&opts.Watch, "watch", 0, "Redraw the status whenever it changes, at most once per `interval` (e.g. 2s)")
	cmd.Flags().IntVar(&opts.RetryCount, "retry-count", 3, "Number of times to retry a status call that failed to reach the controller")
	cmd.Flags().DurationVar(&opts.RetryDelay, "retry-delay", 100*time.Millisecond, "Time to wait between retry attempts")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// AddColorFlags registers --color and --no-color on cmd.
func AddColorFlags(cmd *cobra.Command, color, noColor *bool) {
	cmd.Flags().BoolVar(color, "color", false, "Use ANSI colour codes in output, even when not on a terminal")
	cmd.Flags().BoolVar(noColor, "no-color", false, "Disable ANSI colour codes in output")
}

// ColorStreams returns s with colour decided: forced by --color, else on when s has it (stdout a
// terminal, no NO_COLOR, TERM not dumb), --no-color is not given and output goes to stdout.
func ColorStreams(s *output.Streams, color, noColor bool, outputFile string) *output.Streams {
	c := *s
	c.Color = color || (s.Color && !noColor && outputFile == "")
	return &c
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
	streams := ColorStreams(opts.IO, opts.Color, opts.NoColor, opts.Output)
	if opts.Watch > 0 {
		return watchRun(ctx, opts, c, model, streams)
	}
	fs, err := fullStatusRetry(ctx, opts, c, model.UUID)
	if err != nil {
		return fmt.Errorf("getting status of model %q: %w", model.Name, err)
	}
	view := newView(opts, fs, model, streams)
	if err := output.WriteFile(opts.Output, opts.Format, view, streams); err != nil {
		return err
	}
	if note := emptyNote(view, model, opts.Patterns); note != "" {
		fmt.Fprint(opts.IO.ErrOut, note)
	}
	return nil
}

// fullStatusRetry reads the status, trying again up to opts.RetryCount times, opts.RetryDelay
// apart, while the controller cannot be reached or is busy, as Juju's --retry-count does. Other
// errors (a bad selector, no such model, no permission) would only repeat, so they end it.
func fullStatusRetry(ctx context.Context, opts *statusOptions, c statusAPI, model string) (*jujupb.FullStatusResponse, error) {
	for i := 0; ; i++ {
		fs, err := c.FullStatus(ctx, model, opts.Patterns)
		if err == nil || i >= opts.RetryCount || !transient(err) {
			return fs, err
		}
		t := time.NewTimer(opts.RetryDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// transient reports whether err may go away on its own: the controller unreachable or busy.
func transient(err error) bool {
	if errors.Is(err, apierr.Unavailable) || errors.Is(err, apierr.Contention) {
		return true
	}
	st, ok := grpcstatus.FromError(err)
	return ok && st.Code() == codes.Unavailable
}

func newView(opts *statusOptions, fs *jujupb.FullStatusResponse, model *cmdutil.ModelRef, s *output.Streams) *View {
	return NewView(fs, model.Controller, opts.Now(), opts.UTC).WithColor(s).WithRelations(opts.Relations)
}

// emptyNote is what stderr says after an empty status, as Juju does: nothing matched the
// selectors, or the model is empty.
func emptyNote(v *View, model *cmdutil.ModelRef, patterns []string) string {
	if !v.Empty() {
		return ""
	}
	switch {
	case len(patterns) == 1:
		return "Nothing matched specified filter.\n"
	case len(patterns) > 1:
		return "Nothing matched specified filters.\n"
	}
	return fmt.Sprintf("\nModel %q is empty.\n", model.Name)
}

// render writes the status of fs in opts.Format to a buffer.
func render(opts *statusOptions, fs *jujupb.FullStatusResponse, model *cmdutil.ModelRef, s *output.Streams) (*bytes.Buffer, *View, error) {
	var buf bytes.Buffer
	v := newView(opts, fs, model, s)
	if err := output.Write(&buf, opts.Format, v); err != nil {
		return nil, nil, err
	}
	return &buf, v, nil
}
