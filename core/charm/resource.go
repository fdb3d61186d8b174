package charm

import (
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// MaxResourceSize is the largest resource content a client uploads and a controller stores
// (juju deploy --resource, juju attach-resource). The content travels in one API message, as
// a charm archive does, and is kept in the controller's store; Juju sets no bound.
const MaxResourceSize = 256 << 20

// ResourceFingerprint is how Juju identifies resource content: its sha384, in hex.
func ResourceFingerprint(data []byte) string {
	sum := sha512.Sum384(data)
	return hex.EncodeToString(sum[:])
}

// ReaderFingerprint is ResourceFingerprint of what r holds, and its size.
func ReaderFingerprint(r io.Reader) (string, int64, error) {
	h := sha512.New384()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// check is Juju's check of a resource's metadata, plus a name and filename that are safe as
// one path element each: the unit keeps a file resource at resources/<name>/<filename> in its
// agent directory.
func (r Resource) check(charmName string) error {
	if r.Name == "" || r.Name == "." || r.Name == ".." || strings.ContainsAny(r.Name, "/\\\x00") {
		return fmt.Errorf("charm %q has invalid resource name %q", charmName, r.Name)
	}
	switch r.Type {
	case ResourceFile:
		if r.Filename == "" {
			return fmt.Errorf("charm %q resource %q has no filename", charmName, r.Name)
		}
		if strings.Contains(r.Filename, "/") {
			return fmt.Errorf("charm %q resource %q: filename cannot contain \"/\" (got %q)", charmName, r.Name, r.Filename)
		}
		if r.Filename == "." || r.Filename == ".." || strings.ContainsAny(r.Filename, "\\\x00") {
			return fmt.Errorf("charm %q resource %q has invalid filename %q", charmName, r.Name, r.Filename)
		}
	case ResourceOCIImage:
	default:
		return fmt.Errorf("charm %q resource %q has unknown type %q", charmName, r.Name, r.Type)
	}
	return nil
}

// FileResources are the resources of type file, sorted by name: the only ones a machine
// model uses (an oci-image resource is for Kubernetes models).
func (m *Meta) FileResources() []Resource {
	var out []Resource
	for _, name := range sortedNames(m.Resources) {
		if r := m.Resources[name]; r.Type == ResourceFile {
			out = append(out, r)
		}
	}
	return out
}
