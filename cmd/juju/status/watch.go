package status

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/output"
)

// clearScreen moves the cursor home and clears the screen, as watch(1) does before each redraw.
const clearScreen = "\x1b[H\x1b[2J"

// watchRun is status --watch: print the status, then again whenever the controller reports a
// change in the model, at most once per opts.Watch, until ctx ends (Ctrl-C), which is success.
// On a terminal each status replaces the last; elsewhere each follows the last after a blank
// line. A status equal to the last one shown (only the clock moved) is not printed again.
func watchRun(ctx context.Context, opts *statusOptions, c statusAPI, model *cmdutil.ModelRef, s *output.Streams) error {
	// Watch first: every change after Watch returns is reported, so none falls between a read
	// and the wait that follows it.
	w, err := c.Watch(ctx, &jujupb.WatchRequest{Model: model.UUID, Targets: []*jujupb.WatchTarget{{Kind: "model"}}})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("watching model %q: %w", model.Name, err)
	}
	defer w.Close()
	changed, ended := cmdutil.FollowWatch(w)

	var last *jujupb.FullStatusResponse
	lastNote := ""
	for first := true; ; first = false {
		next := time.NewTimer(opts.Watch)
		fs, err := c.FullStatus(ctx, model.UUID, opts.Patterns)
		if err != nil {
			next.Stop()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("getting status of model %q: %w", model.Name, err)
		}
		if !sameStatus(last, fs) {
			last = fs
			buf, v, err := render(opts, fs, model, s)
			if err != nil {
				next.Stop()
				return err
			}
			switch {
			case s.IsTerminal:
				_, err = fmt.Fprint(s.Out, clearScreen+buf.String())
			case first:
				_, err = s.Out.Write(buf.Bytes())
			default:
				_, err = fmt.Fprint(s.Out, "\n"+buf.String())
			}
			if err != nil {
				next.Stop()
				return err
			}
			if note := emptyNote(v, model, opts.Patterns); note != lastNote {
				fmt.Fprint(opts.IO.ErrOut, note)
				lastNote = note
			}
		}
		// Wait for a change, then for the rest of the interval.
		select {
		case <-changed:
		case err := <-ended:
			next.Stop()
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil
			}
			return fmt.Errorf("watching model %q: %w", model.Name, err)
		case <-ctx.Done():
			next.Stop()
			return nil
		}
		select {
		case <-next.C:
		case <-ctx.Done():
			next.Stop()
			return nil
		}
	}
}

// sameStatus reports whether b shows what a shows: equal but for the controller's clock and the
// store revision (a change to something status does not show moves the revision).
func sameStatus(a, b *jujupb.FullStatusResponse) bool {
	if a == nil || b == nil {
		return false
	}
	// Compare with b's clock and revision set to a's, then put them back.
	ct, rev := b.ControllerTime, b.Revision
	b.ControllerTime, b.Revision = a.ControllerTime, a.Revision
	defer func() { b.ControllerTime, b.Revision = ct, rev }()
	return proto.Equal(a, b)
}
