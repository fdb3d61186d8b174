package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/olekukonko/tablewriter"
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

func TestWriteTables2000RowsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	tbl := bigTable(2000)
	var best time.Duration
	for i := range 3 {
		var buf bytes.Buffer
		start := time.Now()
		if err := WriteTables(&buf, tbl); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	// Generous bound (the benchmark is ~20 ms); catches a return to the slow renderer on loaded CI.
	if best > 200*time.Millisecond {
		t.Errorf("2,000 rows took %v", best)
	}
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
