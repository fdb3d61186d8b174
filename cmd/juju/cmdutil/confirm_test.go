package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

// fakeRemover answers dry runs and real calls with their own results and records the requests.
type fakeRemover struct {
	dryRun, real []*jujupb.RemoveResult
	err          error
	reqs         []*jujupb.RemoveRequest
}

func (f *fakeRemover) remove(_ context.Context, req *jujupb.RemoveRequest) ([]*jujupb.RemoveResult, error) {
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return nil, f.err
	}
	if req.GetDryRun() {
		return f.dryRun, nil
	}
	return f.real, nil
}

// calls describes the requests as "dry-run" or "real", in order.
func (f *fakeRemover) calls() string {
	var s []string
	for _, r := range f.reqs {
		if r.GetDryRun() {
			s = append(s, "dry-run")
		} else {
			s = append(s, "real")
		}
	}
	return strings.Join(s, ",")
}

func twoUnits() []*jujupb.RemoveResult {
	return []*jujupb.RemoveResult{
		{Name: "mysql/1", Units: []string{"logging/0"}},
		{Name: "wordpress/0"},
	}
}

func TestRunRemoval(t *testing.T) {
	tests := []struct {
		name      string
		golden    string // default name
		flags     RemoveFlags
		terminal  bool
		in        string
		dryRun    []*jujupb.RemoveResult
		real      []*jujupb.RemoveResult
		wantCalls string
		wantErr   string
	}{
		{name: "no-prompt", flags: RemoveFlags{NoPrompt: true}, terminal: true, real: twoUnits(), wantCalls: "real"},
		{name: "no-terminal", real: twoUnits(), wantCalls: "",
			wantErr: "unit removal: cannot ask for confirmation: stdin is not a terminal; pass --no-prompt to go ahead without asking"},
		{name: "no-terminal-no-prompt", golden: "no-prompt", flags: RemoveFlags{NoPrompt: true}, real: twoUnits(), wantCalls: "real"},
		{name: "dry-run", flags: RemoveFlags{DryRun: true}, terminal: true, dryRun: twoUnits(), wantCalls: "dry-run"},
		{name: "dry-run-requires-force", flags: RemoveFlags{DryRun: true},
			dryRun: []*jujupb.RemoveResult{{Name: "mysql/1", Units: []string{"logging/0"}, RequiresForce: true}}, wantCalls: "dry-run"},
		{name: "dry-run-forced", flags: RemoveFlags{DryRun: true, Force: true},
			dryRun: []*jujupb.RemoveResult{{Name: "mysql/1", Units: []string{"logging/0"}, RequiresForce: true}}, wantCalls: "dry-run"},
		{name: "dry-run-failure", flags: RemoveFlags{DryRun: true},
			dryRun:    []*jujupb.RemoveResult{{Name: "mysql/1"}, {Name: "foo/0", Error: `unit "foo/0" does not exist`}},
			wantCalls: "dry-run", wantErr: ErrSilent.Error()},
		{name: "prompt-yes", terminal: true, in: "y\n", dryRun: twoUnits(), real: twoUnits(), wantCalls: "dry-run,real"},
		{name: "prompt-yes-upper", golden: "prompt-yes", terminal: true, in: " YES ", dryRun: twoUnits(), real: twoUnits(), wantCalls: "dry-run,real"},
		{name: "prompt-no", terminal: true, in: "n\n", dryRun: twoUnits(), wantCalls: "dry-run", wantErr: "unit removal: aborted"},
		{name: "prompt-eof", terminal: true, in: "", dryRun: twoUnits(), wantCalls: "dry-run", wantErr: "unit removal: aborted"},
		{name: "prompt-not-yes", golden: "prompt-no", terminal: true, in: "yesplease\ny\n", dryRun: twoUnits(), wantCalls: "dry-run", wantErr: "unit removal: aborted"},
		{name: "prompt-dry-run-failure", terminal: true, in: "y\n",
			dryRun:    []*jujupb.RemoveResult{{Name: "mysql/1"}, {Name: "foo/0", Error: `unit "foo/0" does not exist`}},
			wantCalls: "dry-run", wantErr: ErrSilent.Error()},
		// Validate, then ask: a plan that needs --force is refused before the question.
		{name: "prompt-requires-force", terminal: true, in: "y\n",
			dryRun:    []*jujupb.RemoveResult{{Name: "mysql/1", Units: []string{"logging/0"}, RequiresForce: true}, {Name: "wordpress/0"}},
			wantCalls: "dry-run", wantErr: "unit removal: removing unit mysql/1 requires --force; nothing was removed"},
		{name: "prompt-forced", terminal: true, in: "y\n", flags: RemoveFlags{Force: true},
			dryRun:    []*jujupb.RemoveResult{{Name: "mysql/1", Units: []string{"logging/0"}, RequiresForce: true}},
			real:      []*jujupb.RemoveResult{{Name: "mysql/1", Units: []string{"logging/0"}}},
			wantCalls: "dry-run,real"},
		{name: "dry-run-all-fail", flags: RemoveFlags{DryRun: true},
			dryRun:    []*jujupb.RemoveResult{{Name: "foo/0", Error: `unit "foo/0" does not exist`}},
			wantCalls: "dry-run", wantErr: ErrSilent.Error()},
		{name: "prompt-real-failure", terminal: true, in: "y\n", dryRun: twoUnits(),
			real:      []*jujupb.RemoveResult{{Name: "mysql/1", Error: `unit "mysql/1" is not alive`}, {Name: "wordpress/0"}},
			wantCalls: "dry-run,real", wantErr: ErrSilent.Error()},
		{name: "failures", flags: RemoveFlags{NoPrompt: true},
			real: []*jujupb.RemoveResult{
				{Name: "foo/0", Error: `unit "foo/0" does not exist`},
				{Name: "mysql/1", Units: []string{"logging/0"}},
				{Name: "telegraf/0", Error: `unit "telegraf/0" is a subordinate, to remove use remove-relation. Note: this will remove all units of "telegraf"`},
			},
			wantCalls: "real", wantErr: ErrSilent.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			ios.InTerminal = tt.terminal
			ios.In = strings.NewReader(tt.in)
			fake := &fakeRemover{dryRun: tt.dryRun, real: tt.real}
			err := RunRemoval(context.Background(), &Removal{
				IO:      ios,
				Flags:   tt.flags,
				Noun:    "unit",
				Request: &jujupb.RemoveRequest{Model: "uuid", Names: []string{"mysql/1", "wordpress/0"}},
				Remove:  fake.remove,
			})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if got := fake.calls(); got != tt.wantCalls {
				t.Errorf("calls = %s, want %s", got, tt.wantCalls)
			}
			name := tt.golden
			if name == "" {
				name = tt.name
			}
			golden.Assert(t, out.String(), "remove-flow/"+name+".stdout.golden")
			golden.Assert(t, errOut.String(), "remove-flow/"+name+".stderr.golden")
		})
	}
}

func TestRunRemovalRequest(t *testing.T) {
	ios, _, _ := output.TestStreams()
	fake := &fakeRemover{real: []*jujupb.RemoveResult{{}, {}}}
	err := RunRemoval(context.Background(), &Removal{
		IO:      ios,
		Flags:   RemoveFlags{NoPrompt: true, Force: true, NoWait: true},
		Noun:    "machine",
		Request: &jujupb.RemoveRequest{Model: "uuid", Names: []string{"3", "4"}, KeepInstance: true},
		Remove:  fake.remove,
		Plan: func(w io.Writer, r *jujupb.RemoveResult) {
			fmt.Fprintf(w, "custom %s\n", r.GetName())
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := fake.reqs[0]
	if r.GetModel() != "uuid" || strings.Join(r.GetNames(), ",") != "3,4" || !r.GetForce() || !r.GetNoWait() || !r.GetKeepInstance() || r.GetDryRun() {
		t.Errorf("request = %v", r)
	}
	if got := ios.Out.(fmt.Stringer).String(); got != "custom 3\ncustom 4\n" {
		t.Errorf("unnamed results were not named after the request: %q", got)
	}
}

func TestRunRemovalCustomFailure(t *testing.T) {
	ios, _, errOut := output.TestStreams()
	fake := &fakeRemover{real: []*jujupb.RemoveResult{{Name: "1", Error: `machine 1 has unit "mysql/0" assigned`}}}
	err := RunRemoval(context.Background(), &Removal{
		IO: ios, Flags: RemoveFlags{NoPrompt: true}, Noun: "machine",
		Request: &jujupb.RemoveRequest{Names: []string{"1"}},
		Remove:  fake.remove,
		Failure: func(r *jujupb.RemoveResult) string { return "removing machine failed: " + r.GetError() },
	})
	if !errors.Is(err, ErrSilent) {
		t.Errorf("err = %v, want ErrSilent", err)
	}
	if want := "ERROR removing machine failed: machine 1 has unit \"mysql/0\" assigned\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}

	ios.Color = true
	errOut.Reset()
	_ = RunRemoval(context.Background(), &Removal{
		IO: ios, Flags: RemoveFlags{NoPrompt: true}, Noun: "machine",
		Request: &jujupb.RemoveRequest{Names: []string{"1"}}, Remove: fake.remove,
	})
	if want := "\x1b[31mERROR\x1b[0m removing machine 1 failed: machine 1 has unit \"mysql/0\" assigned\n"; errOut.String() != want {
		t.Errorf("coloured stderr = %q, want %q", errOut.String(), want)
	}
}

func TestRunRemovalCallError(t *testing.T) {
	for _, flags := range []RemoveFlags{{NoPrompt: true}, {DryRun: true}} {
		ios, out, errOut := output.TestStreams()
		callErr := apierr.Errorf(apierr.Unavailable, "cannot connect to controller")
		fake := &fakeRemover{err: callErr}
		err := RunRemoval(context.Background(), &Removal{
			IO: ios, Flags: flags, Noun: "unit",
			Request: &jujupb.RemoveRequest{Names: []string{"mysql/0"}}, Remove: fake.remove,
		})
		if !errors.Is(err, apierr.Unavailable) || err.Error() != "cannot connect to controller" {
			t.Errorf("%+v: err = %v", flags, err)
		}
		if out.Len()+errOut.Len() != 0 {
			t.Errorf("%+v: printed %q %q", flags, out.String(), errOut.String())
		}
	}
}

func TestRunRemovalWait(t *testing.T) {
	results := []*jujupb.RemoveResult{{Name: "mysql/1"}, {Name: "wordpress/0"}}
	var waited []string
	wait := func(_ context.Context, names []string) error { waited = names; return nil }
	ios, _, _ := output.TestStreams()
	err := RunRemoval(context.Background(), &Removal{
		IO: ios, Flags: RemoveFlags{NoPrompt: true}, Noun: "unit",
		Request: &jujupb.RemoveRequest{Names: []string{"mysql/1", "wordpress/0"}},
		Remove:  (&fakeRemover{real: results}).remove, Wait: wait,
	})
	if err != nil || strings.Join(waited, " ") != "mysql/1 wordpress/0" {
		t.Errorf("err %v, waited for %q", err, waited)
	}

	// A failure is reported and nothing is waited for.
	waited = nil
	err = RunRemoval(context.Background(), &Removal{
		IO: ios, Flags: RemoveFlags{NoPrompt: true}, Noun: "unit",
		Request: &jujupb.RemoveRequest{Names: []string{"mysql/1", "foo/0"}},
		Remove:  (&fakeRemover{real: []*jujupb.RemoveResult{{Name: "mysql/1"}, {Name: "foo/0", Error: "nope"}}}).remove,
		Wait:    wait,
	})
	if !errors.Is(err, ErrSilent) || waited != nil {
		t.Errorf("err %v, waited for %q", err, waited)
	}
}

func TestCheckPrompt(t *testing.T) {
	ios, _, _ := output.TestStreams()
	for _, f := range []RemoveFlags{{NoPrompt: true}, {DryRun: true}} {
		if err := f.CheckPrompt(ios, "unit"); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	if err := (&RemoveFlags{}).CheckPrompt(ios, "machine"); !errors.Is(err, ErrNoTerminal) ||
		!strings.HasPrefix(err.Error(), "machine removal: cannot ask for confirmation") {
		t.Errorf("no terminal: %v", err)
	}
	ios.InTerminal = true
	if err := (&RemoveFlags{}).CheckPrompt(ios, "unit"); err != nil {
		t.Errorf("terminal: %v", err)
	}
}

func TestConfirm(t *testing.T) {
	for in, want := range map[string]error{
		"y\n": nil, "Y": nil, "yes\n": nil, "Yes\r\n": nil, "  y  \n": nil,
		"": ErrAborted, "\n": ErrAborted, "n\n": ErrAborted, "no": ErrAborted, "yy\n": ErrAborted, "\ny\n": ErrAborted,
	} {
		ios, _, errOut := output.TestStreams()
		ios.In = strings.NewReader(in)
		if err := Confirm(context.Background(), ios); err != want {
			t.Errorf("Confirm(%q) = %v, want %v", in, err, want)
		}
		if errOut.String() != "\nContinue [y/N]? " {
			t.Errorf("prompt = %q", errOut.String())
		}
	}
}

// stuckReader is a terminal nobody types on: Read calls onRead (once), then blocks until the
// test ends.
type stuckReader struct {
	onRead func()
	done   chan struct{}
}

func (r *stuckReader) Read([]byte) (int, error) {
	if r.onRead != nil {
		r.onRead()
		r.onRead = nil
	}
	<-r.done
	return 0, io.EOF
}

// Ctrl-C at the prompt (the command's context ends) answers at once, whatever stdin does.
func TestConfirmInterrupted(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	ios, _, errOut := output.TestStreams()
	ios.In = &stuckReader{onRead: cancel, done: done}
	if err := Confirm(ctx, ios); err != ErrInterrupted {
		t.Fatalf("Confirm = %v, want ErrInterrupted", err)
	}
	if errOut.String() != "\nContinue [y/N]? \n" {
		t.Errorf("stderr = %q: the prompt's line must be ended", errOut.String())
	}
	// Already interrupted: no read at all.
	ios.In = &stuckReader{onRead: func() { t.Error("read after the interrupt") }, done: done}
	if _, err := ReadLine(ctx, ios.In); err != ErrInterrupted {
		t.Errorf("ReadLine after the interrupt = %v", err)
	}
}

// Ctrl-C at remove-*'s prompt: the dry run was sent, the removal is not.
func TestRunRemovalInterrupted(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	ios, _, errOut := output.TestStreams()
	ios.InTerminal = true
	ios.In = &stuckReader{onRead: cancel, done: done}
	fake := &fakeRemover{dryRun: twoUnits(), real: twoUnits()}
	err := RunRemoval(ctx, &Removal{IO: ios, Noun: "unit", Remove: fake.remove,
		Request: &jujupb.RemoveRequest{Model: "uuid", Names: []string{"mysql/1", "wordpress/0"}}})
	if err == nil || err.Error() != "unit removal: interrupted" || !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error = %v", err)
	}
	if got := fake.calls(); got != "dry-run" {
		t.Errorf("calls = %s, want only the dry run", got)
	}
	if !strings.HasSuffix(errOut.String(), "Continue [y/N]? \n") {
		t.Errorf("stderr = %q", errOut.String())
	}
}

func TestRemoveFlags(t *testing.T) {
	tests := []struct {
		args, wantErr string
		want          RemoveFlags
	}{
		{args: "", want: RemoveFlags{}},
		{args: "--no-prompt --dry-run", want: RemoveFlags{NoPrompt: true, DryRun: true}},
		{args: "--force --no-wait", want: RemoveFlags{Force: true, NoWait: true}},
		{args: "--no-wait", wantErr: "--no-wait without --force not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got RemoveFlags
			var wait WaitFlags
			cmd := &cobra.Command{Use: "remove-thing", RunE: func(cmd *cobra.Command, _ []string) error { return got.Validate(cmd, &wait) }}
			AddRemoveFlags(cmd, &got, "application")
			AddWaitFlags(cmd, &wait, "the applications are gone")
			cmd.SetArgs(strings.Fields(tt.args))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tt.wantErr != "" {
				var fe *FlagError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want usage error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("flags = %+v, %v; want %+v", got, err, tt.want)
			}
			if u := cmd.Flags().Lookup("force").Usage; u != "Completely remove an application and all its dependencies" {
				t.Errorf("--force usage = %q", u)
			}
		})
	}
}
