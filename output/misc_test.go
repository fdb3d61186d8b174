package output

import (
	"slices"
	"testing"
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
