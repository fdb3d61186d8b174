package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/constraints"
	"github.com/jujuclone/juju/output"
)

// ConstraintsFormat prints constraints as Juju does by default: "cores=4 mem=8192M".
const ConstraintsFormat output.Format = "constraints"

// AddConstraintsFormatFlag registers --format constraints|json|yaml (default constraints) and
// -o/--output.
func AddConstraintsFormatFlag(cmd *cobra.Command, f *output.Format, path *string) {
	output.AddFormatFlag(cmd, f, ConstraintsFormat, ConstraintsFormat, output.JSON, output.YAML)
	output.AddOutputFlag(cmd, path)
}

// ParseConstraints parses --constraints values or key=value arguments as Juju's CLI does: the
// arguments joined with a space, then read by constraints.Parse. Errors are usage errors. A
// deprecated alias (cpu-cores) prints Juju's warning line on w, even when a later item is bad.
// Conflicts such as instance-type with mem are not checked here: they are the provider's
// business, checked by the controller.
func ParseConstraints(w io.Writer, args ...string) (constraints.Value, error) {
	v, warnings, err := constraints.ParseWithWarnings(strings.Join(args, " "))
	for _, msg := range warnings {
		fmt.Fprintf(w, "Warning: %s.\n", msg)
	}
	if err != nil {
		return constraints.Value{}, FlagErrorWrap(err)
	}
	return v, nil
}

// WriteConstraints writes canonical constraints cons in format f: the string itself plus a
// newline, or the set keys as a JSON/YAML map ({"cores":4,"mem":8192}); to the file at path
// when set, else to s.Out.
func WriteConstraints(s *output.Streams, path string, f output.Format, cons string) error {
	v, err := constraints.Parse(cons)
	if err != nil {
		return fmt.Errorf("controller sent invalid constraints %q: %w", cons, err)
	}
	if f != ConstraintsFormat {
		return output.WriteFile(path, f, v, s)
	}
	text := v.String() + "\n"
	if path == "" {
		_, err := io.WriteString(s.Out, text)
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing output file: %w", err)
	}
	return nil
}

// ParseBaseFlags resolves --series (deprecated, with its warning on errOut) and --base into one
// base; both empty gives the zero base. Errors are usage errors.
func ParseBaseFlags(errOut io.Writer, series, baseFlag string) (base.Base, error) {
	var b base.Base
	if series != "" {
		fmt.Fprintln(errOut, "WARNING series flag is deprecated, use --base instead")
		s, err := base.FromSeries(series)
		if err != nil {
			return b, FlagErrorf("attempting to convert %q to a base: %v", series, err)
		}
		b = s
	}
	if baseFlag != "" {
		parsed, err := base.Parse(baseFlag)
		if err != nil {
			return b, FlagErrorWrap(err)
		}
		b = parsed
	}
	return b, nil
}
