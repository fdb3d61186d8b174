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
// locking and eviction; without it a 2,000-row table lays out noticeably faster.
func init() { twwidth.SetCacheCapacity(0) }

func renderTable(w io.Writer, t Table) error {
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

// displayWidth is twwidth.Width with a fast path for plain printable ASCII, which skips the
// mutex-guarded width cache.
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return twwidth.Width(s)
		}
	}
	return len(s)
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
