package charm

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io/fs"
	"testing"
)

// zEntry is one entry of a test archive.
type zEntry struct {
	name string
	body string
	mode fs.FileMode // 0: no Unix mode recorded
}

// makeZip builds a real zip in memory; entries with a mode carry it as a Unix mode (symlinks
// too, as charmcraft stores them).
func makeZip(t *testing.T, entries ...zEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zerosBomb returns a zip whose one entry inflates to total bytes of zeros while the archive
// stays small (about 1 KiB per MiB): the deflate stream is one flushed MiB of zeros repeated,
// which decodes correctly because each repeat only refers back to zeros. declared is the size
// written in the headers (a lying header when smaller than total).
func zerosBomb(t *testing.T, total, declared uint64) []byte {
	t.Helper()
	const chunk = 1 << 20
	zeros := make([]byte, chunk)
	var first, rest bytes.Buffer
	fw, _ := flate.NewWriter(&first, flate.BestCompression)
	_, _ = fw.Write(zeros)
	_ = fw.Flush()
	n := first.Len()
	_, _ = fw.Write(zeros)
	_ = fw.Flush()
	repeat := append([]byte(nil), first.Bytes()[n:]...)
	_ = fw.Close()
	tail := first.Bytes()[n+len(repeat):]
	first.Truncate(n)
	for i := uint64(1); i < total/chunk; i++ {
		rest.Write(repeat)
	}
	stream := append(append(first.Bytes(), rest.Bytes()...), tail...)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.Create("metadata.yaml")
	h := &zip.FileHeader{Name: "bomb", Method: zip.Deflate, CRC32: 0,
		CompressedSize64: uint64(len(stream)), UncompressedSize64: declared}
	h.SetMode(0o644)
	w, err := zw.CreateRaw(h)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(stream)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
