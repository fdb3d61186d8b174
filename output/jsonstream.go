package output

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// writeJSON writes v as json.Marshal would, byte for byte, but streams it: maps and slices are
// written element by element through a buffered writer, so that a status of 100,000 units never
// sits whole in one buffer (which json.Marshal grows by copying, most of its cost) and memory
// follows the largest element, not the output.
func writeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := streamTop(bw, reflect.ValueOf(v)); err != nil {
		return err
	}
	if err := bw.WriteByte('\n'); err != nil {
		return err
	}
	return bw.Flush()
}

// streamTop takes the value apart whatever its size (the status view is a struct of maps).
func streamTop(w *bufio.Writer, v reflect.Value) error {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() && !marshals(v) {
		v = v.Elem()
	}
	if v.IsValid() && v.Kind() == reflect.Struct && !marshals(v) {
		if ti := infoOf(v.Type()); ti.plain {
			return streamStruct(w, v, ti.fields)
		}
	}
	return streamValue(w, v)
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshals reports whether encoding/json would call a method of v's to encode it.
func marshals(v reflect.Value) bool {
	t := v.Type()
	if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		return true
	}
	pt := reflect.PointerTo(t)
	return v.CanAddr() && (pt.Implements(jsonMarshaler) || pt.Implements(textMarshaler))
}

// streamMin is the size from which a map or a slice is written element by element; a struct is
// taken apart only when it holds one that large. Anything smaller goes through json.Marshal
// whole, which is faster for small values than taking them apart.
const streamMin = 64

// large reports whether v is, or holds within a few levels, a map or slice of streamMin
// elements or more (the units of an application of a status's applications).
func large(v reflect.Value, depth int) bool {
	if depth > 3 {
		return false
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Len() >= streamMin {
			return true
		}
		for it := v.MapRange(); it.Next(); {
			if large(it.Value(), depth+1) {
				return true
			}
		}
	case reflect.Slice:
		if v.Len() >= streamMin {
			return true
		}
		for i := range v.Len() {
			if large(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Struct:
		for _, i := range infoOf(v.Type()).containers {
			if large(v.Field(i), depth+1) {
				return true
			}
		}
	}
	return false
}

// typeInfo is what the streaming needs of a struct type, worked out once.
type typeInfo struct {
	fields []jsonField
	plain  bool
	// containers are the exported fields that may hold a map or a slice.
	containers []int
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := &typeInfo{}
	ti.fields, ti.plain = plainFields(t)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch k := f.Type.Kind(); k {
		case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface, reflect.Struct:
			if k == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8 {
				continue
			}
			ti.containers = append(ti.containers, i)
		}
	}
	typeInfos.Store(t, ti)
	return ti
}

// streamValue writes v; what it does not take apart goes through json.Marshal whole.
func streamValue(w *bufio.Writer, v reflect.Value) error {
	if v.IsValid() && !large(v, 0) {
		return marshalTo(w, v)
	}
	if !v.IsValid() {
		_, err := w.WriteString("null")
		return err
	}
	if marshals(v) {
		return marshalTo(w, v)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			_, err := w.WriteString("null")
			return err
		}
		return streamValue(w, v.Elem())
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.Type().Key() != reflect.TypeFor[string]() {
			return marshalTo(w, v)
		}
		return streamMap(w, v)
	case reflect.Slice:
		if v.IsNil() {
			_, err := w.WriteString("null")
			return err
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return marshalTo(w, v) // []byte is base64
		}
		return streamList(w, v)
	case reflect.Struct:
		if ti := infoOf(v.Type()); ti.plain {
			return streamStruct(w, v, ti.fields)
		}
	}
	return marshalTo(w, v)
}

func marshalTo(w *bufio.Writer, v reflect.Value) error {
	if v.CanAddr() && marshals(v) && !v.Type().Implements(jsonMarshaler) && !v.Type().Implements(textMarshaler) {
		v = v.Addr() // a pointer method, which json.Marshal calls on addressable values
	}
	e := encoders.Get().(*elementEncoder)
	defer encoders.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(v.Interface()); err != nil {
		return err
	}
	_, err := w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	return err
}

// elementEncoder encodes one element as json.Marshal would (an Encoder escapes HTML as Marshal
// does, and adds a newline, taken off), into a buffer used again: json.Marshal copies each
// element into a new slice, a tenth of a 10,000-unit status's encoding.
type elementEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &elementEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

func streamMap(w *bufio.Writer, v reflect.Value) error {
	if v.IsNil() {
		_, err := w.WriteString("null")
		return err
	}
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		entries = append(entries, entry{it.Key().String(), it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	w.WriteByte('{')
	err := writeElements(w, len(entries), func(w *bufio.Writer, i int) error {
		if i > 0 {
			w.WriteByte(',')
		}
		if err := writeKey(w, entries[i].key); err != nil {
			return err
		}
		return streamValue(w, entries[i].val)
	})
	if err != nil {
		return err
	}
	return w.WriteByte('}')
}

func streamList(w *bufio.Writer, v reflect.Value) error {
	w.WriteByte('[')
	err := writeElements(w, v.Len(), func(w *bufio.Writer, i int) error {
		if i > 0 {
			w.WriteByte(',')
		}
		return streamValue(w, v.Index(i))
	})
	if err != nil {
		return err
	}
	return w.WriteByte(']')
}

// parallelMin is the number of elements from which a map or a slice is encoded by as many
// goroutines as there are processors, in chunks of parallelChunk elements written in order:
// the units of a 100,000-unit status take seconds to encode on one.
const parallelMin, parallelChunk = 2048, 256

// writeElements writes elements 0..n-1 through write, in order: one after the other for a few,
// else encoded ahead in chunks, in parallel, with a bounded number of chunks in memory.
func writeElements(w *bufio.Writer, n int, write func(w *bufio.Writer, i int) error) error {
	procs := runtime.GOMAXPROCS(0)
	if n < parallelMin || procs < 2 {
		for i := range n {
			if err := write(w, i); err != nil {
				return err
			}
		}
		return nil
	}
	type chunk struct {
		buf *bytes.Buffer
		err error
	}
	chunks := (n + parallelChunk - 1) / parallelChunk
	done := make([]chan chunk, chunks)
	for c := range done {
		done[c] = make(chan chunk, 1)
	}
	// At most this many chunks are encoded and not yet written; their buffers, once written,
	// are used again (a fresh buffer grown to a chunk's size per chunk was a sixth of the
	// CPU of a 10,000-unit status).
	ahead := 2 * procs
	slots := make(chan *bytes.Buffer, ahead)
	for range ahead {
		slots <- new(bytes.Buffer)
	}
	go func() {
		for c := range chunks {
			buf := <-slots
			go func() {
				buf.Reset()
				bw := bufio.NewWriterSize(buf, 4<<10)
				var err error
				for i := c * parallelChunk; i < min(n, (c+1)*parallelChunk) && err == nil; i++ {
					err = write(bw, i)
				}
				if err == nil {
					err = bw.Flush()
				}
				done[c] <- chunk{buf, err}
			}()
		}
	}()
	var err error
	for c := range chunks {
		ch := <-done[c] // every chunk is waited for, even after an error: none is left running
		if err == nil {
			if err = ch.err; err == nil {
				_, err = w.Write(ch.buf.Bytes())
			}
		}
		slots <- ch.buf
	}
	return err
}

func writeKey(w *bufio.Writer, k string) error {
	if plainKey(k) {
		w.WriteByte('"')
		w.WriteString(k)
		w.WriteString(`":`)
		return nil
	}
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	w.Write(b)
	return w.WriteByte(':')
}

// jsonField is one exported struct field as encoding/json names it; index is its path through
// embedded structs (reflect.Value.FieldByIndex).
type jsonField struct {
	index     []int
	name      string
	omitEmpty bool
}

// plainFields lists t's fields when encoding/json's rules for them are the plain ones: named
// exported fields, structs embedded by value whose fields are promoted (the views' Removal), no
// two fields of one name, no ",string"; ok is false otherwise, and the struct is then marshalled
// whole.
func plainFields(t reflect.Type) ([]jsonField, bool) {
	out, ok := appendPlainFields(nil, t, nil)
	if !ok {
		return nil, false
	}
	seen := map[string]bool{}
	for _, f := range out {
		if seen[f.name] {
			return nil, false // encoding/json's dominance rules decide: leave it to them
		}
		seen[f.name] = true
	}
	return out, true
}

func appendPlainFields(out []jsonField, t reflect.Type, prefix []int) ([]jsonField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		index := append(slices.Clip(prefix), i)
		if f.Anonymous {
			if name != "" || f.Type.Kind() != reflect.Struct {
				return nil, false // embedded pointers, non-structs, and embedded structs named by a tag
			}
			var ok bool
			if out, ok = appendPlainFields(out, f.Type, index); !ok {
				return nil, false
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		jf := jsonField{index: index, name: name}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				jf.omitEmpty = true
			case "string", "omitzero":
				return nil, false
			}
		}
		out = append(out, jf)
	}
	return out, true
}

func streamStruct(w *bufio.Writer, v reflect.Value, fields []jsonField) error {
	w.WriteByte('{')
	first := true
	for _, f := range fields {
		fv := v.FieldByIndex(f.index)
		if f.omitEmpty && emptyValue(fv) {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		if err := writeKey(w, f.name); err != nil {
			return err
		}
		if err := streamValue(w, fv); err != nil {
			return err
		}
	}
	return w.WriteByte('}')
}

// emptyValue is encoding/json's omitempty test.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// plainKey: k needs no escaping in JSON (json.Marshal escapes <, > and & too).
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
