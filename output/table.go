package output

import (
	"bufio"
	"io"

	"github.com/olekukonko/ll"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// Table is one section of tabular output.
type Table struct {
	Header []string
	Rows   [][]string
	// RightAlign lists the indexes of right-aligned columns.
	RightAlign []int
}

// Tabler is a view that has a tabular rendering.
type Tabler interface {
	Table() []Table
}

// columnGap is the padding after each cell, as in Juju's tabwriter (padding 2).
const columnGap = "  "

// WriteTables renders tables Juju-style: columns padded to their widest cell plus two spaces, no
// borders, headers as given, trailing spaces trimmed, one blank line between tables. Tables without
// rows are skipped.
func WriteTables(w io.Writer, tables ...Table) error {
	bw := bufio.NewWriter(w)
	first := true
	for _, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		if !first {
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		first = false
		if err := renderTable(bw, t); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Every status cell is distinct (unit names, messages), so tablewriter's width cache only costs
// locking and eviction.
func init() { twwidth.SetCacheCapacity(0) }

// renderTable lays t out with columnar, a tabwriter-class renderer (one pass for the widths, one
// for the lines), whenever every cell is a single line; tablewriter lays out the rest (cells with
// line breaks or tabs, ragged rows), whose rules (a row of several lines, a tab's width) columnar
// does not reimplement. Both give the same bytes for single-line cells (table_test.go checks
// columnar against tablewriter's stock renderer), so no output changes with a table's size.
// Why not tablewriter for everything: it costs ~16 µs a row, so the 20,000 rows of a 10,000-unit
// status took ~200 ms, ~8× what text/tabwriter takes for the same cells (scripts/bench).
func renderTable(w *bufio.Writer, t Table) error {
	if done, err := columnar(w, t); done || err != nil {
		return err
	}
	return renderTablewriter(w, t)
}

// columnar writes t, each cell padded to its column's widest cell, then columnGap (right-aligned
// columns padded on the left), trailing spaces trimmed. It writes nothing and returns false when
// a row has not the header's number of cells (the first row's, without a header) or a cell holds
// a control character other than the escape of a colour.
func columnar(w *bufio.Writer, t Table) (bool, error) {
	lines := t.Rows
	if len(t.Header) > 0 {
		lines = make([][]string, 0, len(t.Rows)+1)
		lines = append(append(lines, t.Header), t.Rows...)
	}
	ncols := len(lines[0])
	for _, l := range lines {
		if len(l) != ncols {
			return false, nil
		}
	}
	right := make([]bool, ncols)
	for _, i := range t.RightAlign {
		if i >= 0 && i < ncols {
			right[i] = true
		}
	}
	// Each cell's display width, measured once.
	cellWidth := make([]int32, len(lines)*ncols)
	colWidth := make([]int, ncols)
	for i, l := range lines {
		for col, c := range l {
			n, ok := plainWidth(c)
			if !ok {
				return false, nil
			}
			cellWidth[i*ncols+col] = int32(n)
			colWidth[col] = max(colWidth[col], n)
		}
	}
	var b []byte
	for i, l := range lines {
		b = b[:0]
		for col, c := range l {
			pad := colWidth[col] - int(cellWidth[i*ncols+col])
			if right[col] {
				b = appendSpaces(b, pad)
				b = append(b, c...)
			} else {
				b = append(b, c...)
				b = appendSpaces(b, pad)
			}
			b = append(b, columnGap...)
		}
		for len(b) > 0 && b[len(b)-1] == ' ' {
			b = b[:len(b)-1]
		}
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return true, err
		}
	}
	return true, nil
}

// plainWidth is displayWidth(s), and false when s holds a control character (a line break, a
// tab...) other than the escape starting a colour.
func plainWidth(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				return 0, false
			}
			i = j
		case c >= 0x80:
			// Bytes of multi-byte characters are all ≥ 0x80: the rest holds a control character
			// only if it has such a byte.
			for j := i + 1; j < len(s); j++ {
				if b := s[j]; b < 0x20 && b != 0x1b || b == 0x7f {
					return 0, false
				}
			}
			return twwidth.Width(s), true
		default:
			return 0, false
		}
	}
	return n, true
}

// renderTablewriter lays t out with tablewriter and writes it with columnRenderer.
func renderTablewriter(w io.Writer, t Table) error {
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(&columnRenderer{}),
		tablewriter.WithConfig(tableConfig(t.alignments())))
	if len(t.Header) > 0 {
		h := make([]any, len(t.Header))
		for i, s := range t.Header {
			h[i] = s
		}
		tbl.Header(h...)
	}
	if err := tbl.Bulk(t.Rows); err != nil {
		return err
	}
	return tbl.Render()
}

// alignments is the per-column alignment: left except RightAlign.
func (t Table) alignments() []tw.Align {
	ncols := len(t.Header)
	for _, r := range t.Rows {
		ncols = max(ncols, len(r))
	}
	align := make([]tw.Align, ncols)
	for i := range align {
		align[i] = tw.AlignLeft
	}
	for _, i := range t.RightAlign {
		if i >= 0 && i < ncols {
			align[i] = tw.AlignRight
		}
	}
	return align
}

// tableConfig lays cells out with no wrapping, truncation, trimming or header reformatting, and a
// right padding of columnGap.
func tableConfig(align []tw.Align) tablewriter.Config {
	cell := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
		Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: columnGap, Overwrite: true}},
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft, PerColumn: align},
	}
	return tablewriter.Config{
		Header: cell,
		Row:    cell,
		Footer: cell,
		// TrimSpace off keeps the indentation of subordinate units.
		Behavior: tw.Behavior{TrimSpace: tw.Off, TrimTab: tw.Off, TrimLine: tw.Off},
	}
}

// borderless is the rendition the layout engine sees: no borders, separators or lines.
var borderless = tw.Rendition{
	Borders: tw.BorderNone,
	Symbols: tw.NewSymbols(tw.StyleNone),
	Settings: tw.Settings{
		Separators: tw.Separators{ShowHeader: tw.Off, ShowFooter: tw.Off, BetweenRows: tw.Off, BetweenColumns: tw.Off},
		Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.Off, ShowFooterLine: tw.Off},
	},
}

// columnRenderer writes the lines tablewriter lays out. It replaces the stock Blueprint renderer,
// which costs ~25 µs per row (≈50 ms for a 2,000-unit status) in per-cell formatting; tablewriter
// still computes widths, alignment and multi-line cells. Output equals Blueprint's with the
// borderless rendition, minus trailing spaces (checked in table_test.go).
type columnRenderer struct {
	w   io.Writer
	buf []byte
	err error
}

var _ tw.Renderer = (*columnRenderer)(nil)

func (r *columnRenderer) Start(w io.Writer) error                { r.w = w; return nil }
func (r *columnRenderer) Header(_ [][]string, ctx tw.Formatting) { r.line(ctx) }
func (r *columnRenderer) Row(_ []string, ctx tw.Formatting)      { r.line(ctx) }
func (r *columnRenderer) Footer(_ [][]string, ctx tw.Formatting) { r.line(ctx) }
func (r *columnRenderer) Line(tw.Formatting)                     {}
func (r *columnRenderer) Config() tw.Rendition                   { return borderless }
func (r *columnRenderer) Close() error                           { return r.err }
func (r *columnRenderer) Logger(*ll.Logger)                      {}

func (r *columnRenderer) line(ctx tw.Formatting) {
	if r.err != nil {
		return
	}
	b := r.buf[:0]
	n := len(ctx.Row.Current)
	for col := range n {
		c := ctx.Row.Current[col]
		// Widths include the cell's padding.
		pad := max(ctx.Row.Widths.Get(col)-len(columnGap)-displayWidth(c.Data), 0)
		if c.Align == tw.AlignRight {
			b = appendSpaces(b, pad)
			b = append(b, c.Data...)
		} else {
			b = append(b, c.Data...)
			b = appendSpaces(b, pad)
		}
		b = append(b, columnGap...)
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	b = append(b, '\n')
	r.buf = b
	_, r.err = r.w.Write(b)
}

// displayWidth is twwidth.Width with a fast path for printable ASCII and the SGR sequences of
// colour ("\x1b[1;31m", no width), which skips the mutex-guarded width code.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			n++
			continue
		}
		if c != 0x1b || i+1 >= len(s) || s[i+1] != '[' {
			return twwidth.Width(s)
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j >= len(s) || s[j] != 'm' {
			return twwidth.Width(s)
		}
		i = j
	}
	return n
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
