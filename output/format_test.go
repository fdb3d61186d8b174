package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// newTestCmd returns a root with one subcommand carrying --format and -o, and where the parsed
// values land.
func newTestCmd(def Format, allowed ...Format) (*cobra.Command, *Format, *string) {
	var f Format
	var path string
	root := &cobra.Command{Use: "juju", SilenceErrors: true, SilenceUsage: true}
	sub := &cobra.Command{Use: "status", RunE: func(*cobra.Command, []string) error { return nil }}
	AddFormatFlag(sub, &f, def, allowed...)
	AddOutputFlag(sub, &path)
	root.AddCommand(sub)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	return root, &f, &path
}

func TestFormatFlag(t *testing.T) {
	tests := []struct {
		name, args string
		def        Format
		allowed    []Format
		want       Format
		wantPath   string
		wantErr    string
	}{
		{name: "default", args: "status", def: Tabular, want: Tabular},
		{name: "json", args: "status --format json", def: Tabular, want: JSON},
		{name: "yaml with equals", args: "status --format=yaml -o out.yaml", def: Tabular, want: YAML, wantPath: "out.yaml"},
		{name: "long output", args: "status --output x", def: Tabular, want: Tabular, wantPath: "x"},
		{name: "unknown", args: "status --format xml", def: Tabular,
			wantErr: `invalid value "xml" for --format: expected one of json, tabular, yaml`},
		{name: "custom default", args: "status", def: "constraints", allowed: []Format{JSON, YAML}, want: "constraints"},
		{name: "custom set rejects tabular", args: "status --format tabular", def: "constraints", allowed: []Format{"constraints", JSON, YAML},
			wantErr: `invalid value "tabular" for --format: expected one of constraints, json, yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, f, path := newTestCmd(tt.def, tt.allowed...)
			root.SetArgs(strings.Fields(tt.args))
			err := root.Execute()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("err %T is not a *FormatError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *f != tt.want || *path != tt.wantPath {
				t.Fatalf("format, output = %q, %q; want %q, %q", *f, *path, tt.want, tt.wantPath)
			}
		})
	}
}

// A root's flag error function still sees the (unwrapped) format error, e.g. to map it to exit 2.
func TestFormatFlagDefersToRoot(t *testing.T) {
	root, _, _ := newTestCmd(Tabular)
	type usageErr struct{ error }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr{err} })
	root.SetArgs([]string{"status", "--format", "xml"})
	err := root.Execute()
	var ue usageErr
	if !errors.As(err, &ue) {
		t.Fatalf("err = %T %v, want the root's wrapper", err, err)
	}
	if want := `invalid value "xml" for --format: expected one of json, tabular, yaml`; ue.Error() != want {
		t.Fatalf("err = %q, want %q", ue.Error(), want)
	}
}

func TestFormatFlagCompletion(t *testing.T) {
	root, _, _ := newTestCmd(Tabular)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{cobra.ShellCompRequestCmd, "status", "--format", ""})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	want := "json\ntabular\nyaml\n:4\n"
	if got := out.String(); !strings.HasPrefix(got, want) {
		t.Fatalf("completion = %q, want prefix %q", got, want)
	}
}

type sample struct {
	Name  string            `json:"name" yaml:"name"`
	Items []string          `json:"items,omitempty" yaml:"items,omitempty"`
	Sub   map[string]string `json:"sub" yaml:"sub"`
}

func (sample) Table() []Table {
	return []Table{{Header: []string{"Name"}, Rows: [][]string{{"x"}}}}
}

func TestWriteJSONOneLine(t *testing.T) {
	var buf bytes.Buffer
	v := sample{Name: "a<b", Items: []string{"1", "2"}, Sub: map[string]string{"z": "1", "a": "2"}}
	if err := Write(&buf, JSON, v); err != nil {
		t.Fatal(err)
	}
	want := `{"name":"a\u003cb","items":["1","2"],"sub":{"a":"2","z":"1"}}` + "\n"
	if buf.String() != want {
		t.Fatalf("json = %q, want %q", buf.String(), want)
	}
}

func TestWriteYAML(t *testing.T) {
	var buf bytes.Buffer
	v := sample{Name: "a", Items: []string{"1"}, Sub: map[string]string{"10": "x", "9": "y"}}
	if err := YAML.Write(&buf, v); err != nil {
		t.Fatal(err)
	}
	want := "name: a\nitems:\n- \"1\"\nsub:\n  \"9\": \"y\"\n  \"10\": x\n" // lists flush, as Juju (yaml.v2) writes them
	if buf.String() != want {
		t.Fatalf("yaml = %q, want %q", buf.String(), want)
	}
}

func TestWriteTabular(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Tabular, sample{}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "Name\nx\n" {
		t.Fatalf("tabular = %q", buf.String())
	}
	if err := Write(&buf, Tabular, 42); err == nil {
		t.Fatal("tabular of a non-Tabler succeeded")
	}
	if err := Write(&buf, "xml", 42); err == nil {
		t.Fatal("unknown format succeeded")
	}
}

func TestWriteFile(t *testing.T) {
	s, out, _ := TestStreams()
	if err := WriteFile("", JSON, sample{Name: "a"}, s); err != nil {
		t.Fatal(err)
	}
	if out.String() != `{"name":"a","sub":null}`+"\n" {
		t.Fatalf("stdout = %q", out.String())
	}

	out.Reset()
	path := filepath.Join(t.TempDir(), "status.yaml")
	if err := WriteFile(path, YAML, sample{Name: "b"}, s); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("stdout got %q with -o", out.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "name: b\nsub: {}\n" {
		t.Fatalf("file = %q", b)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&^0o022 != 0o644&^0o022 {
		t.Fatalf("mode = %v", fi.Mode())
	}

	if err := WriteFile(filepath.Join(t.TempDir(), "bad"), Tabular, 1, s); err == nil {
		t.Fatal("render error ignored")
	}
}

type texty struct{}

func (texty) WriteText(w io.Writer, f Format) error {
	if f != Summary {
		return errors.New("no such format")
	}
	_, err := io.WriteString(w, "summary\n")
	return err
}

// Formats beyond json, yaml and tabular go to the view's WriteText.
func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Summary, texty{}); err != nil || buf.String() != "summary\n" {
		t.Fatalf("summary = %q, %v", buf.String(), err)
	}
	if err := Write(&buf, Oneline, texty{}); err == nil {
		t.Fatal("the view's error was lost")
	}
	if err := Write(&buf, Summary, sample{}); err == nil || err.Error() != `format "summary" not supported` {
		t.Fatalf("summary of a view without it: %v", err)
	}
	root, f, _ := newTestCmd(Tabular, Tabular, JSON, YAML, Oneline, Short, Line, Summary)
	root.SetArgs([]string{"status", "--format", "bad"})
	if err := root.Execute(); err == nil || err.Error() != `invalid value "bad" for --format: expected one of json, line, oneline, short, summary, tabular, yaml` {
		t.Fatalf("bad format: %v", err)
	}
	root.SetArgs([]string{"status", "--format", "short"})
	if err := root.Execute(); err != nil || *f != Short {
		t.Fatalf("short: %v %q", err, *f)
	}
}
