package bundle

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one thing wrong with a bundle: where, under which key, and why.
type Error struct {
	Pos Pos
	// Key is the path to the value: "applications.wordpress.to".
	Key string
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is everything wrong with a bundle, in the order it was written. The first is the
// error's line; the others follow it, one a line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// err returns es sorted, or nil when empty.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.doc, b.Pos.doc), cmp.Compare(a.Pos.Line, b.Pos.Line))
	})
	// The same fault can be found twice (a relation checked from each side).
	return slices.CompactFunc(es, func(a, b *Error) bool { return a.Error() == b.Error() })
}

// Errorf makes an Error at pos under key.
func Errorf(pos Pos, key, format string, args ...any) *Error {
	return &Error{Pos: pos, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// collector gathers errors as they are found.
type collector struct{ errs Errors }

func (c *collector) add(pos Pos, key, format string, args ...any) {
	c.errs = append(c.errs, Errorf(pos, key, format, args...))
}

func (c *collector) err() error { return c.errs.err() }
