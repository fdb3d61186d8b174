package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v2"
)

// Format is the value of --format.
type Format string

// The formats every command can write through Write.
const (
	Tabular Format = "tabular"
	JSON    Format = "json"
	YAML    Format = "yaml"
)

// The formats of juju status besides those: a line per unit (three names for it, as in Juju) and
// a summary. A view that offers them is a TextWriter.
const (
	Oneline Format = "oneline"
	Short   Format = "short"
	Line    Format = "line"
	Summary Format = "summary"
)

// TextWriter is a view with renderings of its own in formats other than json, yaml and tabular.
type TextWriter interface {
	WriteText(w io.Writer, f Format) error
}

// Write renders v in format f: JSON on one line (like Juju's FormatJson), YAML as Juju's yaml.v2 writes it
// (2-space indent, lists flush under their key, long strings folded at 80 columns), tabular through
// v's Table method (v must be a Tabler, a Table or a []Table), any other format
// through v's WriteText (v must be a TextWriter).
func Write(w io.Writer, f Format, v any) error {
	switch f {
	case JSON:
		if err := writeJSON(w, v); err != nil {
			return fmt.Errorf("encoding json: %w", err)
		}
		return nil
	case YAML:
		enc := yaml.NewEncoder(w)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		return enc.Close()
	case Tabular:
		switch t := v.(type) {
		case Tabler:
			return WriteTables(w, t.Table()...)
		case Table:
			return WriteTables(w, t)
		case []Table:
			return WriteTables(w, t...)
		}
		return fmt.Errorf("format %q not supported for %T", f, v)
	}
	if t, ok := v.(TextWriter); ok {
		return t.WriteText(w, f)
	}
	return fmt.Errorf("format %q not supported", f)
}

// Write is Write(w, f, v).
func (f Format) Write(w io.Writer, v any) error { return Write(w, f, v) }

// WriteFile writes v to the file at path (mode 0644) when path is set, else to s.Out. The file is
// written only once v rendered without error.
func WriteFile(path string, f Format, v any, s *Streams) error {
	if path == "" {
		return Write(s.Out, f, v)
	}
	var buf bytes.Buffer
	if err := Write(&buf, f, v); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing output file: %w", err)
	}
	return nil
}

// FormatError is the error of a --format value outside the command's allowed set.
type FormatError struct {
	Value   string
	Allowed []Format
}

func (e *FormatError) Error() string {
	names := make([]string, len(e.Allowed))
	for i, f := range e.Allowed {
		names[i] = string(f)
	}
	return fmt.Sprintf("invalid value %q for --format: expected one of %s", e.Value, strings.Join(names, ", "))
}

// formatValue is the pflag.Value behind --format.
type formatValue struct {
	f       *Format
	allowed []Format
}

func (v *formatValue) String() string { return string(*v.f) }
func (v *formatValue) Type() string   { return "string" }

func (v *formatValue) Set(s string) error {
	if !slices.Contains(v.allowed, Format(s)) {
		return &FormatError{Value: s, Allowed: v.allowed}
	}
	*v.f = Format(s)
	return nil
}

// AddFormatFlag registers --format on cmd, storing into f with default def. The allowed values
// default to json, tabular and yaml; def is always allowed. Other values fail parsing with
// `invalid value "xml" for --format: expected one of json, tabular, yaml`, and the shell completes
// the allowed values. It sets cmd's flag error function (which defers to the parent's), so a command
// that needs its own should set it after this call.
func AddFormatFlag(cmd *cobra.Command, f *Format, def Format, allowed ...Format) {
	if len(allowed) == 0 {
		allowed = []Format{JSON, Tabular, YAML}
	}
	allowed = slices.Clone(allowed)
	if !slices.Contains(allowed, def) {
		allowed = append(allowed, def)
	}
	slices.Sort(allowed)
	*f = def
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	cmd.Flags().Var(&formatValue{f: f, allowed: allowed}, "format",
		"Specify output format ("+strings.Join(names, "|")+")")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	wrapFlagErrorFunc(cmd)
}

// wrapFlagErrorFunc makes a bad --format report just the FormatError (not pflag's "invalid argument
// ... flag:" wrapping), then hands it to the parent's flag error function, so the root still decides
// how usage errors are reported.
func wrapFlagErrorFunc(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var fe *FormatError
		if errors.As(err, &fe) {
			err = fe
		}
		if p := cmd.Parent(); p != nil {
			return p.FlagErrorFunc()(c, err)
		}
		return err
	})
}

// AddOutputFlag registers -o/--output <file> on cmd: write the result to a file instead of stdout.
func AddOutputFlag(cmd *cobra.Command, path *string) {
	cmd.Flags().StringVarP(path, "output", "o", "", "Specify an output file")
}
