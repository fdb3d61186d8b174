package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// logStream is a stream of log records, as *client.LogStream.
type logStream interface {
	// Next blocks until the next record; io.EOF ends a --no-tail stream, context.Canceled an
	// interrupted one.
	Next() (*jujupb.LogRecord, error)
	Close()
}

var _ logStream = (*client.LogStream)(nil)

// debugLogAPI is the part of the client "juju debug-log" uses.
type debugLogAPI interface {
	DebugLog(ctx context.Context, req *jujupb.DebugLogRequest) (logStream, error)
}

// debugLogClient makes *client.Client a debugLogAPI: its DebugLog returns the concrete stream.
type debugLogClient struct{ *client.Client }

func (c debugLogClient) DebugLog(ctx context.Context, req *jujupb.DebugLogRequest) (logStream, error) {
	s, err := c.Client.DebugLog(ctx, req)
	if err != nil {
		return nil, err
	}
	return s, nil
}

type debugLogOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (debugLogAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)
	// Location is the zone of local times (time.Local when nil).
	Location *time.Location

	Model         string
	Include       []string
	Exclude       []string
	IncludeModule []string
	ExcludeModule []string
	Level         string
	// Lines is how many of the latest records to start with (0: all of them); Limit, when
	// set, is how many to print before exiting (0: all of them).
	Lines    uint
	Limit    uint
	HasLimit bool
	Replay   bool
	// NoTail stops after the records already in the log; Tail follows. With neither, the
	// log is followed only when stdout is a terminal, as Juju does.
	NoTail bool
	Tail   bool
	UTC    bool
	Date   bool
	MS     bool
}

// debugLevels are the levels --level takes, lowest first.
var debugLevels = []string{"TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

const defaultLines = 10

// NewCmdDebugLog returns "juju debug-log": show the model's log and follow it.
func NewCmdDebugLog(f *cmdutil.Factory, runF func(*debugLogOptions) error) *cobra.Command {
	opts := &debugLogOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client: func(ctx context.Context) (debugLogAPI, error) {
			c, err := f.Client(ctx)
			if err != nil {
				return nil, err
			}
			return debugLogClient{c}, nil
		},
	}
	cmd := &cobra.Command{
		Use:   "debug-log [options]",
		Short: "Display the log messages of a model",
		Long: `Show the last lines of the model's log and, on a terminal, follow it until interrupted (Ctrl-C).
The log holds what the agents report: the output of charm hooks and the messages charms
write with juju-log.

Each line reads <entity>: <time> <level> <module> <message>:

  unit-mysql-0: 14:05:33 INFO unit.mysql/0.juju-log installing mysql

--include and --exclude select entities: a unit (mysql/0 or unit-mysql-0), every unit of an
application (mysql), a machine (1 or machine-1); "*" matches any characters. They may be
repeated or given comma-separated lists. --include-module and --exclude-module select modules
by prefix (unit.mysql/0 selects unit.mysql/0.juju-log). --level hides messages below it
(TRACE, DEBUG, INFO, WARNING, ERROR, CRITICAL).

How much is shown, and whether the log is then followed:
  --lines N (-n)  the last N lines (10 by default, 0 for all), then follow (implies --tail)
  --limit N       the last N lines (0 for all), then exit (implies --no-tail)
  --replay        start from the beginning of the log; with --limit N, its first N lines
  --tail          follow the log after the lines already in it
  --no-tail       exit after the lines already in it
Without --tail, --no-tail, --lines or --limit the log is followed only when the output is
a terminal: "juju debug-log | grep ..." or a script ends at the end of the log.
These cannot be combined: --tail with --no-tail or --limit, --lines with --no-tail,
--limit or --replay.

Times are local unless --utc; --date adds the date and --ms the milliseconds.`,
		Example: `  juju debug-log
  juju debug-log --include mysql/0 --level WARNING
  juju debug-log -i mysql -x mysql/1 --include-module unit.mysql
  juju debug-log --limit 100
  juju debug-log --replay --no-tail --date --utc`,
		Annotations: map[string]string{cmdutil.SeeAlso: "status, show-unit, resolved"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			lines, limit := fl.Changed("lines"), fl.Changed("limit")
			opts.HasLimit = limit
			// --tail=false asks for what --no-tail does.
			if fl.Changed("tail") && !opts.Tail {
				if opts.NoTail {
					return cmdutil.FlagErrorf("setting --tail and --no-tail not valid")
				}
				opts.NoTail = true
			}
			switch {
			case opts.Tail && opts.NoTail:
				return cmdutil.FlagErrorf("setting --tail and --no-tail not valid")
			case opts.NoTail && lines:
				return cmdutil.FlagErrorf("setting --no-tail and --lines not valid")
			case opts.Tail && limit:
				return cmdutil.FlagErrorf("setting --tail and --limit not valid")
			case limit && lines:
				return cmdutil.FlagErrorf("setting --limit and --lines not valid")
			case opts.Replay && lines:
				return cmdutil.FlagErrorf("setting --replay and --lines not valid")
			}
			switch {
			case limit:
				opts.NoTail = true
			case lines:
				opts.Tail = true
			case !opts.Tail && !opts.NoTail:
				opts.Tail = opts.IO.IsTerminal
				opts.NoTail = !opts.Tail
			}
			if opts.Level != "" {
				level := strings.ToUpper(opts.Level)
				if level == "WARN" {
					level = "WARNING"
				}
				if !slices.Contains(debugLevels, level) {
					return cmdutil.FlagErrorf("level value %q is not one of %s", opts.Level, `"`+strings.Join(debugLevels, `", "`)+`"`)
				}
				opts.Level = level
			}
			opts.Include = splitLists(opts.Include)
			opts.Exclude = splitLists(opts.Exclude)
			opts.IncludeModule = splitLists(opts.IncludeModule)
			opts.ExcludeModule = splitLists(opts.ExcludeModule)
			if runF != nil {
				return runF(opts)
			}
			return debugLogRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Include, "include", "i", nil, "Only show messages of these entities (repeatable, comma-separated)")
	fl.StringArrayVarP(&opts.Exclude, "exclude", "x", nil, "Do not show messages of these entities (repeatable, comma-separated)")
	fl.StringArrayVar(&opts.IncludeModule, "include-module", nil, "Only show messages of modules starting with these (repeatable, comma-separated)")
	fl.StringArrayVar(&opts.ExcludeModule, "exclude-module", nil, "Do not show messages of modules starting with these (repeatable, comma-separated)")
	fl.StringVarP(&opts.Level, "level", "l", "", "Lowest level shown: TRACE, DEBUG, INFO, WARNING, ERROR or CRITICAL")
	fl.UintVarP(&opts.Lines, "lines", "n", defaultLines, "Show this many of the latest messages (0: all) and continue to append new ones")
	fl.UintVar(&opts.Limit, "limit", 0, "Show this many of the latest messages (0: all) and then exit")
	fl.BoolVar(&opts.Replay, "replay", false, "Show the whole log, from its beginning")
	fl.BoolVar(&opts.NoTail, "no-tail", false, "Show the messages already in the log and then exit")
	fl.BoolVar(&opts.Tail, "tail", false, "Show the messages already in the log and continue to append new ones")
	fl.BoolVar(&opts.UTC, "utc", false, "Show times in UTC")
	fl.BoolVar(&opts.Date, "date", false, "Show dates as well as times")
	fl.BoolVar(&opts.MS, "ms", false, "Show times to the millisecond")
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// splitLists flattens repeated flag values that may hold comma-separated lists.
func splitLists(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func debugLogRun(ctx context.Context, opts *debugLogOptions) error {
	m, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	req := debugLogRequest(m.UUID, opts)
	// Interrupting (Ctrl-C cancels ctx) is how following ends: it is a success, not an error.
	interrupted := func(err error) bool { return errors.Is(err, context.Canceled) || ctx.Err() != nil }
	s, err := c.DebugLog(ctx, req)
	if err != nil {
		if interrupted(err) {
			return nil
		}
		return fmt.Errorf("reading the log of model %q: %w", m.Name, err)
	}
	defer s.Close()
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	if opts.UTC {
		loc = time.UTC
	}
	layout := "15:04:05"
	if opts.MS {
		layout += ".000"
	}
	if opts.Date {
		layout = "2006-01-02 " + layout
	}
	for {
		r, err := s.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && interrupted(err):
			return nil
		case err != nil:
			return fmt.Errorf("reading the log of model %q: %w", m.Name, err)
		}
		if _, err := fmt.Fprintf(opts.IO.Out, "%s: %s %s %s %s\n", r.GetEntity(),
			time.Unix(0, r.GetTime()).In(loc).Format(layout), paintLevel(opts.IO, r.GetLevel()),
			r.GetModule(), r.GetMessage()); err != nil {
			return err
		}
	}
}

// debugLogRequest turns the options into the request: the last --lines or --limit records, or
// (--replay, or 0 for all of them) the log from its beginning, --limit ending the stream.
func debugLogRequest(model string, opts *debugLogOptions) *jujupb.DebugLogRequest {
	req := &jujupb.DebugLogRequest{
		Model: model, Include: opts.Include, Exclude: opts.Exclude,
		IncludeModule: opts.IncludeModule, ExcludeModule: opts.ExcludeModule,
		Level: opts.Level, Replay: opts.Replay, NoTail: opts.NoTail,
	}
	clamp := func(n uint) int32 { return int32(min(n, 1<<31-1)) }
	backlog := opts.Lines
	if opts.HasLimit {
		backlog = opts.Limit
		req.Limit = clamp(opts.Limit)
	}
	switch {
	case opts.Replay:
	case backlog == 0:
		req.Replay = true
	default:
		req.Lines = clamp(backlog)
	}
	return req
}

// paintLevel colours warnings and errors on a terminal.
func paintLevel(s *output.Streams, level string) string {
	switch level {
	case "WARNING":
		return output.Paint(s, output.Yellow, level)
	case "ERROR", "CRITICAL":
		return output.Paint(s, output.Red, level)
	}
	return level
}
