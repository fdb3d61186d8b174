package output

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
)

var appTable = Table{
	Header: []string{"App", "Version", "Status", "Scale", "Charm", "Channel", "Rev", "Exposed", "Message"},
	Rows: [][]string{
		{"mysql", "8.0.36", "active", "1", "mysql", "8.0/stable", "240", "no", "Primary"},
		{"telegraf", "", "active", "1", "telegraf", "latest/stable", "75", "no", ""},
		{"wordpress", "", "waiting", "0/1", "wordpress", "latest/stable", "12", "no", "waiting for machine"},
	},
	RightAlign: []int{3, 6},
}

var unitTable = Table{
	Header: []string{"Unit", "Workload", "Agent", "Machine", "Public address", "Ports", "Message"},
	Rows: [][]string{
		{"mysql/0*", "active", "idle", "0", "10.0.0.10", "3306/tcp", "Primary"},
		{"  telegraf/0*", "active", "idle", "", "10.0.0.10", "9103/tcp", ""},
		{"wordpress/0", "waiting", "allocating", "1", "", "", "waiting for machine"},
	},
}

func TestWriteTablesGolden(t *testing.T) {
	long := strings.Repeat("a long message that must neither wrap nor be cut ", 5)
	tests := []struct {
		name, golden string
		tables       []Table
	}{
		{name: "sections", golden: "output/sections.tabular.golden", tables: []Table{appTable, unitTable}},
		{name: "empty tables skipped", golden: "output/skip-empty.tabular.golden",
			tables: []Table{{Header: []string{"SAAS", "Status"}}, unitTable, {Header: []string{"Offer"}, Rows: nil}, appTable}},
		{name: "long and wide cells", golden: "output/wide.tabular.golden", tables: []Table{{
			Header: []string{"Name", "N", "Message"},
			Rows: [][]string{
				{"日本語", "7", long},
				{"héllo wörld", "1234", "tab\there"},
				{"x", "", ""},
			},
			RightAlign: []int{1},
		}}},
		{name: "no header", golden: "output/no-header.tabular.golden", tables: []Table{{
			Rows: [][]string{{"a", "bb", "c"}, {"dddd", "e", "f"}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteTables(&buf, tt.tables...); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, buf.String(), tt.golden)
		})
	}
}

func TestWriteTablesLayout(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTables(&buf, appTable, unitTable); err != nil {
		t.Fatal(err)
	}
	want := `App        Version  Status   Scale  Charm      Channel        Rev  Exposed  Message
mysql      8.0.36   active       1  mysql      8.0/stable     240  no       Primary
telegraf            active       1  telegraf   latest/stable   75  no
wordpress           waiting    0/1  wordpress  latest/stable   12  no       waiting for machine

Unit           Workload  Agent       Machine  Public address  Ports     Message
mysql/0*       active    idle        0        10.0.0.10       3306/tcp  Primary
  telegraf/0*  active    idle                 10.0.0.10       9103/tcp
wordpress/0    waiting   allocating  1                                  waiting for machine
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s\n%s", got, want, golden.Diff(want, got))
	}
}

func TestWriteTablesEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTables(&buf, Table{Header: []string{"A"}}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("empty table printed %q", buf.String())
	}
}

func TestWriteTablesColor(t *testing.T) {
	s := &Streams{Color: true}
	var buf bytes.Buffer
	tbl := Table{Header: []string{"Unit", "Agent", "Message"}, Rows: [][]string{
		{"a/0", Colorize(s, "idle", "idle"), "x"},
		{"a/1", Colorize(s, "allocating", "allocating"), "y"},
	}}
	if err := WriteTables(&buf, tbl); err != nil {
		t.Fatal(err)
	}
	// Escape codes must not count towards the column width.
	want := "Unit  Agent       Message\n" +
		"a/0   \x1b[32midle\x1b[0m        x\n" +
		"a/1   \x1b[33mallocating\x1b[0m  y\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// blueprint renders t with tablewriter's stock renderer in the borderless configuration.
func blueprint(t Table) (string, error) {
	var buf bytes.Buffer
	cfg := tableConfig(t.alignments())
	tbl := tablewriter.NewTable(&buf, tablewriter.WithRenderer(renderer.NewBlueprint(borderless)), tablewriter.WithConfig(cfg))
	if len(t.Header) > 0 {
		h := make([]any, len(t.Header))
		for i, s := range t.Header {
			h[i] = s
		}
		tbl.Header(h...)
	}
	if err := tbl.Bulk(t.Rows); err != nil {
		return "", err
	}
	if err := tbl.Render(); err != nil {
		return "", err
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n"), nil
}

func TestRendererMatchesBlueprint(t *testing.T) {
	tables := []Table{appTable, unitTable, bigTable(50), {
		Header:     []string{"Name", "N", "Message"},
		Rows:       [][]string{{"日本語", "7", "x"}, {"héllo", "1234", ""}, {"", "", "multi\nline"}},
		RightAlign: []int{1},
	}}
	for i, tbl := range tables {
		want, err := blueprint(tbl)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteTables(&buf, tbl); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != want {
			t.Errorf("table %d differs from Blueprint:\n%s", i, golden.Diff(want, got))
		}
	}
}

func bigTable(n int) Table {
	rows := make([][]string, n)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("app%d/%d", i%10, i), "active", "idle", fmt.Sprint(i), fmt.Sprintf("10.0.%d.%d", i/250, i%250), "80/tcp", "ready"}
	}
	return Table{Header: []string{"Unit", "Workload", "Agent", "Machine", "Public address", "Ports", "Message"}, Rows: rows}
}

// BenchmarkTable1000 renders a status-sized Unit table: 2,000 rows × 7 columns.
func BenchmarkTable1000(b *testing.B) {
	tbl := bigTable(2000)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteTables(&buf, tbl); err != nil {
			b.Fatal(err)
		}
	}
}

// randomTable is a table of single-line cells of the kinds status prints: ASCII, wide and
// combining characters, colour, empty cells, inner and trailing spaces.
func randomTable(r *rand.Rand) Table {
	pieces := []string{"", "", "a", "mysql/10*", "  telegraf/0", "10.0.0.1", "80,443/tcp", "日本語", "héllo", "e\u0301",
		"\x1b[32mactive\x1b[0m", "\x1b[1mUnit\x1b[0m", "x ", "  ", "a long message that goes on", "0/lxd/12", "🙂"}
	ncols := 1 + r.IntN(8)
	cell := func() string {
		var b strings.Builder
		for range r.IntN(3) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	var t Table
	if r.IntN(4) > 0 {
		for range ncols {
			t.Header = append(t.Header, cell())
		}
	}
	for range 1 + r.IntN(6) {
		row := make([]string, ncols)
		for i := range row {
			row[i] = cell()
		}
		t.Rows = append(t.Rows, row)
	}
	for i := range ncols {
		if r.IntN(3) == 0 {
			t.RightAlign = append(t.RightAlign, i)
		}
	}
	return t
}

// columnar must give tablewriter's bytes: for random tables, against tablewriter with our line
// writer (the path multi-line tables take) and against its stock Blueprint renderer.
func TestColumnarMatchesTablewriter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		tbl := randomTable(r)
		var got, viaTW bytes.Buffer
		bw := bufio.NewWriter(&got)
		if done, err := columnar(bw, tbl); !done || err != nil {
			t.Fatalf("table %d %#v: columnar = %v, %v", i, tbl, done, err)
		}
		bw.Flush()
		if err := renderTablewriter(&viaTW, tbl); err != nil {
			t.Fatal(err)
		}
		if got.String() != viaTW.String() {
			t.Fatalf("table %d %#v:\n%s", i, tbl, golden.Diff(viaTW.String(), got.String()))
		}
		if len(tbl.Header) == 0 || strings.Contains(fmt.Sprint(tbl), "\x1b") {
			continue // Blueprint prints an empty header line, and resets colour after padding
		}
		want, err := blueprint(tbl)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Fatalf("table %d %#v differs from Blueprint:\n%s", i, tbl, golden.Diff(want, got.String()))
		}
	}
}

func TestDisplayWidth(t *testing.T) {
	for _, s := range []string{"", "abc", "\x1b[32mactive\x1b[0m", "\x1b[1;95m80/tcp\x1b[0m", "日本語", "e\u0301", "\x1b[", "\x1b[3",
		"\x1b[31", "\x1b]0;title\x07x", "\x1b[2Jx", "a\x1bb", "🙂 ok", "\x7f", "日\x1b[2J本"} {
		want := twwidth.Width(s)
		if got := displayWidth(s); got != want {
			t.Errorf("displayWidth(%q) = %d, want %d", s, got, want)
		}
		if got, ok := plainWidth(s); ok && got != want {
			t.Errorf("plainWidth(%q) = %d, want %d", s, got, want)
		}
	}
	for _, s := range []string{"a\tb", "a\nb", "日本\n", "\x1b]0;t\x07", "\x1b[2J", "x\x7f", "\r"} {
		if _, ok := plainWidth(s); ok {
			t.Errorf("plainWidth(%q) ok", s)
		}
	}
}

// Tables columnar does not lay out (line breaks, tabs, ragged rows) go through tablewriter.
func TestWriteTablesFallback(t *testing.T) {
	for _, tbl := range []Table{
		{Header: []string{"A", "B"}, Rows: [][]string{{"multi\nline", "x"}, {"y", "z"}}},
		{Header: []string{"A", "B"}, Rows: [][]string{{"tab\there", "x"}}},
		{Header: []string{"A", "B"}, Rows: [][]string{{"short"}, {"y", "z"}}},
	} {
		var got, want bytes.Buffer
		if err := WriteTables(&got, tbl); err != nil {
			t.Fatal(err)
		}
		if err := renderTablewriter(&want, tbl); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%#v:\n%s", tbl, golden.Diff(want.String(), got.String()))
		}
	}
}
