package resource

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/client"
	"github.com/jujuclone/juju/cmd/juju/application"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/names"
	"github.com/jujuclone/juju/output"
)

// attachResourceAPI is the part of the client "juju attach-resource" uses.
type attachResourceAPI interface {
	UploadResource(ctx context.Context, req *jujupb.UploadResourceRequest) (*jujupb.UploadResourceResponse, error)
}

var _ attachResourceAPI = (*client.Client)(nil)

type attachResourceOptions struct {
	IO           *output.Streams
	Client       func(ctx context.Context) (attachResourceAPI, error)
	ResolveModel func(ctx context.Context) (*cmdutil.ModelRef, error)

	Model       string
	Application string
	Name        string
	Path        string
}

// NewCmdAttachResource returns "juju attach-resource <application> <name>=<file>".
func NewCmdAttachResource(f *cmdutil.Factory, runF func(*attachResourceOptions) error) *cobra.Command {
	opts := &attachResourceOptions{
		IO:           f.IO,
		ResolveModel: f.Model,
		Client:       cmdutil.ClientFunc[attachResourceAPI](f),
	}
	cmd := &cobra.Command{
		Use:   "attach-resource [options] application <resource name>=<resource>",
		Short: "Update a resource for an application.",
		Long: `This command updates a resource for an application.

The format is

    <resource name>=<resource>

where the resource name is the name from the metadata.yaml file of the charm and the
resource is a path to a local file; the resource must be of type 'file' (an 'oci-image' is
for Kubernetes models, which this controller does not run). The file (at most 256 MiB) is
uploaded to the controller, where it becomes the application's next revision at once, to be
streamed to the charm when "resource-get" is called by a hook. Every unit of the
application then runs its upgrade-charm hook, where charms fetch their resources again.

Content the application already has is not stored twice (the controller keys it by its
sha384). Nothing is printed on success.`,
		Example: `  juju attach-resource mysql resource-name=foo
  juju attach-resource testapp test-file=./test-file.tar`,
		Annotations: map[string]string{cmdutil.SeeAlso: "resources, deploy, refresh"},
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return cmdutil.FlagErrorf("missing application name")
			case 1:
				return cmdutil.FlagErrorf("no resource specified")
			}
			if !names.IsValidApplication(args[0]) {
				return cmdutil.FlagErrorf("application %q not valid", args[0])
			}
			name, value, err := parseResourceValue(args[1])
			if err != nil {
				return cmdutil.FlagErrorf("bad resource arg %q: %v", args[1], err)
			}
			opts.Application, opts.Name, opts.Path = args[0], name, value
			return cmdutil.MaxArgs(2)(nil, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return attachResourceRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddModelFlag(cmd, &opts.Model)
	return cmd
}

// parseResourceValue splits "<name>=<value>", as Juju does.
func parseResourceValue(raw string) (name, value string, _ error) {
	name, value, ok := strings.Cut(raw, "=")
	switch {
	case !ok:
		return "", "", errors.New("expected name=path format")
	case name == "":
		return "", "", errors.New("missing resource name")
	case value == "":
		return "", "", errors.New("missing resource value")
	}
	return name, value, nil
}

func attachResourceRun(ctx context.Context, opts *attachResourceOptions) error {
	// The file is read, and checked, before anything is sent.
	file, err := application.ReadResourceFile(opts.Name, opts.Path)
	if err != nil {
		return err
	}
	model, err := opts.ResolveModel(ctx)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	opts.IO.Verbosef("Uploading resource %q from %s (%d bytes) to application %q", opts.Name, opts.Path, len(file.Content), opts.Application)
	if _, err := c.UploadResource(ctx, &jujupb.UploadResourceRequest{
		Model: model.UUID, Application: opts.Application, Name: opts.Name,
		Filename: file.Filename, Content: file.Content,
	}); err != nil {
		return fmt.Errorf("failed to upload resource %q: %w", opts.Name, err)
	}
	return nil
}
