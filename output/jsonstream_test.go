package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

type streamUnit struct {
	Name     string            `json:"name"`
	Leader   bool              `json:"leader,omitempty"`
	Ports    []string          `json:"open-ports,omitempty"`
	Since    *time.Time        `json:"since,omitempty"`
	Subs     map[string]string `json:"subordinates,omitempty"`
	Count    int               `json:"count"`
	Raw      []byte            `json:"raw,omitempty"`
	Any      any               `json:"any,omitempty"`
	Ignored  string            `json:"-"`
	internal int
}

// streamRemoval is embedded as the status views embed theirs: its fields are promoted.
type streamRemoval struct {
	BlockedBy []string `json:"blocked-by,omitempty"`
	At        string   `json:"at,omitempty"`
}

type streamApp struct {
	Charm string `json:"charm"`
	streamRemoval
	Units map[string]*streamUnit `json:"units,omitempty"`
	List  []streamUnit           `json:"list"`
}

type streamEmbed struct {
	streamUnit
	Extra string `json:"extra"`
}

type namedKey string

type streamView struct {
	Model        map[string]string     `json:"model"`
	Applications map[string]*streamApp `json:"applications"`
	Embedded     *streamEmbed          `json:"embedded,omitempty"`
	Named        map[namedKey]int      `json:"named"`
	When         time.Time             `json:"when"`
	HTML         string                `json:"html"`
	Nil          map[string]int        `json:"nil"`
	NilList      []int                 `json:"nil-list"`
}

// The streamed encoding is json.Marshal's, byte for byte, for small values and for values
// large enough to be taken apart.
func TestStreamedJSONIsMarshal(t *testing.T) {
	// An application with an embedded struct is taken apart, not marshalled whole.
	if _, plain := plainFields(reflect.TypeFor[streamApp]()); !plain {
		t.Fatal("a struct with a struct embedded by value is not streamed")
	}
	now := time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC)
	// From parallelMin, chunks are encoded in parallel: one size that is not a whole number of
	// chunks checks their order and the last one's end.
	for _, n := range []int{0, 1, streamMin - 1, streamMin, 3 * streamMin, parallelMin - 1, parallelMin + parallelChunk/2 + 1} {
		v := &streamView{
			Model:        map[string]string{"name": "m", "b": "<&>"},
			Applications: map[string]*streamApp{},
			Embedded:     &streamEmbed{streamUnit: streamUnit{Name: "e"}, Extra: "x"},
			Named:        map[namedKey]int{"z": 1, "a": 2},
			When:         now,
			HTML:         "<script>&",
		}
		for a := range 3 {
			app := &streamApp{Charm: fmt.Sprint("c", a), Units: map[string]*streamUnit{}}
			if a == 1 {
				app.BlockedBy, app.At = []string{"unit x/0"}, "soon"
			}
			for i := range n {
				u := &streamUnit{Name: fmt.Sprintf("app%d/%d", a, i), Leader: i == 0, Count: i, Ignored: "no", internal: 1}
				if i%2 == 0 {
					u.Ports, u.Since, u.Subs, u.Raw, u.Any = []string{"80/tcp"}, &now, map[string]string{"s": "t"}, []byte{1, 2}, map[string]any{"k": []int{1}}
				}
				app.Units[u.Name] = u
				app.List = append(app.List, *u)
			}
			v.Applications[fmt.Sprint("app", a)] = app
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want)+"\n" {
			t.Fatalf("n=%d: streamed\n%s\nwant\n%s", n, got.String(), want)
		}
	}
	for _, v := range []any{nil, 3, "s", []int(nil), map[string]int(nil), &now, struct{}{}} {
		want, _ := json.Marshal(v)
		var got bytes.Buffer
		if err := writeJSON(&got, v); err != nil || got.String() != string(want)+"\n" {
			t.Errorf("%#v: %q, %v; want %q", v, got.String(), err, want)
		}
	}
}

// A chunk encoded in parallel that fails fails the whole; the chunks before it are written.
func TestParallelElementsFail(t *testing.T) {
	var w bytes.Buffer
	bw := bufio.NewWriter(&w)
	boom := errors.New("boom")
	err := writeElements(bw, 10*parallelChunk, func(w *bufio.Writer, i int) error {
		if i == 3*parallelChunk+5 {
			return boom
		}
		return w.WriteByte('x')
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	_ = bw.Flush()
	if w.Len() != 3*parallelChunk {
		t.Errorf("%d bytes written before the failing chunk, want %d", w.Len(), 3*parallelChunk)
	}
}

// BenchmarkStreamedJSON: 100,000 entries of a map in a struct, streamed against json.Marshal.
func BenchmarkStreamedJSON(b *testing.B) {
	app := &streamApp{Units: map[string]*streamUnit{}}
	for i := range 100_000 {
		app.Units[fmt.Sprint("app/", i)] = &streamUnit{Name: fmt.Sprint("app/", i), Ports: []string{"80/tcp"}, Count: i}
	}
	v := &streamView{Applications: map[string]*streamApp{"app": app}}
	var buf bytes.Buffer
	b.Run("stream", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			if err := writeJSON(&buf, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			out, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			buf.Write(out)
		}
	})
}
