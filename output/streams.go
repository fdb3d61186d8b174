// Package output holds everything the CLI needs to print: the standard streams, the --format and
// --output flags, Juju-style tables (the only tablewriter import), JSON/YAML encoding and colour.
package output

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// Streams are the three standard streams a command reads and writes, plus what is known about the
// terminals behind them and how chatty stderr should be.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTerminal reports whether Out is a terminal.
	IsTerminal bool
	// InTerminal reports whether In is a terminal: only then may a command prompt.
	InTerminal bool
	// ErrTerminal reports whether ErrOut is a terminal: only then is progress redrawn in place.
	ErrTerminal bool
	// Color enables ANSI colour in tabular output.
	Color bool
	// Quiet (--quiet) drops informational lines; Verbose (--verbose) adds detail lines. Results
	// on Out, warnings and errors are never dropped.
	Quiet   bool
	Verbose bool
}

// System returns the process's streams. Colour is on when stdout is a terminal, NO_COLOR is not set
// to a non-empty value and TERM is not "dumb".
func System() *Streams {
	tty := isTTY(os.Stdout)
	return &Streams{
		In:          os.Stdin,
		Out:         os.Stdout,
		ErrOut:      os.Stderr,
		IsTerminal:  tty,
		InTerminal:  isTTY(os.Stdin),
		ErrTerminal: isTTY(os.Stderr),
		Color:       tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
	}
}

func isTTY(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Infof writes one informational line to ErrOut ("Located local charm…", "created machine 3"),
// unless Quiet. A newline is added when format lacks one.
func (s *Streams) Infof(format string, args ...any) {
	if s.Quiet {
		return
	}
	writeLine(s.ErrOut, format, args...)
}

// Verbosef writes one detail line to ErrOut, only when Verbose.
func (s *Streams) Verbosef(format string, args ...any) {
	if !s.Verbose {
		return
	}
	writeLine(s.ErrOut, format, args...)
}

// Warningf writes "WARNING <msg>" to ErrOut, whatever Quiet says.
func (s *Streams) Warningf(format string, args ...any) {
	writeLine(s.ErrOut, "WARNING "+format, args...)
}

func writeLine(w io.Writer, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		msg += "\n"
	}
	_, _ = io.WriteString(w, msg)
}

// TestStreams returns streams for tests: no terminal, no colour, empty input; what is written to Out
// and ErrOut lands in the returned buffers.
func TestStreams() (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &Streams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}
