package charm

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const sampleConfig = `options:
  title:
    type: string
    default: My Blog
    description: Blog title.
  port:
    type: int
    default: 8080
  ratio:
    type: float
    default: 1
  debug:
    type: boolean
    default: false
  motd:
    description: no type means string
  limit:
    type: int
`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(sampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !reflect.DeepEqual(got, []string{"debug", "limit", "motd", "port", "ratio", "title"}) {
		t.Errorf("names = %v", got)
	}
	want := map[string]Option{
		"title": {Name: "title", Type: TypeString, Description: "Blog title.", Default: "My Blog"},
		"port":  {Name: "port", Type: TypeInt, Default: int64(8080)},
		"ratio": {Name: "ratio", Type: TypeFloat, Default: float64(1)},
		"debug": {Name: "debug", Type: TypeBoolean, Default: false},
		"motd":  {Name: "motd", Type: TypeString, Description: "no type means string"},
		"limit": {Name: "limit", Type: TypeInt},
	}
	if !reflect.DeepEqual(c.Options, want) {
		t.Errorf("options = %#v", c.Options)
	}
	wantDefaults := map[string]any{"title": "My Blog", "port": int64(8080), "ratio": float64(1), "debug": false}
	if got := c.Defaults(); !reflect.DeepEqual(got, wantDefaults) {
		t.Errorf("defaults = %#v", got)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"options:\n  x:\n    type: list\n", `invalid config.yaml: option "x" has unknown type "list"`},
		{"options:\n  x:\n    type: int\n    default: abc\n", `invalid config.yaml: option "x": default "abc" is not of type int`},
		{"options:\n  x:\n    type: int\n    default: \"8\"\n", `invalid config.yaml: option "x": default "8" is not of type int`},
		{"options:\n  x:\n    type: boolean\n    default: yes please\n", `invalid config.yaml: option "x": default "yes please" is not of type boolean`},
		{"options:\n  x:\n    type: float\n    default: [1]\n", `invalid config.yaml: option "x": default must be a scalar`},
		{"options: [\n", "invalid config.yaml: yaml: line 1: did not find expected node content"},
	}
	for _, tt := range tests {
		_, err := ParseConfig([]byte(tt.yaml))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseConfig(%q) = %v, want %s", tt.yaml, err, tt.want)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		typ, in string
		want    any
		err     string
	}{
		{TypeString, "", "", ""},
		{TypeString, "42", "42", ""},
		{TypeInt, "42", int64(42), ""},
		{TypeInt, "-7", int64(-7), ""},
		{TypeInt, "1e3", int64(1000), ""},
		{TypeInt, "abc", nil, `option "port": expected int, got "abc"`},
		{TypeInt, "1.5", nil, `option "port": expected int, got "1.5"`},
		{TypeFloat, "1.5", 1.5, ""},
		{TypeFloat, "x", nil, `option "port": expected float, got "x"`},
		{TypeBoolean, "true", true, ""},
		{TypeBoolean, "false", false, ""},
		{TypeBoolean, "yes", nil, `option "port": expected boolean, got "yes"`},
	}
	for _, tt := range tests {
		got, err := ParseValue(Option{Name: "port", Type: tt.typ}, tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseValue(%s, %q) error = %v, want %s", tt.typ, tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseValue(%s, %q) = %#v, %v", tt.typ, tt.in, got, err)
		}
	}
}

func TestParseSettings(t *testing.T) {
	c, err := ParseConfig([]byte(sampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ParseSettings(map[string]string{"port": "80", "debug": "true", "title": "x"})
	if err != nil || !reflect.DeepEqual(got, map[string]any{"port": int64(80), "debug": true, "title": "x"}) {
		t.Errorf("settings = %#v, %v", got, err)
	}
	if _, err := c.ParseSettings(map[string]string{"port": "80", "colour": "red"}); err == nil || err.Error() != `unknown option "colour"` {
		t.Errorf("unknown option: %v", err)
	}
	if _, err := c.ParseSettings(map[string]string{"port": "abc"}); err == nil || err.Error() != `option "port": expected int, got "abc"` {
		t.Errorf("bad value: %v", err)
	}
	if v, _ := EncodeValue(int64(80)); v != "80" {
		t.Errorf("encoded int = %s", v)
	}
	if v, _ := EncodeValue("a\"b"); v != `"a\"b"` {
		t.Errorf("encoded string = %s", v)
	}
}

func TestReadConfigDir(t *testing.T) {
	dir := t.TempDir()
	c, err := ReadConfigDir(dir)
	if err != nil || len(c.Options) != 0 {
		t.Fatalf("no config.yaml: %v %v", c, err)
	}
	if _, err := c.ParseSettings(map[string]string{"title": "x"}); err == nil || err.Error() != `unknown option "title"` {
		t.Errorf("a charm without config.yaml has no options: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(sampleConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = ReadConfigDir(dir); err != nil || len(c.Options) != 6 {
		t.Fatalf("config.yaml: %v %v", c, err)
	}
}
