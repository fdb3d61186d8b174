// Package version holds the juju version command.
package version

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/output"
)

type versionOptions struct {
	IO      *output.Streams
	Version string
}

// NewCmdVersion returns "juju version": print the client's version.
func NewCmdVersion(f *cmdutil.Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO, Version: version.Current}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the Juju CLI client version",
		Long: `Print the version of this juju client on stdout, one line (the same as "juju --version").
The controller's version is shown by "juju controllers" and "juju status".`,
		Example: `  juju version
  juju --version`,
		Annotations: map[string]string{cmdutil.SeeAlso: "whoami, controllers"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(cmd.Context(), opts)
		},
	}
}

func versionRun(_ context.Context, opts *versionOptions) error {
	_, err := fmt.Fprintln(opts.IO.Out, opts.Version)
	return err
}
