package application

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/core/charm"
)

// --resource name=path of juju deploy and juju refresh: every file is checked and read before
// anything is sent, uploaded (kept aside) once the charm is, and named by its pending id in the
// call that deploys or switches, which makes it the application's next revision.

// resourceUploader is the part of the client that uploads resources.
type resourceUploader interface {
	UploadResource(ctx context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error)
}

// resourceFlag is Juju's --resource: repeatable <name>=<path>, each name once.
type resourceFlag struct{ m *map[string]string }

func (f resourceFlag) String() string {
	if f.m == nil || len(*f.m) == 0 {
		return ""
	}
	var pairs []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range *f.m {
			if !yield(k) {
				return
			}
		}
	}) {
		pairs = append(pairs, name+"="+(*f.m)[name])
	}
	return strings.Join(pairs, ",")
}

func (f resourceFlag) Type() string { return "name=path" }

func (f resourceFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return errors.New("badly formatted name value pair: " + s)
	}
	if *f.m == nil {
		*f.m = map[string]string{}
	}
	if _, dup := (*f.m)[name]; dup {
		return fmt.Errorf("duplicate name specified: %q", name)
	}
	(*f.m)[name] = value
	return nil
}

// addResourceFlag registers --resource on cmd.
func addResourceFlag(cmd *cobra.Command, m *map[string]string) {
	cmd.Flags().Var(resourceFlag{m}, "resource", "Resource to be uploaded to the controller: <name>=<file> (repeatable)")
}

// ResourceFile is one resource read from disk, ready to upload.
type ResourceFile struct {
	Name string
	// Path is the file as given; Filename its base name, sent with it.
	Path     string
	Filename string
	Content  []byte
}

// ReadResourceFile reads the file given for resource name, refusing what the controller
// would: a missing or unreadable file (Juju's words), a directory, more than
// charm.MaxResourceSize bytes.
func ReadResourceFile(name, path string) (*ResourceFile, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("file for resource %q: %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("can't read file for resource %q: %w", name, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("file for resource %q: %s is a directory", name, path)
	}
	if fi.Size() > charm.MaxResourceSize {
		return nil, fmt.Errorf("file for resource %q: %s is %d bytes, more than the %d bytes (%d MiB) a resource may hold",
			name, path, fi.Size(), charm.MaxResourceSize, charm.MaxResourceSize>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("can't read file for resource %q: %w", name, err)
	}
	defer f.Close()
	content, err := io.ReadAll(io.LimitReader(f, charm.MaxResourceSize+1))
	if err != nil {
		return nil, fmt.Errorf("can't read file for resource %q: %w", name, err)
	}
	if len(content) > charm.MaxResourceSize {
		return nil, fmt.Errorf("file for resource %q: %s is more than the %d bytes (%d MiB) a resource may hold",
			name, path, charm.MaxResourceSize, charm.MaxResourceSize>>20)
	}
	return &ResourceFile{Name: name, Path: path, Filename: filepath.Base(path), Content: content}, nil
}

// readResources checks --resource against the charm's metadata and reads every file: each
// name must be a resource the charm declares (Juju: `unrecognized resource "x"`), of type
// file (an oci-image is for Kubernetes models). A resource the charm declares and that is not
// given is left out: the application is deployed without it, as in Juju, and resource-get
// fails until one is attached. Sorted by name.
func readResources(meta *charm.Meta, given map[string]string) ([]*ResourceFile, error) {
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	slices.Sort(names)
	var unknown []string
	for _, name := range names {
		if _, ok := meta.Resources[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	switch len(unknown) {
	case 0:
	case 1:
		return nil, fmt.Errorf("unrecognized resource %q", unknown[0])
	default:
		return nil, fmt.Errorf("unrecognized resources: %s", strings.Join(unknown, ", "))
	}
	files := make([]*ResourceFile, 0, len(names))
	for _, name := range names {
		if typ := meta.Resources[name].Type; typ != charm.ResourceFile {
			return nil, fmt.Errorf("resource %q is of type %s: machine models take file resources only", name, typ)
		}
		f, err := ReadResourceFile(name, given[name])
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// uploadPendingResources uploads the files for application app, kept aside until the deploy
// or refresh that names them (charmURL is the uploaded charm that declares them), and
// returns their pending ids by name.
func uploadPendingResources(ctx context.Context, c resourceUploader, model, app, charmURL string, files []*ResourceFile) (map[string]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	ids := make(map[string]string, len(files))
	for _, f := range files {
		resp, err := c.UploadResource(ctx, &jujupb.UploadResourceRequest{
			Model: model, Application: app, Name: f.Name, Filename: f.Filename, Content: f.Content,
			Pending: true, CharmUrl: charmURL,
		})
		if err != nil {
			return nil, fmt.Errorf("resource %q: %w", f.Name, err)
		}
		ids[f.Name] = resp.GetPendingId()
	}
	return ids, nil
}
