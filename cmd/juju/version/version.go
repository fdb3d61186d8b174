// Package version holds the juju version command.
package version

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/core/version"
	"github.com/jujuclone/juju/output"
)

// smart is Juju's default format: a plain value as text, anything else as YAML.
const smart output.Format = "smart"

type versionOptions struct {
	IO     *output.Streams
	Detail versionDetail
	All    bool
	Format output.Format
	Output string
}

// versionDetail is "juju version --all": Juju's fields, then this project's own release.
type versionDetail struct {
	// Version is the Juju binary version whose contract this client speaks, e.g.
	// 3.6.12-ubuntu-amd64.
	Version      string `json:"version" yaml:"version"`
	GitCommit    string `json:"git-commit,omitempty" yaml:"git-commit,omitempty"`
	GitTreeState string `json:"git-tree-state,omitempty" yaml:"git-tree-state,omitempty"`
	Compiler     string `json:"compiler" yaml:"compiler"`
	GoVersion    string `json:"go-version" yaml:"go-version"`
	// Official is Juju's flag for a build of Canonical's release process: never this one.
	Official bool `json:"official" yaml:"official"`
	// JujucloneVersion is this project's release, which the Juju version above does not say.
	JujucloneVersion string `json:"jujuclone-version" yaml:"jujuclone-version"`
}

// currentDetail describes this binary.
func currentDetail() versionDetail {
	b := version.ReadBuild()
	return versionDetail{
		Version: version.Binary(), GitCommit: b.GitCommit, GitTreeState: b.GitTreeState,
		Compiler: runtime.Compiler, GoVersion: b.GoVersion, JujucloneVersion: version.Current,
	}
}

// NewCmdVersion returns "juju version": print the Juju version this client speaks.
func NewCmdVersion(f *cmdutil.Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version [options]",
		Short: "Print the Juju CLI client version",
		Long: `Print the version of Juju whose command line and hook contract this client implements,
as <version>-<os>-<arch> (` + version.Juju + `-ubuntu-amd64 on Ubuntu), the same as "juju --version".
Tools that drive juju choose their syntax by it.

--all adds the build: the git commit and tree state, the compiler and Go version, Juju's
"official" flag (false: this is not a Canonical build) and this project's own release
(jujuclone-version).`,
		Example: `  juju version
  juju version --all
  juju version --all --format json`,
		Annotations: map[string]string{cmdutil.SeeAlso: "show-model, controllers"},
		Args:        cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Detail = currentDetail()
			if runF != nil {
				return runF(opts)
			}
			return versionRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "Prints all version information")
	output.AddFormatFlag(cmd, &opts.Format, smart, output.JSON, output.YAML, smart)
	output.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func versionRun(_ context.Context, opts *versionOptions) error {
	var v any = opts.Detail.Version
	if opts.All {
		v = opts.Detail
	}
	if opts.Format == smart {
		return output.WriteFile(opts.Output, smart, smartValue{v}, opts.IO)
	}
	return output.WriteFile(opts.Output, opts.Format, v, opts.IO)
}

// smartValue writes as Juju's smart formatter: a string as a line of text, a structure (--all)
// as YAML.
type smartValue struct{ v any }

func (s smartValue) WriteText(w io.Writer, _ output.Format) error {
	if str, ok := s.v.(string); ok {
		_, err := fmt.Fprintln(w, str)
		return err
	}
	return output.Write(w, output.YAML, s.v)
}
