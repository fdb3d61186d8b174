package hooktool

import (
	"errors"
	"testing"
)

// resource-get prints the path without a newline, as Juju does (ops strips it); a resource
// never uploaded fails with Juju's words.
func TestResourceGet(t *testing.T) {
	const u = "<resource name>"
	runCases(t, []toolCase{
		{name: "resource-get", args: []string{"test-file"}, want: ok("/var/lib/juju/agents/unit-wordpress-0/resources/test-file/test-file.tar"),
			record: []string{"resource-get test-file"}},
		{name: "resource-get", args: []string{"other"}, want: failed(`could not download resource: resource "other" not found`)},
		{name: "resource-get", want: usage("resource-get", "missing required resource name", u)},
		{name: "resource-get", args: []string{"a", "b"}, want: usage("resource-get", `unrecognized args: ["b"]`, u)},
		{name: "resource-get", args: []string{"test-file"}, setup: func(f *fakeContext) { f.err = errors.New("connection lost") },
			want: failed("could not download resource: connection lost")},
	})
}
