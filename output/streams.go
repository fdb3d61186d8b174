// Package output holds everything the CLI needs to print: the standard streams, the --format and
// --output flags, Juju-style tables (the only tablewriter import), JSON/YAML encoding and colour.
package output

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// Streams are the three standard streams a command reads and writes, plus what is known about the
// terminal behind Out.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTerminal reports whether Out is a terminal.
	IsTerminal bool
	// InTerminal reports whether In is a terminal: only then may a command prompt.
	InTerminal bool
	// Color enables ANSI colour in tabular output.
	Color bool
}

// System returns the process's streams. Colour is on when stdout is a terminal, NO_COLOR is not set
// to a non-empty value and TERM is not "dumb".
func System() *Streams {
	fd := os.Stdout.Fd()
	tty := isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
	return &Streams{
		In:         os.Stdin,
		Out:        os.Stdout,
		ErrOut:     os.Stderr,
		IsTerminal: tty,
		InTerminal: isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd()),
		Color:      tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
	}
}

// TestStreams returns streams for tests: no terminal, no colour, empty input; what is written to Out
// and ErrOut lands in the returned buffers.
func TestStreams() (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &Streams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}
