package charm

import (
	"strings"
	"testing"
)

// Resources: file (the default type) needs a filename that is one path element, as the unit
// keeps it at resources/<name>/<filename>; oci-image is parsed (and left to Kubernetes
// models); anything else is refused.
func TestMetaResources(t *testing.T) {
	meta, err := ReadMeta(strings.NewReader("name: x\nresources:\n  b-file:\n    filename: b.tar\n    description: B.\n" +
		"  a-file:\n    type: file\n    filename: a.txt\n  image:\n    type: oci-image\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := meta.Resources["b-file"]; r.Type != ResourceFile || r.Filename != "b.tar" || r.Description != "B." || r.Name != "b-file" {
		t.Errorf("b-file = %+v", r)
	}
	files := meta.FileResources()
	if len(files) != 2 || files[0].Name != "a-file" || files[1].Name != "b-file" {
		t.Errorf("file resources = %+v", files)
	}
	for _, tt := range []struct{ yaml, err string }{
		{"r: {type: file}", `charm "x" resource "r" has no filename`},
		{"r: {filename: a/b}", `charm "x" resource "r": filename cannot contain "/" (got "a/b")`},
		{"r: {filename: ..}", `charm "x" resource "r" has invalid filename ".."`},
		{"r: {type: tarball, filename: a}", `charm "x" resource "r" has unknown type "tarball"`},
		{"..: {filename: a}", `charm "x" has invalid resource name ".."`},
		{"a/b: {filename: a}", `charm "x" has invalid resource name "a/b"`},
	} {
		_, err := ReadMeta(strings.NewReader("name: x\nresources:\n  " + tt.yaml + "\n"))
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: %v, want %s", tt.yaml, err, tt.err)
		}
	}
}

func TestResourceFingerprint(t *testing.T) {
	// sha384 of "abc" (FIPS 180-2).
	const want = "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"
	if got := ResourceFingerprint([]byte("abc")); got != want {
		t.Errorf("fingerprint = %s", got)
	}
	if got, n, err := ReaderFingerprint(strings.NewReader("abc")); err != nil || got != want || n != 3 {
		t.Errorf("reader fingerprint = %s %d %v", got, n, err)
	}
}
