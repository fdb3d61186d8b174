package output

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jujuclone/juju/core/names"
)

func TestColorize(t *testing.T) {
	on := &Streams{Color: true}
	tests := []struct {
		s            *Streams
		status, want string
	}{
		{on, "active", "\x1b[32mactive\x1b[0m"},
		{on, "allocating", "\x1b[33mallocating\x1b[0m"},
		{on, "error", "\x1b[31merror\x1b[0m"},
		{on, "waiting", "waiting"},
		{&Streams{}, "error", "error"},
		{nil, "error", "error"},
	}
	for _, tt := range tests {
		if got := Colorize(tt.s, tt.status, tt.status); got != tt.want {
			t.Errorf("Colorize(%v, %q) = %q, want %q", tt.s, tt.status, got, tt.want)
		}
	}
	if got := Colorize(on, "error", ""); got != "" {
		t.Errorf("empty text painted: %q", got)
	}
}

func TestNaturalLess(t *testing.T) {
	got := []string{"pg/10", "pg/2", "0/lxd/10", "10", "0", "0/lxd/9", "1", "pg/1", "a-b/0", "a/0", "pg/02", "2"}
	slices.SortFunc(got, func(a, b string) int {
		if NaturalLess(a, b) {
			return -1
		}
		if NaturalLess(b, a) {
			return 1
		}
		return 0
	})
	want := []string{"0", "0/lxd/9", "0/lxd/10", "1", "2", "10", "a-b/0", "a/0", "pg/1", "pg/02", "pg/2", "pg/10"}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted = %q\nwant     %q", got, want)
	}
}

func TestTestStreams(t *testing.T) {
	s, out, errOut := TestStreams()
	if s.IsTerminal || s.Color {
		t.Fatal("test streams claim a terminal or colour")
	}
	if n, _ := s.In.Read(make([]byte, 1)); n != 0 {
		t.Fatal("test input not empty")
	}
	s.Out.Write([]byte("o"))
	s.ErrOut.Write([]byte("e"))
	if out.String() != "o" || errOut.String() != "e" {
		t.Fatalf("out=%q err=%q", out, errOut)
	}
}

// SortNatural must give NaturalLess's order, on names and on random strings of digits,
// separators and letters.
func TestSortNatural(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "-", "/", "0", "1", "2", "9", "00", "10", "x", ":", ".", "é", "lxd", "007", "99999999999999999999"}
	for range 500 {
		var in []string
		for range 1 + r.IntN(30) {
			var b strings.Builder
			for range r.IntN(6) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			in = append(in, b.String())
		}
		want := slices.Clone(in)
		slices.SortStableFunc(want, names.NaturalCompare)
		got := slices.Clone(in)
		SortNatural(got, func(s string) string { return s })
		if !slices.Equal(got, want) {
			t.Fatalf("SortNatural(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	m := map[string]int{"pg/10": 1, "pg/2": 2, "0/lxd/10": 3, "0/lxd/9": 4}
	if got := SortedNatural(m); !slices.Equal(got, []string{"0/lxd/9", "0/lxd/10", "pg/2", "pg/10"}) {
		t.Fatalf("SortedNatural = %q", got)
	}
}

// BenchmarkSortNatural sorts the unit names of a 10,000-unit model, in the controller's order.
func BenchmarkSortNatural(b *testing.B) {
	var names []string
	for a := range 100 {
		for u := range 100 {
			names = append(names, fmt.Sprintf("app%d/%d", a, u))
		}
	}
	slices.Sort(names)
	in := slices.Clone(names)
	for b.Loop() {
		copy(in, names)
		SortNatural(in, func(s string) string { return s })
	}
}

func TestHeadersAndColors(t *testing.T) {
	on := &Streams{Color: true}
	if got := Headers(on, "Unit", "Agent"); !slices.Equal(got, []string{"\x1b[1mUnit\x1b[0m", "\x1b[1mAgent\x1b[0m"}) {
		t.Errorf("Headers = %q", got)
	}
	if got := Headers(&Streams{}, "Unit"); !slices.Equal(got, []string{"Unit"}) {
		t.Errorf("Headers without colour = %q", got)
	}
	if StatusColor("error") != Red || StatusColor("idle") != Green || StatusColor("waiting") != "" {
		t.Error("StatusColor wrong")
	}
	if got := Paint(on, Cyan, "10.0.0.1"); got != "\x1b[36m10.0.0.1\x1b[0m" {
		t.Errorf("Paint = %q", got)
	}
}
