package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/output"
)

// RemoveFlags are the flags remove-unit, remove-application and remove-machine share.
type RemoveFlags struct {
	NoPrompt bool
	DryRun   bool
	Force    bool
	NoWait   bool
}

// AddRemoveFlags registers --no-prompt, --dry-run, --force and --no-wait; noun ("unit",
// "application", "machine") completes their help.
func AddRemoveFlags(cmd *cobra.Command, f *RemoveFlags, noun string) {
	article := "a"
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		article = "an"
	}
	cmd.Flags().BoolVar(&f.NoPrompt, "no-prompt", false, "Do not ask for confirmation")
	cmd.Flags().BoolVar(&f.DryRun, "dry-run", false, "Print what this command would remove without removing")
	cmd.Flags().BoolVar(&f.Force, "force", false, "Completely remove "+article+" "+noun+" and all its dependencies")
	cmd.Flags().BoolVar(&f.NoWait, "no-wait", false, "Rush through "+noun+" removal without waiting for each individual step to complete")
}

// Validate checks the flag combinations of a remove-* command, with its --wait and --timeout:
// --no-wait needs --force, --wait refuses --dry-run (which removes nothing to wait for), and
// --timeout needs --wait. Errors are usage errors.
func (f *RemoveFlags) Validate(cmd *cobra.Command, w *WaitFlags) error {
	if err := ValidateNoWait(f.Force, f.NoWait); err != nil {
		return err
	}
	if w.Wait && f.DryRun {
		return FlagErrorf("--wait with --dry-run not valid")
	}
	return w.Validate(cmd)
}

// ErrNoTerminal is why a command that would ask for confirmation fails when stdin is not a
// terminal: scripts must say --no-prompt, rather than hang on a question or act unasked.
var ErrNoTerminal = errors.New("cannot ask for confirmation: stdin is not a terminal; pass --no-prompt to go ahead without asking")

// RequireTerminal returns ErrNoTerminal unless stdin is a terminal: call it before a prompt.
func RequireTerminal(s *output.Streams) error {
	if !s.InTerminal {
		return ErrNoTerminal
	}
	return nil
}

// CheckPrompt fails with ErrNoTerminal ("<noun> removal: cannot ask…") when the removal would
// ask for confirmation and cannot: neither --dry-run nor --no-prompt, and stdin not a terminal.
// Commands call it before resolving the model, so nothing is sent to the controller.
func (f *RemoveFlags) CheckPrompt(s *output.Streams, noun string) error {
	if f.DryRun || f.NoPrompt {
		return nil
	}
	if err := RequireTerminal(s); err != nil {
		return fmt.Errorf("%s removal: %w", noun, err)
	}
	return nil
}

// ValidateNoWait refuses --no-wait without --force, in Juju's words.
func ValidateNoWait(force, noWait bool) error {
	if noWait && !force {
		return FlagErrorf("--no-wait without --force not valid")
	}
	return nil
}

// Removal is one run of a remove-* command, for RunRemoval.
type Removal struct {
	IO    *output.Streams
	Flags RemoveFlags
	// Noun names what is removed ("unit", "application", "machine"): it appears in the plan,
	// the failure lines and the abort error ("unit removal: aborted").
	Noun string
	// Request holds the model, the names and any command-specific field (KeepInstance);
	// RunRemoval sets Force, NoWait and DryRun from Flags.
	Request *jujupb.RemoveRequest
	// Remove sends a request to the controller.
	Remove func(ctx context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error)
	// Plan writes the plan lines of one result; nil means WriteRemovePlan with Noun.
	Plan func(w io.Writer, r *jujupb.RemoveResult)
	// Failure is the message of one failed result, without "ERROR "; nil means
	// "removing <noun> <name> failed: <error>".
	Failure func(r *jujupb.RemoveResult) string
	// Wait, when set (--wait), is called after a removal without failures with the names of
	// the entities removed, and waits until they are gone.
	Wait func(ctx context.Context, names []string) error
}

// ErrAborted is the answer to anything but "y" or "yes" at the prompt.
var ErrAborted = errors.New("aborted")

// RunRemoval runs Juju's remove flow:
//   - --dry-run: one dry-run call; the plan is printed and nothing changes;
//   - --no-prompt: the real call, and the plan lines of what it removed;
//   - otherwise, with a terminal on stdin: a dry-run call, the plan, then "Continue [y/N]? ";
//     only "y" or "yes" goes on to the real call, after which only failures are printed; a
//     plan that requires --force it does not have is refused before the question;
//   - otherwise (no terminal to ask on): nothing is sent, and the error says to pass
//     --no-prompt.
//
// Failed entities are reported on stderr as "ERROR removing ... failed: ..." while the others
// go on; the result is then ErrSilent. A dry run with failures shows the plan of the others,
// then the failures, and stops before the prompt. After a
// removal without failures, Wait (--wait) waits for the entities to be gone.
func RunRemoval(ctx context.Context, r *Removal) error {
	if err := r.Flags.CheckPrompt(r.IO, r.Noun); err != nil {
		return err
	}
	prompt := !r.Flags.DryRun && !r.Flags.NoPrompt
	if r.Flags.DryRun || prompt {
		results, err := r.call(ctx, true)
		if err != nil {
			return err
		}
		// The plan of what can go, then the errors of what cannot: a typo among several
		// names still shows what the others would take with them.
		var planned []*jujupb.RemoveResult
		for _, res := range results {
			if res.GetError() == "" {
				planned = append(planned, res)
			}
		}
		forced := r.forced(planned)
		if len(planned) > 0 {
			fmt.Fprintln(r.IO.ErrOut, "WARNING This command will perform the following actions:")
			for _, res := range planned {
				r.plan(res)
			}
			if len(forced) > 0 {
				fmt.Fprint(r.IO.ErrOut, "\nThis will require `--force`\n")
			}
		}
		if r.reportFailures(results) {
			return ErrSilent
		}
		if r.Flags.DryRun {
			return nil
		}
		// Validate, then ask: a removal that cannot succeed without --force is refused
		// before the question, not after the answer.
		if len(forced) > 0 {
			return fmt.Errorf("%s removal: removing %s requires --force; nothing was removed", r.Noun, strings.Join(forced, ", "))
		}
		if err := Confirm(ctx, r.IO); err != nil {
			return fmt.Errorf("%s removal: %w", r.Noun, err)
		}
	}
	results, err := r.call(ctx, false)
	if err != nil {
		return err
	}
	if !prompt {
		for _, res := range results {
			if res.GetError() == "" {
				r.plan(res)
			}
		}
	}
	if r.reportFailures(results) {
		return ErrSilent
	}
	if r.Wait == nil {
		return nil
	}
	names := make([]string, 0, len(results))
	for _, res := range results {
		names = append(names, res.GetName())
	}
	return r.Wait(ctx, names)
}

// Confirm asks "Continue [y/N]? " on stderr and reads one line: nil for "y" or "yes" in any
// case, ErrAborted for anything else or no input, ErrInterrupted at once when ctx ends (Ctrl-C).
func Confirm(ctx context.Context, s *output.Streams) error {
	fmt.Fprint(s.ErrOut, "\nContinue [y/N]? ")
	yes, err := ReadYesContext(ctx, s)
	if err != nil {
		return err
	}
	if !yes {
		return ErrAborted
	}
	return nil
}

// ErrInterrupted is the answer to Ctrl-C at a prompt: the command ends at once (exit 1), and
// nothing it would have sent after the prompt is sent.
var ErrInterrupted = errors.New("interrupted")

// ReadLine reads one line of an answer to a prompt from in, returning as soon as ctx ends
// (Ctrl-C cancels the command's context) with ErrInterrupted. A read from a terminal cannot be
// cancelled, so it runs aside and is abandoned then; the command is about to exit anyway. No
// input (end of file) is an empty answer.
func ReadLine(ctx context.Context, in io.Reader) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", ErrInterrupted
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return line, nil
	case <-ctx.Done():
		return "", ErrInterrupted
	}
}

// ReadYesContext reads an answer with ReadLine: true for "y" or "yes" in any case. When
// interrupted, it ends the prompt's line on stderr (the terminal shows ^C after the question)
// so that the error that follows starts a line of its own.
func ReadYesContext(ctx context.Context, s *output.Streams) (bool, error) {
	line, err := ReadLine(ctx, s.In)
	if err != nil {
		fmt.Fprintln(s.ErrOut)
		return false, err
	}
	return isYes(line), nil
}

func isYes(line string) bool {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// WriteRemovePlan writes the plan lines of one removed entity: "will remove <what>", then
// "- will remove unit <unit>" for each unit that goes with it.
func WriteRemovePlan(w io.Writer, what string, units []string) {
	fmt.Fprintf(w, "will remove %s\n", what)
	for _, u := range units {
		fmt.Fprintf(w, "- will remove unit %s\n", u)
	}
}

// call sends a copy of the request with the flags and dryRun set, and names each result the
// controller left unnamed after the entity asked for in its place.
func (r *Removal) call(ctx context.Context, dryRun bool) ([]*jujupb.RemoveResult, error) {
	req := proto.Clone(r.Request).(*jujupb.RemoveRequest)
	req.Force, req.NoWait, req.DryRun = r.Flags.Force, r.Flags.NoWait, dryRun
	results, err := r.Remove(ctx, req)
	if err != nil {
		return nil, err
	}
	for i, res := range results {
		if res.GetName() == "" && i < len(req.Names) {
			res.Name = req.Names[i]
		}
	}
	return results, nil
}

func (r *Removal) plan(res *jujupb.RemoveResult) {
	if r.Plan != nil {
		r.Plan(r.IO.Out, res)
		return
	}
	WriteRemovePlan(r.IO.Out, r.Noun+" "+res.GetName(), res.GetUnits())
}

// reportFailures prints the failed results and says whether there were any.
func (r *Removal) reportFailures(results []*jujupb.RemoveResult) bool {
	failed := false
	for _, res := range results {
		if res.GetError() != "" {
			r.reportFailure(res)
			failed = true
		}
	}
	return failed
}

func (r *Removal) reportFailure(res *jujupb.RemoveResult) {
	msg := fmt.Sprintf("removing %s %s failed: %s", r.Noun, res.GetName(), res.GetError())
	if r.Failure != nil {
		msg = r.Failure(res)
	}
	fmt.Fprintf(r.IO.ErrOut, "%s %s\n", output.Paint(r.IO, output.Red, "ERROR"), msg)
}

// forced names the entities of the plan that only go with --force ("machine 5"); none when
// --force is given.
func (r *Removal) forced(planned []*jujupb.RemoveResult) []string {
	if r.Flags.Force {
		return nil
	}
	var names []string
	for _, res := range planned {
		if res.GetRequiresForce() {
			names = append(names, r.Noun+" "+res.GetName())
		}
	}
	return names
}
